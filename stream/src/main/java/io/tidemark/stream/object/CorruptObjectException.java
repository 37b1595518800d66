package io.tidemark.stream.object;

import io.tidemark.stream.api.StreamException;

/**
 * An object in object storage is not a valid Tidemark object (bad footer magic, bad CRC,
 * truncated, index and blocks disagree). The message names the object key and what is wrong;
 * no data from it was returned. The object must be restored or its range re-uploaded.
 */
public class CorruptObjectException extends StreamException {
  private final String key;

  public CorruptObjectException(String key, String problem) {
    super("corrupt object " + key + ": " + problem);
    this.key = key;
  }

  public CorruptObjectException(String key, String problem, Throwable cause) {
    super("corrupt object " + key + ": " + problem, cause);
    this.key = key;
  }

  /** The key of the corrupt object. */
  public String key() {
    return key;
  }
}
