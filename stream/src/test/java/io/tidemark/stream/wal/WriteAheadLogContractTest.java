package io.tidemark.stream.wal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every {@link WriteAheadLog} must have, run against each implementation. A subclass
 * says how to open the log "as a restarted process would" over its own storage.
 */
abstract class WriteAheadLogContractTest {

  private final List<WriteAheadLog> opened = new ArrayList<>();

  /** Opens a new instance over this test's storage (a restart: higher epoch), not yet recovered. */
  protected abstract WriteAheadLog newLog(long appendTimeoutMs);

  /** Roughly how many payload bytes the log holds before it must be trimmed (drives the lap test). */
  protected abstract long capacityBytes();

  /** True when a full log makes appends wait for a trim (the block WAL). */
  protected boolean fillsUntilTrimmed() {
    return false;
  }

  /** True when futures of concurrent appenders complete in offset order (not the synchronous fake). */
  protected boolean completesInOffsetOrderAcrossThreads() {
    return true;
  }

  @AfterEach
  void closeAll() {
    opened.forEach(WriteAheadLog::close);
  }

  protected final WriteAheadLog open(long appendTimeoutMs) {
    WriteAheadLog wal = newLog(appendTimeoutMs);
    opened.add(wal);
    return wal;
  }

  /** Closes {@code previous} (if any), opens the log again, returns what recovery found, and starts it. */
  protected final Map<Long, byte[]> restart(WriteAheadLog[] holder, long appendTimeoutMs) {
    if (holder[0] != null) {
      holder[0].close();
    }
    holder[0] = open(appendTimeoutMs);
    Map<Long, byte[]> recovered = drain(holder[0].recover());
    holder[0].start();
    return recovered;
  }

  static Map<Long, byte[]> drain(Iterator<WalRecord> records) {
    Map<Long, byte[]> result = new TreeMap<>();
    long previous = -1;
    while (records.hasNext()) {
      WalRecord r = records.next();
      assertThat(r.walOffset()).as("recovered offsets increase").isGreaterThan(previous);
      previous = r.walOffset();
      byte[] bytes = new byte[r.payload().remaining()];
      r.payload().duplicate().get(bytes);
      result.put(r.walOffset(), bytes);
    }
    return result;
  }

  static byte[] payload(Random random, int size) {
    byte[] bytes = new byte[size];
    random.nextBytes(bytes);
    return bytes;
  }

  static long join(CompletableFuture<Long> future) {
    return future.orTimeout(30, TimeUnit.SECONDS).join();
  }

  private static void assertSameRecords(Map<Long, byte[]> actual, Map<Long, byte[]> expected) {
    assertThat(actual.keySet()).containsExactlyElementsOf(expected.keySet());
    expected.forEach((offset, bytes) -> assertThat(actual.get(offset)).as("record at %d", offset).isEqualTo(bytes));
  }

  @Test
  void appendedRecordsComeBackByteIdenticalAfterRestart() {
    // Goal: what was acknowledged is recovered with the same offsets and the same bytes, including empty records.
    Random random = new Random(1);
    WriteAheadLog[] wal = new WriteAheadLog[1];
    assertThat(restart(wal, 5000)).isEmpty();
    Map<Long, byte[]> expected = new TreeMap<>();
    List<CompletableFuture<Long>> futures = new ArrayList<>();
    List<byte[]> payloads = new ArrayList<>();
    for (int i = 0; i < 120; i++) {
      byte[] bytes = payload(random, i == 7 ? 0 : random.nextInt(2000));
      payloads.add(bytes);
      futures.add(wal[0].append(ByteBuffer.wrap(bytes)));
    }
    long previous = -1;
    for (int i = 0; i < futures.size(); i++) {
      long offset = join(futures.get(i));
      assertThat(offset).as("offsets grow in append order").isGreaterThan(previous);
      previous = offset;
      expected.put(offset, payloads.get(i));
    }
    assertSameRecords(restart(wal, 5000), expected);
  }

  @Test
  void offsetsKeepGrowingAcrossRestarts() {
    // Goal: a restarted log never hands out an offset at or below one it handed out before.
    Random random = new Random(2);
    WriteAheadLog[] wal = new WriteAheadLog[1];
    restart(wal, 5000);
    long last = -1;
    for (int round = 0; round < 3; round++) {
      for (int i = 0; i < 10; i++) {
        long offset = join(wal[0].append(ByteBuffer.wrap(payload(random, 100))));
        assertThat(offset).isGreaterThan(last);
        last = offset;
      }
      restart(wal, 5000);
    }
  }

  @Test
  void recoveryAfterTrimReturnsOnlyRecordsAtOrAboveTheTrimPoint() {
    // Goal: trim(x) is durable: after a restart, exactly the records with offset >= x come back.
    Random random = new Random(3);
    WriteAheadLog[] wal = new WriteAheadLog[1];
    restart(wal, 5000);
    Map<Long, byte[]> all = new TreeMap<>();
    for (int i = 0; i < 100; i++) {
      byte[] bytes = payload(random, 200 + random.nextInt(800));
      all.put(join(wal[0].append(ByteBuffer.wrap(bytes))), bytes);
    }
    long trimPoint = new ArrayList<>(all.keySet()).get(40);
    wal[0].trim(trimPoint).orTimeout(30, TimeUnit.SECONDS).join();
    assertSameRecords(restart(wal, 5000), new TreeMap<>(((TreeMap<Long, byte[]>) all).tailMap(trimPoint)));
    // A trim between two offsets keeps the record above it.
    long between = new ArrayList<>(all.keySet()).get(60) - 1;
    wal[0].trim(between).orTimeout(30, TimeUnit.SECONDS).join();
    assertSameRecords(restart(wal, 5000), new TreeMap<>(((TreeMap<Long, byte[]>) all).tailMap(between)));
  }

  @Test
  void spaceIsReusedOverSeveralLapsAndRecoveryIsRightAfterEach() {
    // Goal: appending over four times the capacity, trimming behind, recovery after every round returns exactly the live records.
    Random random = new Random(4);
    WriteAheadLog[] wal = new WriteAheadLog[1];
    restart(wal, 5000);
    TreeMap<Long, byte[]> live = new TreeMap<>();
    // A lone appender's record takes at most one 4 KiB block in the block WAL: a round fills at most a quarter.
    int recordsPerRound = (int) (capacityBytes() / 4 / 4096);
    Long previousRoundStart = null;
    for (int round = 0; round < 18; round++) {
      Long roundStart = null;
      for (int i = 0; i < recordsPerRound; i++) {
        byte[] bytes = payload(random, 500 + random.nextInt(3000));
        long offset = join(wal[0].append(ByteBuffer.wrap(bytes)));
        roundStart = roundStart == null ? offset : roundStart;
        live.put(offset, bytes);
      }
      if (previousRoundStart != null) {
        wal[0].trim(previousRoundStart).orTimeout(30, TimeUnit.SECONDS).join();
        live.headMap(previousRoundStart).clear();
      }
      previousRoundStart = roundStart;
      assertSameRecords(restart(wal, 5000), live);
    }
  }

  @Test
  void concurrentAppendersGetDistinctOffsetsCompletedInOrder() throws Exception {
    // Goal: 16 threads appending at once all succeed, offsets are unique and increase per thread, futures complete in offset order.
    WriteAheadLog[] wal = new WriteAheadLog[1];
    restart(wal, 10_000);
    int threads = 16;
    int perThread = 40;
    // Half the threads append and register their callback under one lock, so their appends have a known total
    // order and their callbacks are registered before (or run at) completion: their completion sequence must be sorted.
    Object registration = new Object();
    ConcurrentLinkedQueue<Long> completionOrder = new ConcurrentLinkedQueue<>();
    // Completion in offset order means: when offset o is complete, every future still pending ends with an
    // offset above o. A callback records the futures pending when it runs (a subset of those pending when o
    // completed); the check runs once all are done. (Recording the order callbacks run in would be racy: a
    // callback registered while its future completes runs on the registering thread, possibly late.)
    List<CompletableFuture<Long>> all = new java.util.concurrent.CopyOnWriteArrayList<>();
    Map<Long, List<CompletableFuture<Long>>> pendingAt = new java.util.concurrent.ConcurrentHashMap<>();
    Map<Long, byte[]> expected = new java.util.concurrent.ConcurrentSkipListMap<>();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch go = new CountDownLatch(1);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        done.add(pool.submit(() -> {
          Random random = new Random(100 + thread);
          go.await();
          List<CompletableFuture<Long>> mine = new ArrayList<>();
          List<byte[]> bytes = new ArrayList<>();
          for (int i = 0; i < perThread; i++) {
            byte[] b = payload(random, 10 + random.nextInt(400));
            bytes.add(b);
            CompletableFuture<Long> f;
            if (thread % 2 == 0) {
              synchronized (registration) {
                f = wal[0].append(ByteBuffer.wrap(b));
                all.add(f);
                f.thenAccept(offset -> {
                  pendingAt.put(offset, all.stream().filter(x -> !x.isDone()).toList());
                  completionOrder.add(offset);
                });
              }
            } else {
              f = wal[0].append(ByteBuffer.wrap(b));
              all.add(f);
            }
            mine.add(f);
            if (i % 8 == 7) {
              join(f); // mix waiting and pipelined appenders
            }
          }
          long previous = -1;
          for (int i = 0; i < perThread; i++) {
            long offset = join(mine.get(i));
            assertThat(offset).isGreaterThan(previous);
            previous = offset;
            expected.put(offset, bytes.get(i));
          }
          return null;
        }));
      }
      go.countDown();
      for (Future<?> f : done) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(expected).hasSize(threads * perThread);
    await().atMost(Duration.ofSeconds(10)).until(() -> completionOrder.size() == threads / 2 * perThread);
    if (completesInOffsetOrderAcrossThreads()) {
      pendingAt.forEach((offset, pending) -> assertThat(pending).allSatisfy(p ->
          assertThat(join(p)).as("a future still pending when offset " + offset + " completed").isGreaterThan(offset)));
    }
    assertSameRecords(restart(wal, 5000), expected);
  }

  @Test
  void aFullLogHoldsAcceptedAppendsUntilATrimAndRefusesMoreAtOnce() throws Exception {
    // Goal: with no space before the trim point an accepted append neither fails nor completes, a full queue refuses
    // further appends at once (nothing written), and a trim lets every accepted one through, recoverable after.
    org.junit.jupiter.api.Assumptions.assumeTrue(fillsUntilTrimmed(), "this log does not fill up until trimmed");
    Random random = new Random(5);
    WriteAheadLog[] wal = new WriteAheadLog[1];
    restart(wal, 300);
    List<Long> offsets = new ArrayList<>();
    List<CompletableFuture<Long>> held = new ArrayList<>();
    List<byte[]> heldPayloads = new ArrayList<>();
    for (int i = 0; i < 10_000 && held.isEmpty(); i++) {
      byte[] bytes = payload(random, 8000);
      CompletableFuture<Long> f = wal[0].append(ByteBuffer.wrap(bytes));
      try {
        offsets.add(f.get(2, TimeUnit.SECONDS));
      } catch (java.util.concurrent.TimeoutException e) {
        if (!wal[0].trimWanted()) {
          offsets.add(join(f)); // only slow, not out of space
          continue;
        }
        held.add(f);
        heldPayloads.add(bytes);
      }
    }
    assertThat(held).as("the log filled up").isNotEmpty();
    assertThat(offsets).hasSizeGreaterThan(5);

    CompletableFuture<Long> refused = null;
    for (int i = 0; i < 10_000 && refused == null; i++) {
      byte[] bytes = payload(random, 8000);
      CompletableFuture<Long> f = wal[0].append(ByteBuffer.wrap(bytes));
      if (f.isDone()) {
        refused = f;
      } else {
        held.add(f);
        heldPayloads.add(bytes);
      }
    }
    assertThat(refused).as("a full queue refuses at once").isNotNull();
    assertThatThrownBy(refused::join).hasCauseInstanceOf(WalFullException.class);
    assertThat(held).as("accepted appends wait, they never fail").noneMatch(CompletableFuture::isDone);

    wal[0].trim(offsets.getLast() + 1).orTimeout(30, TimeUnit.SECONDS).join();
    Map<Long, byte[]> expected = new TreeMap<>();
    for (int i = 0; i < held.size(); i++) {
      long offset = join(held.get(i));
      assertThat(offset).isGreaterThan(offsets.getLast());
      expected.put(offset, heldPayloads.get(i));
    }
    assertSameRecords(restart(wal, 5000), expected);
  }

  @Test
  void appendBeforeStartAndAfterCloseFailsWithoutSideEffects() {
    // Goal: calls outside the started state fail with a WalException and change nothing.
    WriteAheadLog wal = open(5000);
    assertThatThrownBy(() -> wal.append(ByteBuffer.wrap(new byte[1])).join()).hasCauseInstanceOf(WalException.class);
    drain(wal.recover());
    wal.start();
    long offset = join(wal.append(ByteBuffer.wrap(new byte[] {1, 2, 3})));
    wal.close();
    assertThatThrownBy(() -> wal.append(ByteBuffer.wrap(new byte[1])).join()).hasCauseInstanceOf(WalException.class);
    WriteAheadLog[] again = new WriteAheadLog[1];
    Map<Long, byte[]> recovered = restart(again, 5000);
    assertThat(recovered).containsOnlyKeys(offset);
  }
}
