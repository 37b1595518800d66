package io.tidemark.stream.wal;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * A write-ahead log in memory, for unit tests of the layers above the WAL. Each record takes one
 * WAL offset. {@link #crash()} drops nothing (everything appended counts as durable), so a test
 * can hand the same instance to a "restarted" engine and see the records again via {@link #recover()}.
 */
public final class MemoryWriteAheadLog implements WriteAheadLog {

  private final ConcurrentSkipListMap<Long, byte[]> records = new ConcurrentSkipListMap<>();
  private long nextOffset;
  private volatile long trimOffset;
  private boolean started;

  @Override
  public synchronized Iterator<WalRecord> recover() {
    List<WalRecord> result = new ArrayList<>();
    records.tailMap(trimOffset).forEach((offset, bytes) -> result.add(new WalRecord(offset, ByteBuffer.wrap(bytes))));
    nextOffset = records.isEmpty() ? trimOffset : Math.max(trimOffset, records.lastKey() + 1);
    return result.iterator();
  }

  @Override
  public synchronized void start() {
    started = true;
  }

  @Override
  public synchronized CompletableFuture<Long> append(ByteBuffer record) {
    if (!started) {
      return CompletableFuture.failedFuture(new WalException("append before start()"));
    }
    byte[] bytes = new byte[record.remaining()];
    record.duplicate().get(bytes);
    long offset = nextOffset++;
    records.put(offset, bytes);
    return CompletableFuture.completedFuture(offset);
  }

  @Override
  public synchronized CompletableFuture<Void> trim(long walOffset) {
    trimOffset = Math.max(trimOffset, walOffset);
    records.headMap(trimOffset).clear();
    return CompletableFuture.completedFuture(null);
  }

  /** Simulates a process restart: the log must be recovered and started again. */
  public synchronized void crash() {
    started = false;
  }

  /** How many records are held (not yet trimmed). */
  public int size() {
    return records.size();
  }

  @Override
  public synchronized void close() {
    started = false;
  }
}
