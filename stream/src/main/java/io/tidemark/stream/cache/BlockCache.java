package io.tidemark.stream.cache;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * A cache of object data blocks (the bytes of one block as read by a ranged GET), keyed by
 * {@link BlockKey}, bounded in bytes, evicting the least recently used block first.
 *
 * <p><b>What it owns.</b> The resident blocks, and a table of in-flight loads. A miss reserves the
 * block's expected size before the GET starts, so resident bytes plus reserved bytes never exceed
 * {@code capacityBytes}, not even while loads are in flight. When a reservation cannot be made
 * (the block is larger than the cache, or in-flight loads already hold the whole capacity) the
 * load still happens but its result bypasses the cache. Identical concurrent misses share one
 * load: the first caller starts it, later callers wait on the same future ({@code coalesced}).
 *
 * <p><b>Read-ahead.</b> {@link #prefetch} loads a block without a waiter. A prefetched block that
 * has not yet been read counts as "unread read-ahead"; {@link #underPressure()} is true when
 * reservations plus unread read-ahead pass {@code readAheadShare} of the capacity, and read-ahead
 * is then skipped by its callers (and refused by {@link #prefetch}) so that it cannot evict data
 * that demand readers are about to use.
 *
 * <p><b>States of a key:</b> absent → loading (in the in-flight table) → resident (in the LRU
 * map) → evicted (absent again). A failed load goes back to absent; all its waiters see the
 * failure and nothing is cached.
 *
 * <p><b>Threading.</b> Thread-safe. Every field is guarded by this object's monitor; critical
 * sections are a few map operations, never IO and never a callback: loaders are started and
 * futures completed outside the monitor. Returned buffers are read-only duplicates, so callers
 * may move their position freely.
 */
public final class BlockCache {

  private static final class Entry {
    final ByteBuffer data;
    final long sizeBytes;
    boolean unreadPrefetch;

    Entry(ByteBuffer data, boolean unreadPrefetch) {
      this.data = data;
      this.sizeBytes = data.remaining();
      this.unreadPrefetch = unreadPrefetch;
    }
  }

  private static final class Load {
    final CompletableFuture<ByteBuffer> result = new CompletableFuture<>();
    final long reservedBytes;
    final boolean prefetch;
    /** Set when a demand reader joined a prefetch: the block is then no longer "unread". */
    boolean demanded;

    Load(long reservedBytes, boolean prefetch) {
      this.reservedBytes = reservedBytes;
      this.prefetch = prefetch;
      this.demanded = !prefetch;
    }
  }

  private final long capacityBytes;
  private final long readAheadBudgetBytes;
  private final LinkedHashMap<BlockKey, Entry> resident = new LinkedHashMap<>(256, 0.75f, true);
  private final Map<BlockKey, Load> loading = new HashMap<>();
  private long residentBytes;
  private long reservedBytes;
  private long unreadPrefetchBytes;
  private long peakChargedBytes;

  private final Counter hits;
  private final Counter misses;
  private final Counter coalesced;
  private final Counter evictions;
  private final Counter bypasses;
  private final Counter prefetches;
  private final Counter prefetchesWasted;

  /**
   * @param capacityBytes the most bytes resident plus reserved for in-flight loads
   * @param readAheadShare the share of the capacity that reservations plus unread read-ahead may
   *     hold before read-ahead is refused, in (0, 1]
   */
  public BlockCache(long capacityBytes, double readAheadShare, MeterRegistry registry) {
    if (capacityBytes <= 0) {
      throw new IllegalArgumentException("block cache capacity must be positive, got " + capacityBytes);
    }
    if (!(readAheadShare > 0 && readAheadShare <= 1)) {
      throw new IllegalArgumentException("read-ahead share must be in (0, 1], got " + readAheadShare);
    }
    this.capacityBytes = capacityBytes;
    this.readAheadBudgetBytes = (long) (capacityBytes * readAheadShare);
    this.hits = registry.counter("tidemark.stream.block.cache.hits");
    this.misses = registry.counter("tidemark.stream.block.cache.misses");
    this.coalesced = registry.counter("tidemark.stream.block.cache.coalesced");
    this.evictions = registry.counter("tidemark.stream.block.cache.evictions");
    this.bypasses = registry.counter("tidemark.stream.block.cache.bypasses");
    this.prefetches = registry.counter("tidemark.stream.block.cache.readahead.loads");
    this.prefetchesWasted = registry.counter("tidemark.stream.block.cache.readahead.wasted");
    Gauge.builder("tidemark.stream.block.cache.size", this, BlockCache::residentBytes).baseUnit("bytes").register(registry);
    Gauge.builder("tidemark.stream.block.cache.inflight", this, BlockCache::reservedBytes).baseUnit("bytes").register(registry);
  }

  /**
   * Returns the block, from the cache or by starting {@code loader} (a ranged GET). Concurrent
   * calls for the same key share one load. {@code expectedSizeBytes} is reserved while it runs.
   */
  public CompletableFuture<ByteBuffer> read(BlockKey key, long expectedSizeBytes, Supplier<CompletableFuture<ByteBuffer>> loader) {
    Load started;
    synchronized (this) {
      Entry entry = resident.get(key);
      if (entry != null) {
        hits.increment();
        if (entry.unreadPrefetch) {
          entry.unreadPrefetch = false;
          unreadPrefetchBytes -= entry.sizeBytes;
        }
        return CompletableFuture.completedFuture(entry.data.duplicate());
      }
      Load existing = loading.get(key);
      if (existing != null) {
        coalesced.increment();
        existing.demanded = true;
        return existing.result.thenApply(ByteBuffer::duplicate);
      }
      misses.increment();
      started = new Load(reserve(expectedSizeBytes), false);
      loading.put(key, started);
    }
    start(key, started, loader);
    return started.result.thenApply(ByteBuffer::duplicate);
  }

  /** What {@link #prefetch} did. */
  public enum Prefetch {
    /** A load was started. */
    STARTED,
    /** The block is resident or loading already; nothing to do. */
    PRESENT,
    /** The cache is under read-ahead pressure or has no room: read-ahead should stop. */
    REFUSED
  }

  /**
   * Loads the block into the cache without a waiter, unless it is resident or loading already,
   * the cache is under read-ahead pressure, or no room can be reserved.
   */
  public Prefetch prefetch(BlockKey key, long expectedSizeBytes, Supplier<CompletableFuture<ByteBuffer>> loader) {
    Load started;
    synchronized (this) {
      if (resident.containsKey(key) || loading.containsKey(key)) {
        return Prefetch.PRESENT;
      }
      if (pressured()) {
        return Prefetch.REFUSED;
      }
      long reserved = reserve(expectedSizeBytes);
      if (reserved == 0) {
        return Prefetch.REFUSED;
      }
      started = new Load(reserved, true);
      loading.put(key, started);
      prefetches.increment();
    }
    start(key, started, loader);
    return Prefetch.STARTED;
  }

  /**
   * Drops a resident block (for example one found corrupt on decode) so that the next read
   * fetches it again. A load in flight is not affected.
   */
  public synchronized void invalidate(BlockKey key) {
    Entry entry = resident.remove(key);
    if (entry != null) {
      residentBytes -= entry.sizeBytes;
      if (entry.unreadPrefetch) {
        unreadPrefetchBytes -= entry.sizeBytes;
      }
    }
  }

  /** Whether the block is resident (not counting loads in flight). */
  public synchronized boolean contains(BlockKey key) {
    return resident.containsKey(key);
  }

  /** Whether read-ahead should be skipped now (see the class comment). */
  public synchronized boolean underPressure() {
    return pressured();
  }

  public long capacityBytes() {
    return capacityBytes;
  }

  public synchronized long residentBytes() {
    return residentBytes;
  }

  public synchronized long reservedBytes() {
    return reservedBytes;
  }

  /** The most bytes ever resident plus reserved at one time; never above the capacity. */
  public synchronized long peakChargedBytes() {
    return peakChargedBytes;
  }

  public synchronized int residentBlocks() {
    return resident.size();
  }

  public synchronized int loadingBlocks() {
    return loading.size();
  }

  private boolean pressured() {
    return reservedBytes + unreadPrefetchBytes > readAheadBudgetBytes;
  }

  private void start(BlockKey key, Load load, Supplier<CompletableFuture<ByteBuffer>> loader) {
    CompletableFuture<ByteBuffer> get;
    try {
      get = loader.get();
    } catch (RuntimeException e) {
      get = CompletableFuture.failedFuture(e);
    }
    get.whenComplete((data, error) -> finish(key, load, data, error));
  }

  private void finish(BlockKey key, Load load, ByteBuffer data, Throwable error) {
    ByteBuffer readOnly = data == null ? null : data.asReadOnlyBuffer();
    synchronized (this) {
      loading.remove(key);
      reservedBytes -= load.reservedBytes;
      if (readOnly != null) {
        admit(key, readOnly, load);
      }
    }
    if (error != null) {
      load.result.completeExceptionally(error);
    } else {
      load.result.complete(readOnly);
    }
  }

  /** Makes a loaded block resident if room can be made; caller holds the monitor. */
  private void admit(BlockKey key, ByteBuffer data, Load load) {
    long size = data.remaining();
    if (load.reservedBytes == 0 && size > 0 || !makeRoom(size)) {
      bypasses.increment();
      return;
    }
    boolean unread = load.prefetch && !load.demanded;
    resident.put(key, new Entry(data, unread));
    residentBytes += size;
    if (unread) {
      unreadPrefetchBytes += size;
    }
    notePeak();
  }

  /**
   * Reserves room for a load of {@code sizeBytes}, evicting LRU blocks as needed; returns the
   * bytes reserved, 0 when no room can be made (the load then bypasses the cache). Caller holds
   * the monitor.
   */
  private long reserve(long sizeBytes) {
    if (sizeBytes <= 0 || !makeRoom(sizeBytes)) {
      return 0;
    }
    reservedBytes += sizeBytes;
    notePeak();
    return sizeBytes;
  }

  /** Evicts LRU blocks until {@code sizeBytes} more fit; false (evicting nothing) if they never can. */
  private boolean makeRoom(long sizeBytes) {
    if (residentBytes + reservedBytes + sizeBytes <= capacityBytes) {
      return true;
    }
    if (reservedBytes + sizeBytes > capacityBytes) {
      return false;
    }
    Iterator<Entry> lru = resident.values().iterator();
    while (residentBytes + reservedBytes + sizeBytes > capacityBytes) {
      Entry victim = lru.next();
      lru.remove();
      residentBytes -= victim.sizeBytes;
      if (victim.unreadPrefetch) {
        unreadPrefetchBytes -= victim.sizeBytes;
        prefetchesWasted.increment();
      }
      evictions.increment();
    }
    return true;
  }

  private void notePeak() {
    peakChargedBytes = Math.max(peakChargedBytes, residentBytes + reservedBytes);
  }
}
