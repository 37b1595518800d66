package io.tidemark.stream.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tidemark.stream.objectstore.ObjectStorageException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class BlockCacheTest {

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  static ByteBuffer block(BlockKey key, int size) {
    byte[] bytes = new byte[size];
    for (int i = 0; i < size; i++) {
      bytes[i] = (byte) (key.objectId() * 31 + key.position() + i);
    }
    return ByteBuffer.wrap(bytes);
  }

  private double count(String name) {
    return registry.counter(name).count();
  }

  @Test
  void secondReadIsAHitAndReturnsTheSameBytes() {
    // Goal: a loaded block is served from memory the second time, byte-identical, with hit/miss counted.
    BlockCache cache = new BlockCache(1000, 0.5, registry);
    BlockKey key = new BlockKey(7, 100);
    AtomicInteger loads = new AtomicInteger();
    ByteBuffer first = cache.read(key, 100, () -> {
      loads.incrementAndGet();
      return CompletableFuture.completedFuture(block(key, 100));
    }).join();
    first.position(50); // moving a returned buffer must not affect the cached one
    ByteBuffer second = cache.read(key, 100, () -> {
      loads.incrementAndGet();
      return CompletableFuture.completedFuture(block(key, 100));
    }).join();
    assertThat(loads).hasValue(1);
    assertThat(second).isEqualTo(block(key, 100));
    assertThat(count("tidemark.stream.block.cache.hits")).isEqualTo(1);
    assertThat(count("tidemark.stream.block.cache.misses")).isEqualTo(1);
  }

  @Test
  void evictsLeastRecentlyUsedBlockFirst() {
    // Goal: when the byte bound is reached, the least recently used block goes, not a recently read one.
    BlockCache cache = new BlockCache(300, 0.5, registry);
    BlockKey a = new BlockKey(1, 0);
    BlockKey b = new BlockKey(2, 0);
    BlockKey c = new BlockKey(3, 0);
    BlockKey d = new BlockKey(4, 0);
    for (BlockKey key : List.of(a, b, c)) {
      cache.read(key, 100, () -> CompletableFuture.completedFuture(block(key, 100))).join();
    }
    cache.read(a, 100, () -> CompletableFuture.failedFuture(new AssertionError("a must be a hit"))).join();
    cache.read(d, 100, () -> CompletableFuture.completedFuture(block(d, 100))).join();
    assertThat(cache.contains(a)).isTrue();
    assertThat(cache.contains(b)).isFalse();
    assertThat(cache.contains(c)).isTrue();
    assertThat(cache.contains(d)).isTrue();
    assertThat(cache.residentBytes()).isEqualTo(300);
    assertThat(count("tidemark.stream.block.cache.evictions")).isEqualTo(1);
  }

  @Test
  void concurrentIdenticalMissesShareOneLoad() {
    // Goal: many readers missing the same block cause exactly one GET and all receive its bytes.
    BlockCache cache = new BlockCache(1000, 0.5, registry);
    BlockKey key = new BlockKey(9, 4096);
    CompletableFuture<ByteBuffer> get = new CompletableFuture<>();
    AtomicInteger loads = new AtomicInteger();
    List<CompletableFuture<ByteBuffer>> readers = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      readers.add(cache.read(key, 64, () -> {
        loads.incrementAndGet();
        return get;
      }));
    }
    assertThat(readers).noneMatch(CompletableFuture::isDone);
    assertThat(cache.reservedBytes()).isEqualTo(64);
    get.complete(block(key, 64));
    assertThat(loads).hasValue(1);
    for (CompletableFuture<ByteBuffer> reader : readers) {
      assertThat(reader.join()).isEqualTo(block(key, 64));
    }
    assertThat(count("tidemark.stream.block.cache.coalesced")).isEqualTo(19);
    assertThat(cache.reservedBytes()).isZero();
    assertThat(cache.residentBytes()).isEqualTo(64);
  }

  @Test
  void failedLoadReachesEveryWaiterAndCachesNothing() {
    // Goal: a failed GET fails all waiters, releases its reservation, and the next read retries.
    BlockCache cache = new BlockCache(1000, 0.5, registry);
    BlockKey key = new BlockKey(5, 0);
    CompletableFuture<ByteBuffer> get = new CompletableFuture<>();
    CompletableFuture<ByteBuffer> r1 = cache.read(key, 10, () -> get);
    CompletableFuture<ByteBuffer> r2 = cache.read(key, 10, () -> get);
    get.completeExceptionally(new ObjectStorageException("boom"));
    assertThatThrownBy(r1::join).isInstanceOf(CompletionException.class).hasMessageContaining("boom");
    assertThatThrownBy(r2::join).hasMessageContaining("boom");
    assertThat(cache.reservedBytes()).isZero();
    assertThat(cache.contains(key)).isFalse();
    assertThat(cache.read(key, 10, () -> CompletableFuture.completedFuture(block(key, 10))).join())
        .isEqualTo(block(key, 10));
  }

  @Test
  void loaderThatThrowsFailsTheReadWithoutLeakingItsReservation() {
    // Goal: a loader throwing synchronously is reported like a failed GET.
    BlockCache cache = new BlockCache(1000, 0.5, registry);
    CompletableFuture<ByteBuffer> read = cache.read(new BlockKey(1, 1), 10, () -> {
      throw new IllegalStateException("no such object");
    });
    assertThatThrownBy(read::join).hasMessageContaining("no such object");
    assertThat(cache.reservedBytes()).isZero();
    assertThat(cache.loadingBlocks()).isZero();
  }

  @Test
  void blockLargerThanCapacityIsServedButNotCached() {
    // Goal: an oversized block bypasses the cache instead of breaking the bound.
    BlockCache cache = new BlockCache(100, 0.5, registry);
    BlockKey key = new BlockKey(1, 0);
    assertThat(cache.read(key, 500, () -> CompletableFuture.completedFuture(block(key, 500))).join())
        .isEqualTo(block(key, 500));
    assertThat(cache.contains(key)).isFalse();
    assertThat(cache.peakChargedBytes()).isLessThanOrEqualTo(100);
    assertThat(count("tidemark.stream.block.cache.bypasses")).isEqualTo(1);
  }

  @Test
  void inFlightReservationsAreCountedAgainstTheBound() {
    // Goal: loads in flight hold their bytes, so a full set of pending GETs cannot overfill the cache.
    BlockCache cache = new BlockCache(200, 1.0, registry);
    CompletableFuture<ByteBuffer> slow1 = new CompletableFuture<>();
    CompletableFuture<ByteBuffer> slow2 = new CompletableFuture<>();
    BlockKey k1 = new BlockKey(1, 0);
    BlockKey k2 = new BlockKey(2, 0);
    BlockKey k3 = new BlockKey(3, 0);
    CompletableFuture<ByteBuffer> r1 = cache.read(k1, 100, () -> slow1);
    CompletableFuture<ByteBuffer> r2 = cache.read(k2, 100, () -> slow2);
    ByteBuffer third = cache.read(k3, 100, () -> CompletableFuture.completedFuture(block(k3, 100))).join();
    assertThat(third).isEqualTo(block(k3, 100));
    assertThat(cache.contains(k3)).isFalse(); // no room: both other loads hold reservations
    slow1.complete(block(k1, 100));
    slow2.complete(block(k2, 100));
    assertThat(r1.join()).isEqualTo(block(k1, 100));
    assertThat(r2.join()).isEqualTo(block(k2, 100));
    assertThat(cache.residentBytes()).isEqualTo(200);
    assertThat(cache.peakChargedBytes()).isEqualTo(200);
  }

  @Test
  void prefetchIsRefusedUnderPressureAndCountsAsReadOnFirstDemand() {
    // Goal: read-ahead stops once unread prefetched bytes fill its share; a demand read releases that share.
    BlockCache cache = new BlockCache(1000, 0.25, registry);
    int started = 0;
    for (int i = 0; i < 10; i++) {
      BlockKey key = new BlockKey(1, i * 100L);
      if (cache.prefetch(key, 100, () -> CompletableFuture.completedFuture(block(key, 100)))
          == BlockCache.Prefetch.STARTED) {
        started++;
      }
    }
    // 250 bytes of budget: the third prefetch passes it (300 > 250) and the fourth is refused.
    assertThat(started).isEqualTo(3);
    assertThat(cache.underPressure()).isTrue();
    BlockKey first = new BlockKey(1, 0);
    cache.read(first, 100, () -> CompletableFuture.failedFuture(new AssertionError("must hit"))).join();
    assertThat(cache.underPressure()).isFalse();
    BlockKey next = new BlockKey(1, 300);
    assertThat(cache.prefetch(next, 100, () -> CompletableFuture.completedFuture(block(next, 100))))
        .isEqualTo(BlockCache.Prefetch.STARTED);
    assertThat(cache.prefetch(next, 100, () -> CompletableFuture.completedFuture(block(next, 100))))
        .isEqualTo(BlockCache.Prefetch.PRESENT);
  }

  @Test
  void demandReadJoinsAPrefetchInFlight() {
    // Goal: a reader arriving while read-ahead loads its block waits for that GET instead of issuing another.
    BlockCache cache = new BlockCache(1000, 0.5, registry);
    BlockKey key = new BlockKey(3, 0);
    CompletableFuture<ByteBuffer> get = new CompletableFuture<>();
    assertThat(cache.prefetch(key, 50, () -> get)).isEqualTo(BlockCache.Prefetch.STARTED);
    CompletableFuture<ByteBuffer> reader =
        cache.read(key, 50, () -> CompletableFuture.failedFuture(new AssertionError("second GET")));
    get.complete(block(key, 50));
    assertThat(reader.join()).isEqualTo(block(key, 50));
    assertThat(cache.underPressure()).isFalse();
    assertThat(count("tidemark.stream.block.cache.readahead.loads")).isEqualTo(1);
  }

  @Test
  void rejectsNonsenseConfiguration() {
    // Goal: a bad capacity or share is refused with a message naming the value.
    assertThatThrownBy(() -> new BlockCache(0, 0.5, registry)).hasMessageContaining("0");
    assertThatThrownBy(() -> new BlockCache(10, 1.5, registry)).hasMessageContaining("1.5");
  }

  @Test
  void boundHoldsUnderConcurrentReadersAndAsynchronousLoads() throws Exception {
    // Goal: with 8 threads reading and prefetching overlapping keys and loads completing on other
    // threads, resident + in-flight bytes never pass the capacity and every read gets its block's bytes.
    BlockCache cache = new BlockCache(10_000, 0.5, registry);
    ExecutorService readers = Executors.newFixedThreadPool(8);
    ExecutorService storage = Executors.newFixedThreadPool(3);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        done.add(readers.submit(() -> {
          ThreadLocalRandom random = ThreadLocalRandom.current();
          for (int i = 0; i < 2_000; i++) {
            BlockKey key = new BlockKey(random.nextInt(40), 0);
            int size = 100 + (int) (key.objectId() * 37 % 1_900);
            if (random.nextInt(4) == 0) {
              cache.prefetch(key, size, () -> CompletableFuture.supplyAsync(() -> block(key, size), storage));
            } else {
              ByteBuffer got = cache.read(key, size,
                  () -> CompletableFuture.supplyAsync(() -> block(key, size), storage)).join();
              assertThat(got).isEqualTo(block(key, size));
            }
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      readers.shutdownNow();
      storage.shutdown();
      storage.awaitTermination(10, TimeUnit.SECONDS);
    }
    assertThat(cache.peakChargedBytes()).isLessThanOrEqualTo(10_000);
    assertThat(cache.residentBytes() + cache.reservedBytes()).isLessThanOrEqualTo(10_000);
    assertThat(cache.reservedBytes()).isZero();
    assertThat(count("tidemark.stream.block.cache.evictions")).isPositive();
  }
}
