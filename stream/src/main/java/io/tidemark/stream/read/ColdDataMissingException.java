package io.tidemark.stream.read;

import io.tidemark.stream.api.StreamException;

/**
 * An offset inside a stream's committed range is held by no committed object: the metadata and
 * object storage disagree (an object lost or deleted too early). The message names the stream,
 * the offset and the next object that has data; nothing was returned for the missing offsets.
 */
public class ColdDataMissingException extends StreamException {
  public ColdDataMissingException(String message) {
    super(message);
  }
}
