package io.tidemark.stream.read;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Decides how many bytes to read ahead after each cold read, per reader. A reader is identified
 * by its stream and the offset its next read is expected to start at; a read that starts exactly
 * where a known reader stopped is sequential and doubles that reader's window (from
 * {@code initialWindowBytes} up to {@code maxWindowBytes}); a read anywhere else is random access
 * and starts a new reader whose window is 0: nothing is read ahead until the reader proves
 * sequential.
 *
 * <p>States of a reader: new (window 0) → sequential (window grows on every continuation) →
 * forgotten (idle longer than {@code idleMs}, or the least recently used when more than
 * {@code maxReaders} exist). A forgotten reader's next read counts as random access.
 *
 * <p>Threading: thread-safe; every method holds this object's monitor for a few map operations.
 * Time comes from the injected clock.
 */
public final class ReadAheadTracker {

  private record ReaderKey(long streamId, long nextOffset) {}

  private static final class Reader {
    long windowBytes;
    long lastReadMs;

    Reader(long windowBytes, long lastReadMs) {
      this.windowBytes = windowBytes;
      this.lastReadMs = lastReadMs;
    }
  }

  private final long initialWindowBytes;
  private final long maxWindowBytes;
  private final int maxReaders;
  private final long idleMs;
  private final LongSupplier clockMs;
  private final LinkedHashMap<ReaderKey, Reader> readers = new LinkedHashMap<>(64, 0.75f, true);

  public ReadAheadTracker(long initialWindowBytes, long maxWindowBytes, int maxReaders, long idleMs, LongSupplier clockMs) {
    if (initialWindowBytes <= 0 || maxWindowBytes < initialWindowBytes) {
      throw new IllegalArgumentException("read-ahead window must satisfy 0 < initial (" + initialWindowBytes
          + ") <= max (" + maxWindowBytes + ")");
    }
    if (maxReaders <= 0) {
      throw new IllegalArgumentException("max readers must be positive, got " + maxReaders);
    }
    this.initialWindowBytes = initialWindowBytes;
    this.maxWindowBytes = maxWindowBytes;
    this.maxReaders = maxReaders;
    this.idleMs = idleMs;
    this.clockMs = clockMs;
  }

  public static ReadAheadTracker of(ReadConfig config, LongSupplier clockMs) {
    return new ReadAheadTracker(config.readAheadInitialBytes(), config.readAheadMaxBytes(),
        config.readAheadMaxReaders(), config.readAheadIdleMs(), clockMs);
  }

  /**
   * Records a read of {@code streamId} that started at {@code startOffset} and ended before
   * {@code nextOffset}; returns the bytes to read ahead beyond {@code nextOffset} (0 for none).
   */
  public synchronized long onRead(long streamId, long startOffset, long nextOffset) {
    long now = clockMs.getAsLong();
    Reader reader = readers.remove(new ReaderKey(streamId, startOffset));
    if (reader == null || now - reader.lastReadMs > idleMs) {
      reader = new Reader(0, now);
    } else {
      reader.windowBytes = reader.windowBytes == 0 ? initialWindowBytes : Math.min(maxWindowBytes, reader.windowBytes * 2);
      reader.lastReadMs = now;
    }
    if (nextOffset > startOffset) {
      readers.put(new ReaderKey(streamId, nextOffset), reader);
    } else {
      // An empty read does not move the reader: keep it where it was.
      readers.put(new ReaderKey(streamId, startOffset), reader);
    }
    forgetIdleAndExcess(now);
    return reader.windowBytes;
  }

  /** The number of readers remembered now (bounded by {@code maxReaders}). */
  public synchronized int readers() {
    return readers.size();
  }

  private void forgetIdleAndExcess(long now) {
    Iterator<Map.Entry<ReaderKey, Reader>> eldestFirst = readers.entrySet().iterator();
    while (eldestFirst.hasNext()) {
      Reader eldest = eldestFirst.next().getValue();
      if (readers.size() > maxReaders || now - eldest.lastReadMs > idleMs) {
        eldestFirst.remove();
      } else {
        break;
      }
    }
  }
}
