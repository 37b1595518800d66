package io.tidemark.stream.api;

/** Base of the storage engine's domain errors; the broker maps each subclass to one protocol error. */
public class StreamException extends RuntimeException {
  public StreamException(String message) {
    super(message);
  }

  public StreamException(String message, Throwable cause) {
    super(message, cause);
  }
}
