package io.tidemark.stream.metadata;

import java.util.List;

/**
 * A committed object: its id, size, kind, and the stream ranges it holds (one for a stream
 * object, many for a stream-set object). {@code orderId} orders a node's stream-set objects (later
 * wins); {@code committedAtMs} is when it was committed.
 */
public record ObjectMetadata(
    long objectId, long sizeBytes, ObjectKind kind, List<StreamRange> ranges, long orderId, long committedAtMs) {

  public enum ObjectKind {
    STREAM_SET,
    STREAM
  }

  /** The range of {@code streamId} in this object, or null. */
  public StreamRange rangeOf(long streamId) {
    for (StreamRange range : ranges) {
      if (range.streamId() == streamId) {
        return range;
      }
    }
    return null;
  }
}
