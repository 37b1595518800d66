package io.tidemark.broker.record;

/**
 * A produced record batch cannot be appended; {@link #reason()} says which rule it broke. Nothing
 * was written. The protocol layer maps each reason to one Kafka error code.
 */
public class BatchRejectedException extends RuntimeException {

  /** Which rule the batch broke. */
  public enum Reason {
    /** Checksum or framing is wrong: the bytes were damaged. */
    CORRUPT,
    /** Well-formed but not allowed (wrong magic, several batches, control batch, gaps in offsets). */
    INVALID,
    /** Larger than the topic's max.message.bytes. */
    TOO_LARGE,
    /** Compression codec not allowed at this request version. */
    UNSUPPORTED_COMPRESSION
  }

  private final Reason reason;

  public BatchRejectedException(Reason reason, String message) {
    super(message);
    this.reason = reason;
  }

  public BatchRejectedException(Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = reason;
  }

  public Reason reason() {
    return reason;
  }
}
