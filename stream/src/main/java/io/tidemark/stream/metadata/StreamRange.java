package io.tidemark.stream.metadata;

/** Offsets {@code [startOffset, endOffset)} of one stream, written under {@code epoch}. */
public record StreamRange(long streamId, long epoch, long startOffset, long endOffset) {
  public StreamRange {
    if (endOffset < startOffset) {
      throw new IllegalArgumentException("range end " + endOffset + " is below start " + startOffset
          + " for stream " + streamId);
    }
  }
}
