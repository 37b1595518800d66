package io.tidemark.stream.api;

/** The requested offset is outside the stream's readable range; the message gives the range. */
public class OffsetOutOfRangeException extends StreamException {
  public OffsetOutOfRangeException(String message) {
    super(message);
  }
}
