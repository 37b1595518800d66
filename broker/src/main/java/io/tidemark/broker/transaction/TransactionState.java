package io.tidemark.broker.transaction;

import java.util.EnumSet;
import java.util.Set;

/**
 * The states of one transactional id, as in Kafka's coordinator (and named as
 * {@code kafka-transactions} shows them). A transition is legal only from the states listed; the
 * coordinator checks it before writing the new state to {@code __transaction_state}.
 *
 * <pre>
 * EMPTY ──AddPartitions/AddOffsets──▶ ONGOING ──EndTxn(commit)──▶ PREPARE_COMMIT ──markers──▶ COMPLETE_COMMIT
 *   ▲                                   │  └──EndTxn(abort), timeout, fencing──▶ PREPARE_ABORT ──markers──▶ COMPLETE_ABORT
 *   └──InitProducerId (from EMPTY, COMPLETE_*) ◀──────────────────────────────────────────────────────────┘
 * </pre>
 * With transactions V2 an abort may also start from EMPTY or COMPLETE_* (EndTxn v5 of a transaction
 * that added nothing), and every PREPARE_* carries the producer epoch bumped by one.
 */
enum TransactionState {
  EMPTY("Empty"),
  ONGOING("Ongoing"),
  PREPARE_COMMIT("PrepareCommit"),
  PREPARE_ABORT("PrepareAbort"),
  COMPLETE_COMMIT("CompleteCommit"),
  COMPLETE_ABORT("CompleteAbort");

  private final String displayName;

  TransactionState(String displayName) {
    this.displayName = displayName;
  }

  /** Kafka's name of the state (DescribeTransactions, ListTransactions filters). */
  String displayName() {
    return displayName;
  }

  /** The states this one may be entered from. */
  Set<TransactionState> validPrevious() {
    return switch (this) {
      case EMPTY -> EnumSet.of(EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT);
      case ONGOING -> EnumSet.of(ONGOING, EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT);
      case PREPARE_COMMIT -> EnumSet.of(ONGOING);
      // transactions V2 may abort with no transaction open (EndTxn v5 bumps the epoch all the same)
      case PREPARE_ABORT -> EnumSet.of(ONGOING, EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT);
      case COMPLETE_COMMIT -> EnumSet.of(PREPARE_COMMIT);
      case COMPLETE_ABORT -> EnumSet.of(PREPARE_ABORT);
    };
  }

  boolean completed() {
    return this == EMPTY || this == COMPLETE_COMMIT || this == COMPLETE_ABORT;
  }

  static TransactionState byDisplayName(String name) {
    for (TransactionState s : values()) {
      if (s.displayName.equalsIgnoreCase(name)) {
        return s;
      }
    }
    return null;
  }
}
