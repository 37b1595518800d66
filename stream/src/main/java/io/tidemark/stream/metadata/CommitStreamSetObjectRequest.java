package io.tidemark.stream.metadata;

import java.util.List;

/**
 * What one upload or stream-set compaction produced. {@code objectId} is -1 when every stream was
 * split into stream objects. {@code compactedObjectIds} is empty for an upload from the WAL and
 * lists the replaced objects for a compaction.
 */
public record CommitStreamSetObjectRequest(
    long objectId,
    long objectSizeBytes,
    List<StreamRange> ranges,
    List<StreamObject> streamObjects,
    List<Long> compactedObjectIds) {

  /** One stream object written in the same upload. */
  public record StreamObject(long objectId, long sizeBytes, StreamRange range) {}
}
