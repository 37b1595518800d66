package io.tidemark.stream.metadata;

import java.util.Map;

/**
 * A stream's metadata: offsets {@code [startOffset, endOffset)} are readable from committed
 * objects ({@code endOffset} is the end of committed objects; data still in a WAL is above it).
 * {@code ownerNodeId} is the node holding it open, or -1 when closed.
 */
public record StreamMetadata(
    long streamId,
    long epoch,
    long startOffset,
    long endOffset,
    StreamState state,
    int ownerNodeId,
    Map<String, String> tags) {

  public enum StreamState {
    OPEN,
    CLOSED
  }
}
