package io.tidemark.stream.metadata;

/** Base of the metadata authority's named rejections; a rejected request changed nothing. */
public class MetadataException extends RuntimeException {
  public MetadataException(String message) {
    super(message);
  }
}
