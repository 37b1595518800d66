package io.tidemark.stream.metadata;

import java.util.List;

/** A stream object {@code objectId} holding {@code range}, replacing {@code sourceObjectIds} of the same stream. */
public record CommitStreamObjectRequest(long objectId, long sizeBytes, StreamRange range, List<Long> sourceObjectIds) {}
