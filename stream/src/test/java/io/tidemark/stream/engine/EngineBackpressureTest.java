package io.tidemark.stream.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.stream.api.AppendBackpressureException;
import io.tidemark.stream.api.Stream;
import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.metadata.StreamMetadata;
import io.tidemark.stream.metadata.StreamMetadata.StreamState;
import io.tidemark.stream.objectstore.FaultInjectingObjectStorage;
import io.tidemark.stream.objectstore.FaultInjectingObjectStorage.Fault;
import io.tidemark.stream.objectstore.FaultInjectingObjectStorage.Rule;
import io.tidemark.stream.wal.BlockWalOptions;
import io.tidemark.stream.wal.BlockWriteAheadLog;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A full cache, a full WAL and an object store that stays down longer than any retry budget are
 * backpressure, never a failure: the engine keeps serving, refuses what does not fit with nothing
 * assigned, says it is stalled, and acknowledges again on its own once the store answers, with
 * every acknowledged record read back. Closing one stream uploads only that stream.
 */
class EngineBackpressureTest {

  private final EngineFixture fixture = new EngineFixture();
  private final ScheduledExecutorService faultTimer = Executors.newSingleThreadScheduledExecutor();

  @TempDir
  Path dir;

  @AfterEach
  void tearDown() {
    fixture.close();
    faultTimer.shutdownNow();
  }

  @Test
  void anObjectStoreOutageLongerThanTheRetryBudgetHoldsAppendsAndAcknowledgementsResumeOnTheirOwn() {
    // Goal: during an outage far beyond stream.upload.retry.max, the engine does not fail: it acknowledges until the
    // cache is full, then holds appends, refuses those beyond the waiting bound (nothing assigned), reports a stall and
    // failing uploads; once the store is back every held append is acknowledged, offsets dense, all read back.
    long seed = System.nanoTime();
    System.out.println("EngineBackpressureTest outage seed " + seed);
    FaultInjectingObjectStorage store = new FaultInjectingObjectStorage(fixture.storage, new Random(seed), faultTimer);
    StreamEngineConfig base = EngineFixture.smallConfig();
    StreamEngineConfig config = new StreamEngineConfig(base.cacheSizeBytes(), base.uploadThresholdBytes(),
        base.uploadIntervalMs(), base.objectSplitBytes(), base.objectBlockSizeBytes(), base.objectPartSizeBytes(),
        base.objectPrepareTtlMs(), 128 * 1024, base.uploadRetryMax(), base.uploadRetryBackoffMaxMs(),
        base.coldReadObjectsMax()).withAppendStallMs(300);
    StreamEngine engine = fixture.start(config, fixture.wal, store);
    List<Stream> streams = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      streams.add(engine.openStream(engine.createStream(Map.of()).join(), 1).join());
    }
    Producer producer = new Producer(streams, new Random(seed));
    producer.appendAcknowledged(30); // before the outage

    store.setRules(Rule.of(null, Fault.FAIL, 1.0));
    int refusedAt = producer.appendUntilRefused(5_000);
    assertThat(refusedAt).as("appends beyond the waiting bound are refused at once").isPositive();
    long budget = (long) config.uploadRetryMax() * config.uploadRetryMax(); // what used to fail the engine
    await().atMost(Duration.ofSeconds(60)).until(() -> store.injected(Fault.FAIL) > 3 * budget
        && engine.health().appendsStalled());
    StreamEngine.Health during = engine.health();
    assertThat(during.state()).isEqualTo(StreamEngine.State.SERVING);
    assertThat(during.live()).isTrue();
    assertThat(during.acceptingAppends()).isFalse();
    assertThat(during.uploadFailingForMs()).isPositive();
    assertThat(during.lastUploadError()).contains("injected");
    assertThat(engine.cacheUsedBytes()).isLessThanOrEqualTo(config.cacheSizeBytes());
    assertThat(producer.accepted).as("held appends neither fail nor complete while nothing can be uploaded")
        .anyMatch(f -> !f.isDone()).noneMatch(CompletableFuture::isCompletedExceptionally);

    store.clearRules();
    producer.awaitAll();
    await().atMost(Duration.ofSeconds(30)).until(() -> engine.health().acceptingAppends()
        && engine.health().uploadFailingForMs() == 0);
    producer.appendAcknowledged(30); // serving as before
    engine.flush().join();
    producer.verifyDenseAndReadBack();
  }

  @ParameterizedTest(name = "{0} fills first")
  @ValueSource(strings = {"WAL", "cache"})
  void aFullWalOrCacheUnderLoadIsBackpressureAndEveryStreamKeepsServing(String fullFirst) throws Exception {
    // Goal: while uploads fail, small records under load fill a real block WAL (each group commit padded to a block;
    // cache larger than the WAL) or the cache (WAL larger); the engine's loop stays responsive (a stream opens
    // meanwhile), no stream fails, and after the pressure every stream takes appends with nothing acknowledged lost.
    long seed = System.nanoTime();
    System.out.println("EngineBackpressureTest " + fullFirst + " seed " + seed);
    boolean walFirst = fullFirst.equals("WAL");
    FaultInjectingObjectStorage store = new FaultInjectingObjectStorage(fixture.storage, new Random(seed), faultTimer);
    BlockWriteAheadLog wal = new BlockWriteAheadLog(new BlockWalOptions(dir.resolve("wal.log"),
        walFirst ? 1 << 20 : 8 << 20, false, 0, 64 * 1024, 1, 1, Clock.systemUTC()));
    long cacheBytes = walFirst ? 4 << 20 : 256 * 1024;
    StreamEngineConfig config = new StreamEngineConfig(cacheBytes, cacheBytes / 4, 3_600_000, 32 * 1024, 4096,
        64 * 1024, 60_000, 128 * 1024, 3, 50, 8).withAppendStallMs(300);
    StreamEngine engine = fixture.start(config, wal, store);
    List<Stream> streams = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      streams.add(engine.openStream(engine.createStream(Map.of()).join(), 1).join());
    }
    Producer producer = new Producer(streams, new Random(seed));
    store.setRules(Rule.of(null, Fault.FAIL, 1.0));
    AtomicBoolean stop = new AtomicBoolean();
    List<Thread> appenders = new ArrayList<>();
    for (int t = 0; t < 3; t++) {
      Random random = new Random(seed + t);
      appenders.add(Thread.ofPlatform().name("appender-" + t).start(() -> {
        while (!stop.get()) {
          if (!producer.appendOne(random, 50 + random.nextInt(250))) {
            LockSupport.parkNanos(1_000_000); // a producer's retry backoff after a refusal
          }
        }
      }));
    }
    await().atMost(Duration.ofSeconds(60)).until(() -> producer.refused.get() > 0 && engine.health().appendsStalled()
        && store.injected(Fault.FAIL) > 20);
    if (walFirst) {
      assertThat(wal.trimWanted()).as("the WAL is out of space").isTrue();
      assertThat(engine.cacheUsedBytes()).as("while the cache is not").isLessThan(cacheBytes / 2);
    } else {
      assertThat(engine.cacheUsedBytes()).as("the cache is full").isGreaterThan(cacheBytes * 3 / 4);
      assertThat(wal.trimWanted()).as("while the WAL is not").isFalse();
    }
    Stream openedMeanwhile = engine.openStream(engine.createStream(Map.of()).join(), 1)
        .get(10, java.util.concurrent.TimeUnit.SECONDS); // the loop is not blocked in the WAL
    stop.set(true);
    for (Thread t : appenders) {
      t.join();
    }
    assertThat(producer.accepted).noneMatch(CompletableFuture::isCompletedExceptionally);

    store.clearRules();
    producer.awaitAll();
    producer.add(openedMeanwhile);
    producer.appendAcknowledged(40);
    assertThat(engine.health().acceptingAppends()).isTrue();
    engine.flush().join();
    producer.verifyDenseAndReadBack();
  }

  @Test
  void closingOneStreamUploadsOnlyThatStream() {
    // Goal: Stream.close() commits the closing stream's data and leaves the other streams' data unuploaded.
    StreamEngine engine = fixture.start(EngineFixture.smallConfig());
    Stream a = engine.openStream(engine.createStream(Map.of()).join(), 1).join();
    Stream b = engine.openStream(engine.createStream(Map.of()).join(), 1).join();
    for (int i = 0; i < 3; i++) {
      a.append(1, StreamEngineTest.text("a" + i)).join();
      b.append(1, StreamEngineTest.text("b" + i)).join();
    }
    a.close().join();
    Map<Long, StreamMetadata> meta = new ConcurrentHashMap<>();
    fixture.metadata.streams().getStreams(List.of(a.streamId(), b.streamId())).join()
        .forEach(m -> meta.put(m.streamId(), m));
    assertThat(meta.get(a.streamId()).state()).isEqualTo(StreamState.CLOSED);
    assertThat(meta.get(a.streamId()).endOffset()).isEqualTo(3);
    assertThat(meta.get(b.streamId()).endOffset()).as("the other stream was not uploaded").isZero();
    assertThat(engine.unuploadedBytes()).isPositive();
    assertThat(fixture.wal.size()).as("the WAL keeps the other stream's records").isGreaterThanOrEqualTo(3);

    Stream reopened = engine.openStream(a.streamId(), 2).join();
    assertThat(StreamEngineTest.readAll(reopened, 0, 3)).extracting(StreamEngineTest::string)
        .containsExactly("a0", "a1", "a2");
    engine.flush().join();
    assertThat(fixture.metadata.streams().getStreams(List.of(b.streamId())).join().getFirst().endOffset()).isEqualTo(3);
    assertThat(fixture.wal.size()).isZero();
  }

  /** Appends random payloads to random streams and remembers what was acknowledged at which offset. */
  private static final class Producer {
    final List<Stream> streams;
    final Random random;
    final Map<Long, ConcurrentSkipListMap<Long, byte[]>> acked = new ConcurrentHashMap<>();
    final ConcurrentLinkedQueue<CompletableFuture<Long>> accepted = new ConcurrentLinkedQueue<>();
    final AtomicLong refused = new AtomicLong();

    Producer(List<Stream> streams, Random random) {
      this.streams = new ArrayList<>(streams);
      this.random = random;
      streams.forEach(s -> acked.put(s.streamId(), new ConcurrentSkipListMap<>()));
    }

    synchronized void add(Stream stream) {
      streams.add(stream);
      acked.put(stream.streamId(), new ConcurrentSkipListMap<>());
    }

    /** One append; false when it was refused at once (which must assign nothing). */
    boolean appendOne(Random r, int size) {
      return tryAppend(r, size) != null;
    }

    /** One append to a random stream: its future, or null when it was refused at once. */
    CompletableFuture<Long> tryAppend(Random r, int size) {
      Stream s;
      synchronized (this) {
        s = streams.get(r.nextInt(streams.size()));
      }
      byte[] bytes = new byte[size];
      r.nextBytes(bytes);
      CompletableFuture<Long> f;
      synchronized (s) { // one appender per stream at a time keeps "offset order = call order" checkable
        f = s.append(1, ByteBuffer.wrap(bytes));
      }
      if (f.isCompletedExceptionally()) {
        assertThat(f.handle((v, e) -> e.getClass()).join()).isEqualTo(AppendBackpressureException.class);
        refused.incrementAndGet();
        return null;
      }
      CompletableFuture<Long> recorded = f.whenComplete((offset, e) -> {
        if (e == null) {
          acked.get(s.streamId()).put(offset, bytes);
        }
      });
      accepted.add(recorded);
      return recorded;
    }

    void appendAcknowledged(int count) {
      List<CompletableFuture<Long>> now = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        CompletableFuture<Long> f = tryAppend(random, 500 + random.nextInt(1500));
        assertThat(f).as("append %d refused", i).isNotNull();
        now.add(f);
      }
      CompletableFuture.allOf(now.toArray(CompletableFuture[]::new)).orTimeout(30, java.util.concurrent.TimeUnit.SECONDS)
          .join();
    }

    /** Appends until one is refused; returns how many were accepted before. */
    int appendUntilRefused(int max) {
      for (int i = 0; i < max; i++) {
        if (!appendOne(random, 1000)) {
          return i;
        }
      }
      return -1;
    }

    void awaitAll() {
      CompletableFuture.allOf(accepted.toArray(CompletableFuture[]::new))
          .orTimeout(60, java.util.concurrent.TimeUnit.SECONDS).join();
    }

    /** Every stream's acknowledged offsets are dense from 0 and read back byte-identical. */
    void verifyDenseAndReadBack() {
      for (Stream s : streams) {
        ConcurrentSkipListMap<Long, byte[]> expected = acked.get(s.streamId());
        assertThat(expected.keySet()).as("offsets of %s", s).containsExactlyElementsOf(
            java.util.stream.LongStream.range(0, expected.size()).boxed().toList());
        assertThat(s.nextOffset()).isEqualTo(expected.size());
        List<StreamBatch> read = StreamEngineTest.readAll(s, 0, expected.size());
        assertThat(read).hasSize(expected.size());
        for (StreamBatch b : read) {
          assertThat(StreamEngineTest.bytes(b)).as("offset %d of %s", b.baseOffset(), s)
              .isEqualTo(expected.get(b.baseOffset()));
        }
      }
    }
  }
}
