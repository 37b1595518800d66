package io.tidemark.stream.api;

/**
 * The append was refused at once because the store's storage is full for now (appends already
 * waiting for space hold their bound). Nothing was written and no offset was assigned: the next
 * append of the stream continues as if this one never happened. Retry after earlier appends complete.
 */
public class AppendBackpressureException extends StreamException {
  public AppendBackpressureException(String message) {
    super(message);
  }
}
