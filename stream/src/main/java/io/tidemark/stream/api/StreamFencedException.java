package io.tidemark.stream.api;

/** The stream was opened with a newer epoch (possibly on another node); this holder must stop using it. */
public class StreamFencedException extends StreamException {
  public StreamFencedException(String message) {
    super(message);
  }
}
