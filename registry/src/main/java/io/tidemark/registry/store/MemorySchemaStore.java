package io.tidemark.registry.store;

import java.util.ArrayList;
import java.util.List;

/**
 * An in-process {@link SchemaStore}: an append-only list. Surviving a "restart" means handing the
 * same instance to a new registry, which replays it. Thread-safe through its monitor.
 */
public final class MemorySchemaStore implements SchemaStore {
  private final List<StoredRecord> log = new ArrayList<>();

  @Override
  public synchronized long append(byte[] key, byte[] value) {
    if (key == null) {
      throw new IllegalArgumentException("a _schemas record needs a key");
    }
    long offset = log.size();
    log.add(new StoredRecord(offset, key.clone(), value == null ? null : value.clone()));
    return offset;
  }

  @Override
  public synchronized List<StoredRecord> read(long fromOffset, int maxRecords) {
    if (fromOffset < 0 || fromOffset > log.size()) {
      throw new SchemaStoreException("offset " + fromOffset + " is outside the log [0, " + log.size() + "]");
    }
    int end = (int) Math.min(log.size(), fromOffset + (long) maxRecords);
    return List.copyOf(log.subList((int) fromOffset, end));
  }

  @Override
  public synchronized long endOffset() {
    return log.size();
  }
}
