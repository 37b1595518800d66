package io.tidemark.broker.partition;

/**
 * A partition refused an operation; {@link #outcome()} names what happened so that the protocol
 * layer can pick the Kafka error. Nothing was changed.
 */
public class PartitionException extends RuntimeException {

  /** What the caller should do next, in Kafka terms. */
  public enum Outcome {
    /** The partition is not served here (closed, moved, fenced): refresh metadata. */
    NOT_LEADER,
    /** A producer's sequence has a gap or goes backwards. */
    OUT_OF_ORDER_SEQUENCE,
    /** A producer's epoch is older than the one already seen. */
    INVALID_PRODUCER_EPOCH,
    /** The partition's storage failed; it must be reopened. */
    STORAGE_ERROR,
    /** Storage cannot take the write now (backpressure); nothing was written or assigned: retry later. */
    BUSY,
    /** Offset outside [log start, high watermark]. */
    OFFSET_OUT_OF_RANGE,
    /** A request value is not allowed (for example transactional batches before transactions exist). */
    INVALID_REQUEST,
    /** A transaction marker comes from a coordinator older than one that already wrote here. */
    COORDINATOR_FENCED,
    /** The stored data at the requested offset is damaged ({@link DamagedRangeException} names the range). */
    CORRUPT_DATA,
    /** A transactional write starts a transaction here that its coordinator did not confirm (KIP-890 verification). */
    INVALID_TXN_STATE
  }

  private final Outcome outcome;

  public PartitionException(Outcome outcome, String message) {
    super(message);
    this.outcome = outcome;
  }

  public PartitionException(Outcome outcome, String message, Throwable cause) {
    super(message, cause);
    this.outcome = outcome;
  }

  public Outcome outcome() {
    return outcome;
  }
}
