package io.tidemark.stream.wal;

/** A write-ahead log operation failed; the message says what and what the operator can do. */
public class WalException extends RuntimeException {
  public WalException(String message) {
    super(message);
  }

  public WalException(String message, Throwable cause) {
    super(message, cause);
  }
}
