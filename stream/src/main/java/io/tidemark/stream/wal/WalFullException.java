package io.tidemark.stream.wal;

/** The log had no space for the record within the configured wait; nothing was written. */
public class WalFullException extends WalException {
  public WalFullException(String message) {
    super(message);
  }
}
