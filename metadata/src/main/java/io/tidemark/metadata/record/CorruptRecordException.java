package io.tidemark.metadata.record;

/**
 * Bytes that should hold a metadata record (log entry or snapshot) cannot be decoded. A node that
 * meets one stops instead of serving metadata it cannot trust; the message names what was wrong.
 */
public class CorruptRecordException extends RuntimeException {
  public CorruptRecordException(String message) {
    super(message);
  }
}
