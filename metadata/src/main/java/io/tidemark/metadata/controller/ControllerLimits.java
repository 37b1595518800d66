package io.tidemark.metadata.controller;

/**
 * Bounds the controller applies to requests: how many object ids one prepare may reserve and for
 * how long, how many producer ids a block holds, and how large one commit may be (objects it
 * writes or replaces, stream ranges in one stream-set object).
 */
public record ControllerLimits(int maxPrepareCount, long maxPrepareTtlMs, int producerIdBlockSize,
    int maxObjectsPerCommit, int maxRangesPerObject) {
  public static final ControllerLimits DEFAULT = new ControllerLimits(10_000, 24L * 3600 * 1000, 1000, 10_000, 20_000);
}
