package io.tidemark.stream.read;

import io.tidemark.stream.api.StreamException;

/**
 * The cold read path is at its bound (GETs in flight and waiting, or decode tasks queued) and
 * refused this read without starting it; nothing changed. Retry later or raise
 * {@code stream.cold.read.max.inflight.gets} / {@code stream.cold.read.max.pending}.
 */
public class ColdReadBusyException extends StreamException {
  public ColdReadBusyException(String message) {
    super(message);
  }
}
