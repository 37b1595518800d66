package io.tidemark.stream.read;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.tidemark.stream.object.IndexEntry;
import io.tidemark.stream.object.ObjectReader;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Opened objects (footer and index read and validated, as {@link ObjectReader}s) by object id,
 * bounded in bytes (an index costs {@value #OVERHEAD_BYTES} bytes plus {@link IndexEntry#BYTES}
 * per block), least recently used dropped first. Concurrent opens of one object share one pair
 * of GETs: the map holds the future from the start; a failed open is removed so the next read
 * retries. An open in flight weighs nothing here; the {@link GetLimiter} bounds those.
 *
 * <p>Threading: thread-safe; the monitor guards the map and the byte count, never held during IO.
 */
final class ObjectIndexCache {

  static final int OVERHEAD_BYTES = 256;

  private static final class Slot {
    final CompletableFuture<ObjectReader> reader;
    long weightBytes;

    Slot(CompletableFuture<ObjectReader> reader) {
      this.reader = reader;
    }
  }

  private final ObjectStorage storage;
  private final long capacityBytes;
  private final LinkedHashMap<Long, Slot> slots = new LinkedHashMap<>(64, 0.75f, true);
  private long residentBytes;
  private final Counter hits;
  private final Counter misses;

  ObjectIndexCache(ObjectStorage storage, long capacityBytes, MeterRegistry registry) {
    this.storage = storage;
    this.capacityBytes = capacityBytes;
    this.hits = registry.counter("tidemark.stream.index.cache.hits");
    this.misses = registry.counter("tidemark.stream.index.cache.misses");
  }

  /** The opened object {@code objectId} stored under {@code key} with {@code sizeBytes}. */
  CompletableFuture<ObjectReader> open(long objectId, String key, long sizeBytes) {
    Slot slot;
    synchronized (this) {
      slot = slots.get(objectId);
      if (slot != null) {
        hits.increment();
        return slot.reader;
      }
      misses.increment();
      slot = new Slot(new CompletableFuture<>());
      slots.put(objectId, slot);
    }
    Slot opening = slot;
    ObjectReader.open(storage, key, sizeBytes).whenComplete((reader, error) -> {
      settle(objectId, opening, reader);
      if (error != null) {
        opening.reader.completeExceptionally(error);
      } else {
        opening.reader.complete(reader);
      }
    });
    return opening.reader;
  }

  /** Forgets an object (for example after it was found deleted). */
  synchronized void forget(long objectId) {
    Slot slot = slots.remove(objectId);
    if (slot != null) {
      residentBytes -= slot.weightBytes;
    }
  }

  synchronized long residentBytes() {
    return residentBytes;
  }

  private synchronized void settle(long objectId, Slot slot, ObjectReader reader) {
    if (slots.get(objectId) != slot) {
      return; // forgotten meanwhile
    }
    if (reader == null) {
      slots.remove(objectId);
      return;
    }
    slot.weightBytes = OVERHEAD_BYTES + (long) reader.index().size() * IndexEntry.BYTES;
    residentBytes += slot.weightBytes;
    Iterator<Map.Entry<Long, Slot>> eldest = slots.entrySet().iterator();
    while (residentBytes > capacityBytes && eldest.hasNext()) {
      Slot victim = eldest.next().getValue();
      if (victim.weightBytes == 0) {
        continue; // still opening
      }
      eldest.remove();
      residentBytes -= victim.weightBytes;
    }
  }
}
