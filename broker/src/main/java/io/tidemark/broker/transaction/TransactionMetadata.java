package io.tidemark.broker.transaction;

import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;

/**
 * The durable state of one transactional id, exactly what one record of
 * {@code __transaction_state} holds. Immutable: the coordinator computes the next value, writes
 * it, and only then makes it current ({@link TransactionState#validPrevious()} is checked by
 * {@link #to}).
 *
 * @param lastProducerEpoch the epoch before the last bump (-1 when none): a producer that was
 *     fenced by a timeout may recover with it (KIP-360)
 * @param startTimestampMs when the open transaction began (-1 when none is open)
 * @param prevProducerId the producer id before the last rotation by an exhausted epoch (-1 when none): a
 *     retried EndTxn of that producer at its last epoch is recognised (transactions V2)
 * @param nextProducerId the producer id that replaces {@code producerId} once the transaction being
 *     completed is complete, when its epoch bump exhausted the epochs (-1 when none; transactions V2)
 * @param v2 whether the client runs the current (or last) transaction with transactions V2 (KIP-890:
 *     partitions added by the leaders, the epoch bumped by every EndTxn)
 */
record TransactionMetadata(String transactionalId, long producerId, short producerEpoch, short lastProducerEpoch,
    int timeoutMs, TransactionState state, Set<TopicPartition> partitions, long startTimestampMs, long updateTimestampMs,
    long prevProducerId, long nextProducerId, boolean v2) {

  TransactionMetadata {
    partitions = Collections.unmodifiableSet(new LinkedHashSet<>(partitions));
  }

  /** A transactions V1 state without a producer id rotation pending. */
  TransactionMetadata(String transactionalId, long producerId, short producerEpoch, short lastProducerEpoch, int timeoutMs,
      TransactionState state, Set<TopicPartition> partitions, long startTimestampMs, long updateTimestampMs) {
    this(transactionalId, producerId, producerEpoch, lastProducerEpoch, timeoutMs, state, partitions, startTimestampMs,
        updateTimestampMs, -1, -1, false);
  }

  /** Whether no further epoch may be handed out for this producer id (Kafka's limit: Short.MAX_VALUE - 1). */
  static boolean epochExhausted(short epoch) {
    return epoch >= Short.MAX_VALUE - 1;
  }

  /** The same transaction in {@code next}; throws on an illegal transition. */
  TransactionMetadata to(TransactionState next, long nowMs) {
    if (!next.validPrevious().contains(state)) {
      throw new IllegalStateException("transaction " + transactionalId + " cannot go from " + state + " to " + next);
    }
    return new TransactionMetadata(transactionalId, producerId, producerEpoch, lastProducerEpoch, timeoutMs, next, partitions,
        startTimestampMs, nowMs, prevProducerId, nextProducerId, v2);
  }

  TransactionMetadata withPartitions(Set<TopicPartition> all, long startMs) {
    return new TransactionMetadata(transactionalId, producerId, producerEpoch, lastProducerEpoch, timeoutMs, state, all, startMs,
        updateTimestampMs, prevProducerId, nextProducerId, v2);
  }

  TransactionMetadata withProducer(long id, short epoch, short lastEpoch, int timeout) {
    return new TransactionMetadata(transactionalId, id, epoch, lastEpoch, timeout, state, partitions, startTimestampMs,
        updateTimestampMs, prevProducerId, nextProducerId, v2);
  }

  /** The same state with the transaction version and the pending producer id rotation given. */
  TransactionMetadata withVersion(boolean useV2, long prevId, long nextId) {
    return new TransactionMetadata(transactionalId, producerId, producerEpoch, lastProducerEpoch, timeoutMs, state, partitions,
        startTimestampMs, updateTimestampMs, prevId, nextId, useV2);
  }

  /** After markers: no partitions, no open transaction. */
  TransactionMetadata cleared() {
    return new TransactionMetadata(transactionalId, producerId, producerEpoch, lastProducerEpoch, timeoutMs, state, Set.of(), -1,
        updateTimestampMs, prevProducerId, nextProducerId, v2);
  }
}
