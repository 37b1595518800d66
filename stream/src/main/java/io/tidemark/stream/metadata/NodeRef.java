package io.tidemark.stream.metadata;

/** Who is calling: a node id and the epoch it registered with (grows on every restart). */
public record NodeRef(int nodeId, long nodeEpoch) {}
