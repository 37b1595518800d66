package io.tidemark.stream.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tidemark.stream.objectstore.ObjectStorageException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/** Properties of {@link BlockCache} under arbitrary interleavings of reads, prefetches and GET outcomes. */
class BlockCachePropertyTest {

  /** One step: 0 read, 1 prefetch, 2 complete a pending GET, 3 fail a pending GET. */
  record Step(int kind, int object, int pick) {}

  @Provide
  Arbitrary<List<Step>> steps() {
    Arbitrary<Step> step = Combinators.combine(
        Arbitraries.integers().between(0, 3), Arbitraries.integers().between(0, 24), Arbitraries.integers().between(0, 1000))
        .as(Step::new);
    return step.list().ofMinSize(1).ofMaxSize(300);
  }

  static int sizeOf(int object) {
    return 50 + object * 53 % 700;
  }

  @Property(tries = 300)
  void boundNeverExceededAndReadsAreExact(
      @ForAll("steps") List<Step> steps, @ForAll @IntRange(min = 200, max = 3000) int capacity) {
    // Goal: whatever the interleaving, resident + in-flight bytes stay within the capacity, every
    // successful read returns exactly its block's bytes, and nothing stays reserved once GETs finish.
    BlockCache cache = new BlockCache(capacity, 0.5, new SimpleMeterRegistry());
    List<CompletableFuture<ByteBuffer>> pendingGets = new ArrayList<>();
    Map<CompletableFuture<ByteBuffer>, BlockKey> pendingKeys = new HashMap<>();
    List<Map.Entry<BlockKey, CompletableFuture<ByteBuffer>>> reads = new ArrayList<>();
    for (Step s : steps) {
      BlockKey key = new BlockKey(s.object(), 0);
      int size = sizeOf(s.object());
      switch (s.kind()) {
        case 0 -> reads.add(Map.entry(key, cache.read(key, size, () -> pending(key, pendingGets, pendingKeys))));
        case 1 -> cache.prefetch(key, size, () -> pending(key, pendingGets, pendingKeys));
        case 2, 3 -> {
          if (!pendingGets.isEmpty()) {
            CompletableFuture<ByteBuffer> get = pendingGets.remove(s.pick() % pendingGets.size());
            BlockKey of = pendingKeys.remove(get);
            if (s.kind() == 2) {
              get.complete(BlockCacheTest.block(of, sizeOf((int) of.objectId())));
            } else {
              get.completeExceptionally(new ObjectStorageException("injected"));
            }
          }
        }
        default -> throw new IllegalStateException();
      }
      assertThat(cache.residentBytes() + cache.reservedBytes()).isLessThanOrEqualTo(capacity);
    }
    for (CompletableFuture<ByteBuffer> get : pendingGets) {
      BlockKey of = pendingKeys.get(get);
      get.complete(BlockCacheTest.block(of, sizeOf((int) of.objectId())));
    }
    for (Map.Entry<BlockKey, CompletableFuture<ByteBuffer>> read : reads) {
      if (!read.getValue().isCompletedExceptionally()) {
        BlockKey key = read.getKey();
        assertThat(read.getValue().join()).isEqualTo(BlockCacheTest.block(key, sizeOf((int) key.objectId())));
      }
    }
    assertThat(cache.reservedBytes()).isZero();
    assertThat(cache.loadingBlocks()).isZero();
    assertThat(cache.peakChargedBytes()).isLessThanOrEqualTo(capacity);
  }

  private static CompletableFuture<ByteBuffer> pending(
      BlockKey key, List<CompletableFuture<ByteBuffer>> gets, Map<CompletableFuture<ByteBuffer>, BlockKey> keys) {
    CompletableFuture<ByteBuffer> get = new CompletableFuture<>();
    gets.add(get);
    keys.put(get, key);
    return get;
  }
}
