package io.tidemark.stream.engine;

import io.tidemark.stream.api.StreamException;

/**
 * The append was not accepted: appends already waiting for log cache space hold more than
 * {@code stream.append.waiting.max.bytes}. Nothing was written; retry after earlier appends complete.
 */
public class AppendBackpressureException extends StreamException {
  public AppendBackpressureException(String message) {
    super(message);
  }
}
