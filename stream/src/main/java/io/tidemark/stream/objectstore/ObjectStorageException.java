package io.tidemark.stream.objectstore;

/** An object storage call failed (after any retries); the message names the key and the cause. */
public class ObjectStorageException extends RuntimeException {
  public ObjectStorageException(String message) {
    super(message);
  }

  public ObjectStorageException(String message, Throwable cause) {
    super(message, cause);
  }
}
