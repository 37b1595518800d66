package io.tidemark.stream.metadata;

/**
 * A commit broke a rule: an offset gap or overlap, an unknown, expired or already committed object
 * id, or compaction inputs not exactly covered. The message names the object, stream and offsets.
 */
public class InvalidCommitException extends MetadataException {
  public InvalidCommitException(String message) {
    super(message);
  }
}
