package io.tidemark.stream.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.stream.api.FetchResult;
import io.tidemark.stream.api.Stream;
import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.objectstore.FaultInjectingObjectStorage;
import io.tidemark.stream.objectstore.FaultInjectingObjectStorage.Fault;
import io.tidemark.stream.objectstore.FaultInjectingObjectStorage.Operation;
import io.tidemark.stream.objectstore.FaultInjectingObjectStorage.Rule;
import io.tidemark.stream.read.CachedColdReader;
import io.tidemark.stream.read.ReadConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class StreamEngineEndToEndTest {

  private static final int STREAMS = 40;

  private final EngineFixture fixture = new EngineFixture();
  private final ScheduledExecutorService faultTimer = Executors.newSingleThreadScheduledExecutor();

  private final List<CachedColdReader> readers = new ArrayList<>();

  @AfterEach
  void tearDown() {
    fixture.close();
    readers.forEach(CachedColdReader::close);
    faultTimer.shutdownNow();
  }

  @Test
  void manyStreamsSurviveFlakyUploadsAndARestartByteIdentical() throws Exception {
    // Goal: many streams appended concurrently, uploaded through failing/unknown-outcome PUTs, crashed and
    // recovered from the WAL, read back byte-identical from objects (cold) and from the cache (hot).
    run(false);
  }

  @Test
  void theSameWithTheBlockCacheColdReader() throws Exception {
    // Goal: the engine works end to end with the block-cache cold reader plugged in behind ColdReader.
    run(true);
  }

  private void run(boolean blockCacheReader) throws Exception {
    long seed = Long.getLong("tidemark.test.seed", System.nanoTime());
    System.out.println("StreamEngineEndToEndTest seed=" + seed);
    FaultInjectingObjectStorage flaky = new FaultInjectingObjectStorage(fixture.storage, new Random(seed), faultTimer);
    flaky.setRules(Rule.of(Operation.PUT, Fault.FAIL, 0.2), Rule.of(Operation.PUT, Fault.UNKNOWN_AFTER_APPLY, 0.05),
        Rule.of(Operation.UPLOAD_PART, Fault.FAIL, 0.1));
    StreamEngineConfig config = new StreamEngineConfig(256 * 1024, 32 * 1024, 3_600_000, 12 * 1024, 2048,
        16 * 1024, 60_000, 4 * 1024 * 1024, 40, 20, 8);
    StreamEngine engine = start(config, flaky, blockCacheReader);
    List<Stream> streams = new ArrayList<>();
    for (int i = 0; i < STREAMS; i++) {
      streams.add(engine.openStream(engine.createStream(Map.of()).join(), 1).join());
    }
    Map<Long, ConcurrentSkipListMap<Long, byte[]>> expected = new ConcurrentHashMap<>();
    streams.forEach(s -> expected.put(s.streamId(), new ConcurrentSkipListMap<>()));

    Random random = new Random(seed);
    appendRandom(streams, expected, random, 1500);
    engine.flush().join();
    appendRandom(streams, expected, random, 500);
    // hot reads before the crash: the tail of every stream comes from the cache
    for (Stream s : streams) {
      verify(s, expected.get(s.streamId()));
    }
    // whatever is not uploaded yet (the tail below the threshold) must come back from the WAL
    fixture.crash(engine);

    StreamEngine restarted = start(config, flaky, blockCacheReader);
    List<Stream> reopened = new ArrayList<>();
    for (Stream s : streams) {
      Stream r = restarted.openStream(s.streamId(), 2).join();
      assertThat(r.nextOffset()).isEqualTo(expected.get(s.streamId()).isEmpty() ? 0
          : expected.get(s.streamId()).lastEntry().getKey() + recordCount(expected.get(s.streamId()).lastEntry()));
      reopened.add(r);
    }
    for (Stream s : reopened) {
      verify(s, expected.get(s.streamId()));
      if (s.nextOffset() > 0) {
        assertThat(s.fetch(0, 1, 1).join().cold()).isTrue();
      }
    }
    // new appends are hot, older data cold; one fetch may span both
    appendRandom(reopened, expected, random, 300);
    for (Stream s : reopened) {
      verify(s, expected.get(s.streamId()));
    }
    restarted.close();
    assertThat(fixture.wal.size()).isZero();
  }

  private StreamEngine start(StreamEngineConfig config, FaultInjectingObjectStorage flaky, boolean blockCacheReader) {
    if (!blockCacheReader) {
      return fixture.start(config, fixture.wal, flaky);
    }
    CachedColdReader reader = CachedColdReader.create(ReadConfig.defaults(), fixture.metadata.objects(), flaky, fixture.keys,
        new SimpleMeterRegistry(), fixture.clock::get);
    readers.add(reader);
    return fixture.start(config, fixture.wal, flaky, reader::read);
  }

  /** Appends {@code count} random batches to random streams from 4 threads; records payloads by acked offset. */
  private static void appendRandom(List<Stream> streams, Map<Long, ConcurrentSkipListMap<Long, byte[]>> expected,
      Random random, int count) throws Exception {
    List<CompletableFuture<Void>> acks = new ArrayList<>();
    var pool = Executors.newFixedThreadPool(4);
    try {
      for (int i = 0; i < count; i++) {
        Stream s = streams.get(random.nextInt(streams.size()));
        byte[] payload = new byte[1 + random.nextInt(random.nextInt(10) == 0 ? 6000 : 600)];
        random.nextBytes(payload);
        int records = 1 + random.nextInt(4);
        payload[0] = (byte) records;
        acks.add(CompletableFuture.supplyAsync(() -> s.append(records, ByteBuffer.wrap(payload)), pool)
            .thenCompose(f -> f)
            .thenAccept(offset -> expected.get(s.streamId()).put(offset, payload)));
      }
      CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).get();
    } finally {
      pool.shutdown();
    }
  }

  private static long recordCount(Map.Entry<Long, byte[]> e) {
    return e.getValue()[0];
  }

  private static void verify(Stream s, ConcurrentSkipListMap<Long, byte[]> expected) {
    long end = s.nextOffset();
    long cursor = 0;
    while (cursor < end) {
      FetchResult result = s.fetch(cursor, end, 8192).join();
      assertThat(result.batches()).as("stream %d fetch at %d below %d", s.streamId(), cursor, end).isNotEmpty();
      for (StreamBatch b : result.batches()) {
        if (b.nextOffset() <= cursor) {
          continue;
        }
        assertThat(b.baseOffset()).as("stream %d dense at %d", s.streamId(), cursor).isEqualTo(cursor);
        byte[] want = expected.get(b.baseOffset());
        assertThat(want).as("stream %d batch at %d acknowledged", s.streamId(), cursor).isNotNull();
        assertThat(b.recordCount()).isEqualTo(want[0]);
        assertThat(b.payload()).isEqualTo(ByteBuffer.wrap(want));
        cursor = b.nextOffset();
      }
    }
    assertThat(cursor).isEqualTo(expected.isEmpty() ? 0 : expected.lastKey() + expected.lastEntry().getValue()[0]);
  }
}
