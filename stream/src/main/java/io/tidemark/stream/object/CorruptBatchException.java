package io.tidemark.stream.object;

import io.tidemark.stream.api.StreamException;

/** Bytes that should hold an encoded stream batch do not (bad magic, bad CRC, truncated); nothing was decoded. */
public class CorruptBatchException extends StreamException {
  public CorruptBatchException(String message) {
    super(message);
  }
}
