package io.tidemark.stream.api;

/** The stream is closed on this node. */
public class StreamClosedException extends StreamException {
  public StreamClosedException(String message) {
    super(message);
  }
}
