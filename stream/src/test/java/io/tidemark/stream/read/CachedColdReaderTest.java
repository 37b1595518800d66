package io.tidemark.stream.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.object.CorruptObjectException;
import io.tidemark.stream.objectstore.ObjectNotFoundException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class CachedColdReaderTest {

  private static final long SEED = Long.getLong("tidemark.test.seed", System.nanoTime());
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final List<CachedColdReader> readers = new ArrayList<>();

  @AfterEach
  void closeReaders() {
    readers.forEach(CachedColdReader::close);
  }

  static ReadConfig config(long cacheBytes, long readAheadInitial, long readAheadMax, int maxPending, int maxGets) {
    return new ReadConfig(cacheBytes, 50, 1 << 20, readAheadInitial, readAheadMax, 1000, 60_000, 2, maxPending, maxGets);
  }

  private CachedColdReader reader(ColdDataFixture f, io.tidemark.stream.objectstore.ObjectStorage storage, ReadConfig c) {
    CachedColdReader reader = CachedColdReader.create(c, f.metadata, storage, f.keys, registry, f.clockMs::get);
    readers.add(reader);
    return reader;
  }

  @Test
  void readsAreByteIdenticalAcrossManyObjectsAndStreams() {
    // Goal: sequential and random cold reads over 30 uploaded objects of 6 streams (some split into
    // stream objects) return exactly the batches written, with Stream.fetch's byte-limit rules.
    System.out.println("CachedColdReaderTest seed=" + SEED);
    ColdDataFixture f = new ColdDataFixture(SEED, 600);
    List<Long> streams = f.createStreams(6);
    f.uploadRandom(streams, 30, 8, 0.2, 2048);
    CachedColdReader reader = reader(f, f.store, config(256 << 10, 4096, 64 << 10, 64, 8));
    for (long s : streams) {
      long end = f.endOffset(s);
      long cursor = 0;
      while (cursor < end) {
        int maxBytes = 1 + f.nextInt(5000);
        List<StreamBatch> got = reader.read(s, cursor, end, maxBytes).join();
        assertThat(got).as("stream %d from %d (seed %d)", s, cursor, SEED).isEqualTo(f.expected(s, cursor, end, maxBytes));
        cursor = got.getLast().nextOffset();
      }
      assertThat(reader.read(s, end, end + 10, 1000).join()).isEmpty();
    }
    for (int i = 0; i < 200; i++) {
      long s = streams.get(f.nextInt(streams.size()));
      long end = f.endOffset(s);
      long start = f.nextInt((int) end);
      long stop = start + 1 + f.nextInt((int) (end - start));
      int maxBytes = f.nextInt(20_000);
      assertThat(reader.read(s, start, stop, maxBytes).join()).as("stream %d [%d, %d) max %d (seed %d)", s, start, stop,
          maxBytes, SEED).isEqualTo(f.expected(s, start, stop, maxBytes));
    }
    assertThat(reader.blockCache().peakChargedBytes()).isLessThanOrEqualTo(256 << 10);
  }

  @Test
  void sequentialReaderIsServedByReadAheadAndRandomReadsAreNot() {
    // Goal: random-position reads trigger no read-ahead; a sequential reader's read-ahead loads the
    // next blocks so that, once it settled, the next reads issue no GET at all.
    ColdDataFixture f = new ColdDataFixture(SEED, 200);
    long s = f.createStreams(1).getFirst();
    for (int i = 0; i < 10; i++) {
      f.upload(Map.of(s, 40), Set.of(), 1024);
    }
    GatedStorage storage = new GatedStorage(f.store);
    CachedColdReader reader = reader(f, storage, config(1 << 20, 2048, 64 << 10, 64, 8));
    long end = f.endOffset(s);
    // Backwards jumps: no read ever starts where an earlier one stopped (each stopped above its start).
    for (int i = 0; i < 20; i++) {
      long start = end - 1 - i * (end / 25);
      reader.read(s, start, end, 100).join();
    }
    assertThat(registry.counter("tidemark.stream.block.cache.readahead.loads").count()).isZero();

    long cursor = 0;
    for (int i = 0; i < 3; i++) {
      List<StreamBatch> got = reader.read(s, cursor, end, 1000).join();
      cursor = got.getLast().nextOffset();
    }
    await().atMost(Duration.ofSeconds(10))
        .until(() -> registry.counter("tidemark.stream.block.cache.readahead.loads").count() > 0);
    await().atMost(Duration.ofSeconds(10))
        .until(() -> reader.blockCache().loadingBlocks() == 0 && reader.limiter().inFlight() == 0);
    // Demand misses only: the read-ahead this read starts in turn issues GETs of its own.
    double blockMisses = registry.counter("tidemark.stream.block.cache.misses").count();
    double indexMisses = registry.counter("tidemark.stream.index.cache.misses").count();
    List<StreamBatch> next = reader.read(s, cursor, end, 1000).join();
    assertThat(next).isEqualTo(f.expected(s, cursor, end, 1000));
    assertThat(registry.counter("tidemark.stream.block.cache.misses").count()).as("block misses inside the window")
        .isEqualTo(blockMisses);
    assertThat(registry.counter("tidemark.stream.index.cache.misses").count()).isEqualTo(indexMisses);
  }

  @Test
  void concurrentIdenticalReadsShareTheirGets() {
    // Goal: ten identical cold reads arriving together fetch the same bytes as one read (no block twice).
    ColdDataFixture f = new ColdDataFixture(SEED, 300);
    List<Long> streams = f.createStreams(2);
    f.uploadRandom(streams, 4, 20, 0, 1024);
    long s = streams.getFirst();
    long end = f.endOffset(s);

    GatedStorage single = new GatedStorage(f.store);
    reader(f, single, config(1 << 20, 4096, 4096, 64, 8)).read(s, 0, end, 4000).join();

    GatedStorage shared = new GatedStorage(f.store);
    CachedColdReader reader = reader(f, shared, config(1 << 20, 4096, 4096, 64, 8));
    shared.closeGate();
    List<CompletableFuture<List<StreamBatch>>> reads = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      reads.add(reader.read(s, 0, end, 4000));
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> shared.heldGets() > 0);
    shared.openGate();
    for (CompletableFuture<List<StreamBatch>> read : reads) {
      assertThat(read.join()).isEqualTo(f.expected(s, 0, end, 4000));
    }
    // Every block and index is fetched once; adjacent blocks may be split differently between GETs
    // when two readers interleave, so the GET count may differ slightly but the bytes may not.
    assertThat(shared.requestedBytes()).isEqualTo(single.requestedBytes());
    assertThat(shared.gets()).isLessThanOrEqualTo(2 * single.gets());
  }

  @Test
  void oneReadFetchesTheObjectsOfALookupInParallelAndStillReturnsExactlyItsBatches() {
    // Goal: a stream spread over several stream-set objects is not read one object after another: while the first
    // object's GET is held, the read has already asked for the following objects (within its byte budget and
    // half the GET permits); when the store answers, the result is exactly the batches written, and a read whose
    // byte budget ends in the first object starts no GET for the others (not even their indexes).
    ColdDataFixture f = new ColdDataFixture(SEED, 300);
    List<Long> streams = f.createStreams(3);
    Map<Long, Integer> counts = new java.util.TreeMap<>();
    streams.forEach(s -> counts.put(s, 6));
    for (int i = 0; i < 5; i++) {
      f.upload(counts, Set.of(), 1024);
    }
    long s = streams.get(1);
    long end = f.endOffset(s);

    GatedStorage small = new GatedStorage(f.store);
    CachedColdReader smallReader = reader(f, small, config(1 << 20, 1 << 20, 1 << 20, 64, 16));
    small.closeGate();
    CompletableFuture<List<StreamBatch>> first = smallReader.read(s, 0, end, 1);
    await().atMost(Duration.ofSeconds(10)).until(() -> small.heldGets() > 0);
    small.openGate();
    assertThat(first.join()).isEqualTo(f.expected(s, 0, end, 1));
    await().atMost(Duration.ofSeconds(10)).until(() -> smallReader.limiter().inFlight() == 0);
    int smallGets = small.gets();
    assertThat(smallGets).as("the first object's footer and index, and one block").isLessThanOrEqualTo(3);

    GatedStorage storage = new GatedStorage(f.store);
    CachedColdReader reader = reader(f, storage, config(1 << 20, 1 << 20, 1 << 20, 64, 16));
    long other = streams.getFirst(); // in every object: reading it opens (and caches) every object's index
    assertThat(reader.read(other, 0, f.endOffset(other), 1 << 20).join())
        .isEqualTo(f.expected(other, 0, f.endOffset(other), 1 << 20));
    await().atMost(Duration.ofSeconds(10)).until(() -> reader.limiter().inFlight() == 0);
    storage.closeGate();
    CompletableFuture<List<StreamBatch>> all = reader.read(s, 0, end, 1 << 20);
    await().atMost(Duration.ofSeconds(10)).until(() -> storage.heldGets() >= 3);
    assertThat(all).isNotDone();
    storage.openGate();
    assertThat(all.join()).isEqualTo(f.expected(s, 0, end, 1 << 20));
    assertThat(reader.limiter().peakInFlight()).isLessThanOrEqualTo(16);
  }

  @Test
  void inFlightGetsStayWithinTheBoundAndExcessReadsAreRefused() {
    // Goal: with GETs stalled, at most max.inflight.gets are issued; reads beyond max.pending fail
    // fast as busy; when the store recovers, every admitted read completes correctly.
    ColdDataFixture f = new ColdDataFixture(SEED, 300);
    List<Long> streams = f.createStreams(4);
    Map<Long, Integer> counts = new java.util.TreeMap<>();
    streams.forEach(s -> counts.put(s, 5));
    for (int i = 0; i < 3; i++) {
      f.upload(counts, Set.copyOf(streams), 1024); // a stream object per stream: distinct first GETs
    }
    GatedStorage storage = new GatedStorage(f.store);
    CachedColdReader reader = reader(f, storage, config(1 << 20, 4096, 4096, 4, 2));
    storage.closeGate();
    List<CompletableFuture<List<StreamBatch>>> reads = new ArrayList<>();
    for (long s : streams) {
      reads.add(reader.read(s, 0, f.endOffset(s), 100_000));
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> storage.heldGets() == 2);
    assertThatThrownBy(() -> reader.read(streams.getFirst(), 0, 1, 10).join())
        .hasCauseInstanceOf(ColdReadBusyException.class);
    storage.openGate();
    for (int i = 0; i < streams.size(); i++) {
      long s = streams.get(i);
      assertThat(reads.get(i).join()).isEqualTo(f.expected(s, 0, f.endOffset(s), 100_000));
    }
    assertThat(storage.peakInFlight()).isLessThanOrEqualTo(2);
    assertThat(reader.limiter().peakInFlight()).isLessThanOrEqualTo(2);
  }

  @Test
  void corruptOrTruncatedObjectFailsWithItsKey() {
    // Goal: a flipped bit in a block, or a truncated object, fails the read with an error naming the object.
    ColdDataFixture f = new ColdDataFixture(SEED, 300);
    long s = f.createStreams(1).getFirst();
    long first = f.upload(Map.of(s, 10), Set.of(), 1024).getFirst();
    long second = f.upload(Map.of(s, 10), Set.of(), 1024).getFirst();
    String firstKey = f.keys.key(first);
    ByteBuffer original = f.store.get(firstKey).join();
    byte[] bytes = new byte[original.remaining()];
    original.duplicate().get(bytes);
    byte[] flipped = bytes.clone();
    flipped[40] ^= 0x10; // inside the first block's batches
    f.store.put(firstKey, ByteBuffer.wrap(flipped)).join();
    CachedColdReader reader = reader(f, f.store, config(1 << 20, 4096, 4096, 64, 8));
    assertThatThrownBy(() -> reader.read(s, 0, 5, 100).join())
        .hasCauseInstanceOf(CorruptObjectException.class).hasMessageContaining(firstKey);

    String secondKey = f.keys.key(second);
    ByteBuffer whole = f.store.get(secondKey).join();
    f.store.put(secondKey, whole.duplicate().limit(whole.limit() / 2)).join();
    long secondStart = f.written(s).get(10).baseOffset();
    assertThatThrownBy(() -> reader.read(s, secondStart, secondStart + 1, 100).join())
        .hasCauseInstanceOf(CorruptObjectException.class).hasMessageContaining(secondKey);

    f.store.put(firstKey, ByteBuffer.wrap(bytes)).join();
    assertThat(reader.read(s, 0, 5, 100).join()).isEqualTo(f.expected(s, 0, 5, 100));
  }

  @Test
  void missingObjectIsReportedAfterRelookups() {
    // Goal: an object listed in metadata but gone from the store fails the read (after bounded re-lookups), naming it.
    ColdDataFixture f = new ColdDataFixture(SEED, 300);
    long s = f.createStreams(1).getFirst();
    long id = f.upload(Map.of(s, 5), Set.of(), 1024).getFirst();
    f.store.delete(List.of(f.keys.key(id))).join();
    CachedColdReader reader = reader(f, f.store, config(1 << 20, 4096, 4096, 64, 8));
    assertThatThrownBy(() -> reader.read(s, 0, 5, 100).join())
        .hasCauseInstanceOf(ObjectNotFoundException.class).hasMessageContaining(f.keys.key(id));
  }
}
