package io.tidemark.stream.wal;

import static io.tidemark.stream.wal.WriteAheadLogContractTest.drain;
import static io.tidemark.stream.wal.WriteAheadLogContractTest.join;
import static io.tidemark.stream.wal.WriteAheadLogContractTest.payload;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tidemark.stream.objectstore.ObjectInfo;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Object WAL specifics: fencing, listing-based recovery, deletion of trimmed objects, batching and backpressure. */
class ObjectWriteAheadLogTest {

  private final GatedObjectStorage storage = new GatedObjectStorage();
  private final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);
  private final List<ObjectWriteAheadLog> opened = new ArrayList<>();

  @AfterEach
  void cleanUp() {
    storage.release();
    opened.forEach(ObjectWriteAheadLog::close);
    scheduler.shutdownNow();
  }

  private ObjectWriteAheadLog log(ObjectWalOptions options) {
    ObjectWriteAheadLog wal = new ObjectWriteAheadLog(options, storage, scheduler, Clock.systemUTC());
    opened.add(wal);
    return wal;
  }

  private static ObjectWalOptions options(long epoch) {
    return new ObjectWalOptions(1, epoch, 2, 4096, 4, 1 << 20, 5000);
  }

  private ObjectWriteAheadLog started(ObjectWalOptions options, Map<Long, byte[]> recoveredOut) {
    ObjectWriteAheadLog wal = log(options);
    recoveredOut.putAll(drain(wal.recover()));
    wal.start();
    return wal;
  }

  private static TreeMap<Long, byte[]> appendAll(ObjectWriteAheadLog wal, Random random, int count) {
    List<CompletableFuture<Long>> futures = new ArrayList<>();
    List<byte[]> payloads = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      byte[] bytes = payload(random, 1 + random.nextInt(1500));
      payloads.add(bytes);
      futures.add(wal.append(ByteBuffer.wrap(bytes)));
    }
    TreeMap<Long, byte[]> result = new TreeMap<>();
    for (int i = 0; i < count; i++) {
      result.put(join(futures.get(i)), payloads.get(i));
    }
    return result;
  }

  private static void assertRecords(Map<Long, byte[]> actual, Map<Long, byte[]> expected) {
    assertThat(actual.keySet()).containsExactlyElementsOf(expected.keySet());
    expected.forEach((offset, bytes) -> assertThat(actual.get(offset)).as("record %d", offset).isEqualTo(bytes));
  }

  private List<String> keys(String prefix) {
    return storage.list(prefix).join().stream().map(ObjectInfo::key).toList();
  }

  private List<WalObjectFormat.ParsedKey> batchKeys() {
    return keys("wal/1/").stream().map(k -> WalObjectFormat.parse(1, k))
        .filter(k -> k.kind() == WalObjectFormat.Kind.BATCH).toList();
  }

  @Test
  void aFencedWriterFailsFromThenOnAndTheNewWriterRecoversAllItAcknowledged() {
    // Goal: after epoch 2 recovers, every append, trim of epoch 1 fails with WalFencedException; everything epoch 1 acknowledged is recovered.
    Random random = new Random(20);
    ObjectWriteAheadLog old = started(options(1), new TreeMap<>());
    TreeMap<Long, byte[]> acknowledged = appendAll(old, random, 30);

    TreeMap<Long, byte[]> recovered = new TreeMap<>();
    ObjectWriteAheadLog current = started(options(2), recovered);
    assertRecords(recovered, acknowledged);

    CompletableFuture<Long> stale = old.append(ByteBuffer.wrap(new byte[] {1}));
    assertThatThrownBy(() -> stale.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(WalFencedException.class);
    assertThatThrownBy(() -> old.append(ByteBuffer.wrap(new byte[] {2})).join()).hasCauseInstanceOf(WalFencedException.class);
    assertThatThrownBy(() -> old.trim(5).join()).hasCauseInstanceOf(WalFencedException.class);

    acknowledged.putAll(appendAll(current, random, 10));
    TreeMap<Long, byte[]> third = new TreeMap<>();
    started(options(3), third);
    assertRecords(third, acknowledged);
  }

  @Test
  void aStaleWriterPutLandingAfterTheNewWriterRecoveredNeverExtendsTheLog() {
    // Goal: a PUT of epoch 1 that lands after epoch 2 recovered is not acknowledged, never recovered later, and is cleaned up.
    Random random = new Random(21);
    ObjectWriteAheadLog old = started(options(1), new TreeMap<>());
    TreeMap<Long, byte[]> acknowledged = appendAll(old, random, 12);

    String oldPrefix = "wal/1/" + WalObjectFormat.pad(1) + "/";
    storage.hold(key -> key.startsWith(oldPrefix));
    CompletableFuture<Long> late = old.append(ByteBuffer.wrap(payload(random, 500)));
    await().atMost(Duration.ofSeconds(10)).until(() -> storage.heldCount() == 1);

    TreeMap<Long, byte[]> recovered = new TreeMap<>();
    ObjectWriteAheadLog current = started(options(2), recovered);
    assertRecords(recovered, acknowledged);
    acknowledged.putAll(appendAll(current, random, 5)); // same offsets as the late record, newer epoch

    storage.release();
    assertThatThrownBy(() -> late.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(WalFencedException.class);
    assertThat(batchKeys()).anyMatch(k -> k.epoch() == 1 && k.offset() >= 12); // it did land

    TreeMap<Long, byte[]> third = new TreeMap<>();
    started(options(3), third);
    assertRecords(third, acknowledged);
    await().atMost(Duration.ofSeconds(10))
        .until(() -> batchKeys().stream().noneMatch(k -> k.epoch() == 1 && k.offset() >= 12));
  }

  @Test
  void aWriterWhoseEpochIsAlreadyFencedCannotRecover() {
    // Goal: recovery with an epoch lower than an existing fence fails with WalFencedException.
    started(options(5), new TreeMap<>());
    ObjectWriteAheadLog stale = log(options(4));
    assertThatThrownBy(stale::recover).isInstanceOf(WalFencedException.class).hasMessageContaining("epoch 5");
  }

  @Test
  void objectsAreSelfDescribingAndListInOffsetOrder() {
    // Goal: batch keys encode node, epoch and offsets (zero-padded) so a listing is in log order, and each object's header matches its key.
    Random random = new Random(22);
    ObjectWriteAheadLog wal = started(options(7), new TreeMap<>());
    TreeMap<Long, byte[]> appended = appendAll(wal, random, 40);
    List<WalObjectFormat.ParsedKey> batches = batchKeys();
    assertThat(batches).hasSizeGreaterThan(3);
    long next = 0;
    for (WalObjectFormat.ParsedKey key : batches) {
      assertThat(key.key()).matches("wal/1/\\d{20}/\\d{20}-\\d{20}");
      assertThat(key.offset()).isEqualTo(next);
      WalObjectFormat.Batch batch = WalObjectFormat.decodeBatch(key.key(), storage.get(key.key()).join());
      assertThat(batch.nodeId()).isEqualTo(1);
      assertThat(batch.epoch()).isEqualTo(7);
      assertThat(batch.firstOffset()).isEqualTo(key.offset());
      assertThat(batch.lastOffset()).isEqualTo(key.lastOffset());
      next = key.lastOffset() + 1;
    }
    assertThat(next).isEqualTo(appended.lastKey() + 1);
  }

  @Test
  void trimmedObjectsAreDeletedInTheBackground() {
    // Goal: after trim(x), batch objects wholly below x and older trim markers disappear; the rest is recovered exactly.
    Random random = new Random(23);
    ObjectWalOptions oneRecordPerObject = options(1).withBatching(60_000, 1);
    ObjectWriteAheadLog wal = started(oneRecordPerObject, new TreeMap<>());
    TreeMap<Long, byte[]> appended = appendAll(wal, random, 20);
    assertThat(batchKeys()).hasSize(20);
    wal.trim(8).join();
    await().atMost(Duration.ofSeconds(10)).until(() -> batchKeys().size() == 12);
    assertThat(batchKeys()).allMatch(k -> k.lastOffset() >= 8);
    wal.trim(15).join();
    await().atMost(Duration.ofSeconds(10)).until(() -> batchKeys().size() == 5 && keys("wal/1/trim/").size() == 1);
    TreeMap<Long, byte[]> recovered = new TreeMap<>();
    started(oneRecordPerObject.withEpoch(2), recovered);
    assertRecords(recovered, new TreeMap<>(appended.tailMap(15L)));
  }

  @Test
  void aCorruptObjectEndsRecoveryBeforeItWithoutThrowing() {
    // Goal: a damaged batch object is reported and recovery returns exactly the records before it.
    Random random = new Random(24);
    ObjectWalOptions oneRecordPerObject = options(1).withBatching(60_000, 1);
    ObjectWriteAheadLog wal = started(oneRecordPerObject, new TreeMap<>());
    TreeMap<Long, byte[]> appended = appendAll(wal, random, 10);
    wal.close();
    WalObjectFormat.ParsedKey victim = batchKeys().get(6);
    ByteBuffer bytes = storage.get(victim.key()).join();
    byte[] copy = new byte[bytes.remaining()];
    bytes.get(copy);
    copy[copy.length - 1] ^= 0x10;
    storage.delegate.put(victim.key(), ByteBuffer.wrap(copy)).join();
    TreeMap<Long, byte[]> recovered = new TreeMap<>();
    ObjectWriteAheadLog next = started(oneRecordPerObject.withEpoch(2), recovered);
    assertRecords(recovered, new TreeMap<>(appended.headMap(victim.offset())));
    assertThat(join(next.append(ByteBuffer.wrap(new byte[] {9})))).isEqualTo(victim.offset());
  }

  @Test
  void batchesAreCutBySizeAndByInterval() {
    // Goal: a batch is uploaded as soon as it reaches the size bound; a partial batch waits for the interval (here: until close flushes it).
    ObjectWalOptions bySize = options(1).withBatching(3_600_000, 1000);
    ObjectWriteAheadLog wal = started(bySize, new TreeMap<>());
    List<CompletableFuture<Long>> futures = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      futures.add(wal.append(ByteBuffer.wrap(new byte[300])));
    }
    for (int i = 0; i < 8; i++) {
      assertThat(join(futures.get(i))).isEqualTo(i);
    }
    assertThat(batchKeys()).hasSize(2); // 4 x 300 bytes reach 1000
    assertThat(futures.get(8)).isNotDone();
    wal.close();
    assertThat(futures.get(9).join()).isEqualTo(9);

    ObjectWriteAheadLog timed = started(options(2).withBatching(20, 1 << 20), new TreeMap<>());
    assertThat(join(timed.append(ByteBuffer.wrap(new byte[10])))).isEqualTo(10);
  }

  @Test
  void unuploadedBytesAreBoundedAndFurtherAppendsAreRefusedAtOnce() {
    // Goal: when uploads stall, appends beyond maxPendingBytes are refused at once (already failed, WalFullException)
    // without blocking the caller, the accepted ones wait, and all go through once uploads resume.
    storage.hold(key -> key.startsWith("wal/1/" + WalObjectFormat.pad(1) + "/"));
    ObjectWriteAheadLog wal = started(new ObjectWalOptions(1, 1, 2, 1024, 4, 4096, 300), new TreeMap<>());
    List<CompletableFuture<Long>> stalled = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      stalled.add(wal.append(ByteBuffer.wrap(new byte[1024])));
    }
    CompletableFuture<Long> rejected = wal.append(ByteBuffer.wrap(new byte[1024]));
    assertThat(rejected).as("refused before append returned").isCompletedExceptionally();
    assertThatThrownBy(rejected::join).hasCauseInstanceOf(WalFullException.class);
    assertThat(stalled).noneMatch(CompletableFuture::isDone);
    storage.release();
    for (int i = 0; i < 4; i++) {
      assertThat(join(stalled.get(i))).isEqualTo(i);
    }
    assertThat(join(wal.append(ByteBuffer.wrap(new byte[1024])))).isEqualTo(4);
  }

  @Test
  void failedUploadsAreRetriedUntilTheStoreAnswersAndNothingIsLost() {
    // Goal: a store outage longer than any fixed retry budget never fails the log: the batch is retried with
    // backoff until a PUT succeeds, then it and every later append are acknowledged, in order, and recovered.
    ObjectWriteAheadLog wal = started(options(1), new TreeMap<>());
    storage.failNextPuts(2);
    assertThat(join(wal.append(ByteBuffer.wrap(new byte[10])))).isEqualTo(0);
    storage.failNextPuts(5); // more than the 4 attempts the log used to give a batch before failing for good
    CompletableFuture<Long> during = wal.append(ByteBuffer.wrap(new byte[10]));
    await().atMost(Duration.ofSeconds(30)).until(() -> storage.failuresLeft() == 0);
    assertThat(join(during)).isEqualTo(1);
    assertThat(join(wal.append(ByteBuffer.wrap(new byte[1])))).isEqualTo(2);
    assertThat(wal.healthy()).isTrue();
  }
}
