package io.tidemark.server.storage;

/** The storage engine could not be assembled or recovered; the message says why and what to check. */
public final class StorageUnavailableException extends RuntimeException {

  public StorageUnavailableException(String message) {
    super(message);
  }

  public StorageUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
