package io.tidemark.stream.metadata;

/** The calling node's epoch is not its current one, or the node is fenced; it may change nothing. */
public class NodeFencedException extends MetadataException {
  public NodeFencedException(String message) {
    super(message);
  }
}
