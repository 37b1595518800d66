package io.tidemark.registry.store;

/** One record of the {@code _schemas} log; {@code value} is null for a tombstone. */
public record StoredRecord(long offset, byte[] key, byte[] value) {}
