package io.tidemark.stream.api;

/** No stream with that id exists (or it was deleted). */
public class StreamNotFoundException extends StreamException {
  public StreamNotFoundException(String message) {
    super(message);
  }
}
