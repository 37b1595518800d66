package io.tidemark.registry.store;

import java.util.List;

/**
 * The log the registry keeps its state in: the {@code _schemas} topic. Records are key/value byte
 * pairs in the Confluent JSON layout (see {@code io.tidemark.registry.log.RecordCodec}); a null value
 * is a tombstone. The registry never mutates its state directly: it appends records and replays the
 * log from its last applied offset, so a fresh registry rebuilds the same state by replaying from 0,
 * and records appended by another writer (a future leader) are picked up the same way.
 *
 * <p>Implementations: {@link MemorySchemaStore} (in-process list), and the broker's internal
 * {@code _schemas} topic partition 0 ({@link PartitionSchemaStore}). Offsets increase; they may have
 * gaps (compaction, control batches) and the log may start after 0, so {@link #read} returns the
 * records at or after the offset asked for. Implementations are thread-safe; the registry appends
 * from one writer thread only.
 */
public interface SchemaStore extends AutoCloseable {

  /** Appends one record and returns its offset once durable. Throws {@link SchemaStoreException} when it failed or the outcome is unknown. */
  long append(byte[] key, byte[] value);

  /** Up to {@code maxRecords} records with offsets at or after {@code fromOffset}, in order (none at the end of the log). */
  List<StoredRecord> read(long fromOffset, int maxRecords);

  /** The offset the next appended record will get. */
  long endOffset();

  @Override
  default void close() {}
}
