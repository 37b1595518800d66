package io.tidemark.broker.record;

/** One record of an internal topic: key, value (null for a tombstone) and its offset. */
public record KeyValue(long offset, byte[] key, byte[] value) {}
