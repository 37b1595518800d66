package io.tidemark.stream.wal;

import static io.tidemark.stream.wal.WriteAheadLogContractTest.drain;
import static io.tidemark.stream.wal.WriteAheadLogContractTest.join;
import static io.tidemark.stream.wal.WriteAheadLogContractTest.payload;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Block WAL recovery against damaged files: it never throws on bad contents and never returns bad records. */
class BlockWriteAheadLogTest {

  static final int SCALE_FUZZ_ROUNDS = "full".equals(System.getProperty("tidemark.test.scale")) ? 400 : 40;

  @TempDir
  Path dir;
  private long epoch;
  private final List<BlockWriteAheadLog> opened = new ArrayList<>();

  @AfterEach
  void closeAll() {
    opened.forEach(BlockWriteAheadLog::close);
  }

  private BlockWalOptions options(long capacity) {
    return new BlockWalOptions(dir.resolve("wal.log"), capacity, true, 0, 256 * 1024, 1, ++epoch,
        Clock.systemUTC());
  }

  private BlockWriteAheadLog open(BlockWalOptions options) {
    BlockWriteAheadLog wal = new BlockWriteAheadLog(options);
    opened.add(wal);
    return wal;
  }

  /** Opens, recovers (returning the records) and starts. */
  private Map<Long, byte[]> reopen(BlockWriteAheadLog[] holder, long capacity) {
    if (holder[0] != null) {
      holder[0].close();
    }
    holder[0] = open(options(capacity));
    Map<Long, byte[]> recovered = drain(holder[0].recover());
    holder[0].start();
    return recovered;
  }

  private static TreeMap<Long, byte[]> appendEach(WriteAheadLog wal, Random random, int count, int maxSize) {
    TreeMap<Long, byte[]> appended = new TreeMap<>();
    for (int i = 0; i < count; i++) {
      byte[] bytes = payload(random, 1 + random.nextInt(maxSize));
      appended.put(join(wal.append(ByteBuffer.wrap(bytes))), bytes);
    }
    return appended;
  }

  private long physical(BlockWriteAheadLog wal, long logical) {
    return 2L * wal.blockSize() + logical % wal.dataCapacityBytes();
  }

  private void writeAt(long position, byte[] bytes) throws IOException {
    try (RandomAccessFile file = new RandomAccessFile(dir.resolve("wal.log").toFile(), "rw")) {
      file.seek(position);
      file.write(bytes);
    }
  }

  private byte[] readAt(long position, int length) throws IOException {
    try (RandomAccessFile file = new RandomAccessFile(dir.resolve("wal.log").toFile(), "r")) {
      byte[] bytes = new byte[length];
      file.seek(position);
      file.readFully(bytes);
      return bytes;
    }
  }

  private void flipBit(long position, int bit) throws IOException {
    byte[] b = readAt(position, 1);
    b[0] ^= (byte) (1 << bit);
    writeAt(position, b);
  }

  private static void assertRecords(Map<Long, byte[]> actual, Map<Long, byte[]> expected) {
    assertThat(actual.keySet()).containsExactlyElementsOf(expected.keySet());
    expected.forEach((offset, bytes) -> assertThat(actual.get(offset)).as("record %d", offset).isEqualTo(bytes));
  }

  private static TreeMap<Long, byte[]> below(TreeMap<Long, byte[]> records, long offset) {
    return new TreeMap<>(records.headMap(offset));
  }

  @Test
  void aFlippedBitInARecordStopsRecoveryRightBeforeIt() throws IOException {
    // Goal: a bit flip in a record's payload or frame header ends recovery cleanly at that record; later writes resume there.
    BlockWriteAheadLog[] wal = new BlockWriteAheadLog[1];
    reopen(wal, 1 << 20);
    TreeMap<Long, byte[]> appended = appendEach(wal[0], new Random(10), 20, 3000);
    long victim = new ArrayList<>(appended.keySet()).get(12);
    wal[0].close();
    flipBit(physical(wal[0], victim) + BlockRecordFrame.HEADER_BYTES + 3, 5);
    assertRecords(reopen(wal, 1 << 20), below(appended, victim));

    long next = join(wal[0].append(ByteBuffer.wrap(new byte[] {42})));
    assertThat(next).isEqualTo(victim);
    TreeMap<Long, byte[]> expected = below(appended, victim);
    expected.put(next, new byte[] {42});
    assertRecords(reopen(wal, 1 << 20), expected);

    long headerVictim = new ArrayList<>(appended.keySet()).get(5);
    wal[0].close();
    flipBit(physical(wal[0], headerVictim) + 17, 0); // inside the frame's "next" field
    assertRecords(reopen(wal, 1 << 20), below(appended, headerVictim));
  }

  @Test
  void aTruncatedFinalWriteIsDroppedWhole() throws IOException {
    // Goal: when the last group commit reached the disk only partly (its final block is missing), recovery returns everything before it.
    BlockWriteAheadLog[] wal = new BlockWriteAheadLog[1];
    reopen(wal, 1 << 20);
    Random random = new Random(11);
    TreeMap<Long, byte[]> appended = appendEach(wal[0], random, 10, 2000);
    byte[] big = payload(random, 10_000);
    long last = join(wal[0].append(ByteBuffer.wrap(big)));
    wal[0].close();
    long lastBlock = physical(wal[0], last) + 2L * wal[0].blockSize();
    writeAt(lastBlock, new byte[wal[0].blockSize()]);
    assertRecords(reopen(wal, 1 << 20), appended);
  }

  @Test
  void randomGarbageAfterTheLastRecordIsIgnoredAndOverwritten() throws IOException {
    // Goal: garbage past the end of the log never surfaces, and appends after recovery replace it.
    BlockWriteAheadLog[] wal = new BlockWriteAheadLog[1];
    reopen(wal, 1 << 20);
    Random random = new Random(12);
    TreeMap<Long, byte[]> appended = appendEach(wal[0], random, 15, 3000);
    long last = appended.lastKey();
    long end = (last + BlockRecordFrame.HEADER_BYTES + appended.get(last).length + 4095) / 4096 * 4096;
    wal[0].close();
    writeAt(physical(wal[0], end), payload(random, 64 * 1024));
    assertRecords(reopen(wal, 1 << 20), appended);
    appended.putAll(appendEach(wal[0], random, 3, 3000));
    assertRecords(reopen(wal, 1 << 20), appended);
  }

  @Test
  void aStaleRecordFromAnEarlierLapAfterTheLastOneIsNotReturned() {
    // Goal: after the log wraps, intact records of the previous lap that follow the newest record are recognised by their offset and skipped.
    long capacity = 128 * 1024;
    BlockWriteAheadLog[] wal = new BlockWriteAheadLog[1];
    reopen(wal, capacity);
    Random random = new Random(13);
    long data = wal[0].dataCapacityBytes();
    TreeMap<Long, byte[]> lap = new TreeMap<>();
    while (lap.isEmpty() || lap.lastKey() + 8192 < data) {
      lap.putAll(appendEach(wal[0], random, 1, 2000)); // one block each: the first lap fills with intact records
      wal[0].trim(lap.lastKey()).orTimeout(10, TimeUnit.SECONDS).join();
    }
    TreeMap<Long, byte[]> live = new TreeMap<>(lap.tailMap(lap.lastKey()));
    live.putAll(appendEach(wal[0], random, 3, 2000));
    assertThat(live.lastKey()).as("the log wrapped").isGreaterThanOrEqualTo(data);
    // The block after the newest record holds an intact record of lap one (offset smaller by the capacity).
    assertRecords(reopen(wal, capacity), live);
  }

  @Test
  void leftoversOfATornWriteAfterAShorterNewWriteAreNotReturned() throws IOException {
    // Goal: records of a torn group commit that a later, shorter write did not overwrite never extend the log (session check).
    BlockWriteAheadLog[] wal = new BlockWriteAheadLog[1];
    reopen(wal, 1 << 20);
    Random random = new Random(14);
    TreeMap<Long, byte[]> appended = appendEach(wal[0], random, 3, 1000);
    long last = appended.lastKey();
    long end = (last + BlockRecordFrame.HEADER_BYTES + appended.get(last).length + 4095) / 4096 * 4096;
    wal[0].close();
    BlockWalHeader header = newestHeader();
    // Forge the torn batch the crashed session would have left: three records, the first one damaged.
    ByteBuffer torn = ByteBuffer.allocate(3 * 4096);
    long second = end + 4096;
    BlockRecordFrame.encode(torn, header.formatId(), end, second, header.sequence(),
        ByteBuffer.wrap(payload(random, 4096 - BlockRecordFrame.HEADER_BYTES)), 0);
    BlockRecordFrame.encode(torn, header.formatId(), second, second + 144, header.sequence(),
        ByteBuffer.wrap(payload(random, 100)), 0);
    BlockRecordFrame.encode(torn, header.formatId(), second + 144, second + 4096, header.sequence(),
        ByteBuffer.wrap(payload(random, 100)), BlockRecordFrame.FLAG_BATCH_END);
    torn.put(100, (byte) (torn.get(100) ^ 1));
    writeAt(physical(wal[0], end), torn.array());
    assertRecords(reopen(wal, 1 << 20), appended);
    // The new session writes one block at 'end'; the forged second record now follows it with a matching offset.
    appended.put(join(wal[0].append(ByteBuffer.wrap(new byte[] {7}))), new byte[] {7});
    assertRecords(reopen(wal, 1 << 20), appended);
  }

  @Test
  void aCorruptedHeaderSlotFallsBackToTheOther() throws IOException {
    // Goal: when the newest header slot is damaged, recovery uses the older one and still returns every live record.
    BlockWriteAheadLog[] wal = new BlockWriteAheadLog[1];
    reopen(wal, 1 << 20);
    Random random = new Random(15);
    TreeMap<Long, byte[]> appended = appendEach(wal[0], random, 10, 2000);
    wal[0].trim(new ArrayList<>(appended.keySet()).get(5)).orTimeout(10, TimeUnit.SECONDS).join();
    appended.putAll(appendEach(wal[0], random, 5, 2000));
    wal[0].close();
    BlockWalHeader newest = newestHeader();
    int slot = slotOf(newest);
    writeAt((long) slot * 4096 + 60, new byte[] {1, 2, 3, 4});
    BlockWalHeader older = newestHeader();
    assertThat(older.sequence()).isLessThan(newest.sequence());
    // The older header has the older trim point: the records it still covers are intact, so they come back too.
    assertRecords(reopen(wal, 1 << 20), new TreeMap<>(appended.tailMap(older.trimOffset())));
  }

  @Test
  void aLogOfAnotherWriterIsRefusedWithAClearErrorAndLeftUnchanged() throws IOException {
    // Goal: a header written by another node id fails recovery with a message naming both ids; the file is not modified.
    BlockWriteAheadLog[] wal = new BlockWriteAheadLog[1];
    reopen(wal, 1 << 20);
    appendEach(wal[0], new Random(16), 5, 1000);
    wal[0].close();
    byte[] before = Files.readAllBytes(dir.resolve("wal.log"));
    BlockWriteAheadLog other = open(options(1 << 20).withWriterId(2));
    assertThatThrownBy(other::recover).isInstanceOf(WalException.class)
        .hasMessageContaining("belongs to writer (node) 1").hasMessageContaining("not to this node 2");
    assertThat(Files.readAllBytes(dir.resolve("wal.log"))).isEqualTo(before);
  }

  @Test
  void aLogOpenedWithAHigherEpochFencesAnOlderWriter() {
    // Goal: once a writer with epoch E recovered the log, a writer with a lower epoch is refused.
    BlockWriteAheadLog[] wal = new BlockWriteAheadLog[1];
    epoch = 10;
    reopen(wal, 1 << 20);
    wal[0].close();
    BlockWriteAheadLog stale = open(options(1 << 20).withEpoch(3));
    assertThatThrownBy(stale::recover).isInstanceOf(WalFencedException.class).hasMessageContaining("epoch 11");
  }

  @Test
  void aFileWithoutAnyValidHeaderIsRefusedNotReformatted() throws IOException {
    // Goal: garbage in both header slots gives a clear error and the file keeps its bytes.
    BlockWriteAheadLog[] wal = new BlockWriteAheadLog[1];
    reopen(wal, 1 << 20);
    appendEach(wal[0], new Random(17), 3, 1000);
    wal[0].close();
    writeAt(0, payload(new Random(18), 8192));
    byte[] before = Files.readAllBytes(dir.resolve("wal.log"));
    BlockWriteAheadLog damaged = open(options(1 << 20));
    assertThatThrownBy(damaged::recover).isInstanceOf(WalException.class).hasMessageContaining("no valid header");
    assertThat(Files.readAllBytes(dir.resolve("wal.log"))).isEqualTo(before);
  }

  @Test
  void tooLargeRecordsAreRejectedAndChangeNothing() {
    // Goal: a record larger than the WAL accepts fails at once with a message giving the limit.
    BlockWriteAheadLog[] wal = new BlockWriteAheadLog[1];
    reopen(wal, 1 << 20);
    CompletableFuture<Long> f = wal[0].append(ByteBuffer.allocate((int) wal[0].maxRecordBytes() + 1));
    assertThatThrownBy(f::join).hasCauseInstanceOf(WalException.class).hasMessageContaining("largest record");
    assertThat(reopen(wal, 1 << 20)).isEmpty();
  }

  @Test
  void randomDamageNeverThrowsAndYieldsAnIntactPrefix() throws IOException {
    // Goal: whatever bytes of the data area are damaged, recovery does not throw and returns a prefix of what was written, byte-identical.
    Random random = new Random(19);
    System.out.println("randomDamage seed 19, rounds " + SCALE_FUZZ_ROUNDS);
    for (int round = 0; round < SCALE_FUZZ_ROUNDS; round++) {
      Files.deleteIfExists(dir.resolve("wal.log"));
      BlockWriteAheadLog[] wal = new BlockWriteAheadLog[1];
      reopen(wal, 256 * 1024);
      TreeMap<Long, byte[]> appended = new TreeMap<>();
      List<CompletableFuture<Long>> futures = new ArrayList<>();
      List<byte[]> payloads = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        byte[] bytes = payload(random, random.nextInt(3000));
        payloads.add(bytes);
        futures.add(wal[0].append(ByteBuffer.wrap(bytes)));
      }
      for (int i = 0; i < futures.size(); i++) {
        appended.put(join(futures.get(i)), payloads.get(i));
      }
      long dataBytes = wal[0].dataCapacityBytes();
      wal[0].close();
      int damages = 1 + random.nextInt(3);
      for (int d = 0; d < damages; d++) {
        long at = 2L * 4096 + (long) (random.nextDouble() * Math.min(dataBytes, appended.lastKey() + 8192));
        switch (random.nextInt(3)) {
          case 0 -> flipBit(at, random.nextInt(8));
          case 1 -> writeAt(at, payload(random, 1 + random.nextInt(5000)));
          default -> writeAt(at, new byte[1 + random.nextInt(5000)]);
        }
      }
      Map<Long, byte[]> recovered = reopen(wal, 256 * 1024);
      List<Long> expectedOrder = new ArrayList<>(appended.keySet());
      assertThat(new ArrayList<>(recovered.keySet())).isEqualTo(expectedOrder.subList(0, recovered.size()));
      recovered.forEach((offset, bytes) -> assertThat(bytes).isEqualTo(appended.get(offset)));
      join(wal[0].append(ByteBuffer.wrap(new byte[] {1}))); // and the log is writable again
      wal[0].close();
    }
  }

  private BlockWalHeader newestHeader() throws IOException {
    BlockWalHeader a = BlockWalHeader.decode(ByteBuffer.wrap(readAt(0, 4096)));
    BlockWalHeader b = BlockWalHeader.decode(ByteBuffer.wrap(readAt(4096, 4096)));
    if (a == null) {
      return b;
    }
    return b == null || a.sequence() > b.sequence() ? a : b;
  }

  private int slotOf(BlockWalHeader header) throws IOException {
    return header.equals(BlockWalHeader.decode(ByteBuffer.wrap(readAt(0, 4096)))) ? 0 : 1;
  }

  @Test
  void appendsTakeTheBytesBetweenPositionAndLimitOfAnyBufferWithoutMovingItAndOneGroupIsOneWriteAndOneSync() {
    // Goal: the WAL keeps a reference instead of copying (the one copy is into its aligned write buffer), so it
    // must read exactly [position, limit) of heap, read-only and direct buffers and leave the caller's buffer as it
    // was; and a group of appends costs one write and at most one sync, not one per append.
    BlockWriteAheadLog[] wal = new BlockWriteAheadLog[1];
    reopen(wal, 4L << 20);
    Random random = new Random(17);
    byte[] heap = payload(random, 5000);
    ByteBuffer heapBuffer = ByteBuffer.wrap(heap, 100, 4000); // position 100, limit 4100
    ByteBuffer readOnly = ByteBuffer.wrap(payload(random, 3000)).asReadOnlyBuffer().position(7);
    ByteBuffer direct = ByteBuffer.allocateDirect(2000).put(payload(random, 2000)).flip().position(1).limit(1999);
    TreeMap<Long, byte[]> expected = new TreeMap<>();
    List<CompletableFuture<Long>> futures = new ArrayList<>();
    List<byte[]> contents = new ArrayList<>();
    for (ByteBuffer b : List.of(heapBuffer, readOnly, direct)) {
      byte[] bytes = new byte[b.remaining()];
      b.duplicate().get(bytes);
      contents.add(bytes);
      int position = b.position();
      int limit = b.limit();
      futures.add(wal[0].append(b));
      assertThat(b.position()).isEqualTo(position);
      assertThat(b.limit()).isEqualTo(limit);
    }
    for (int i = 0; i < futures.size(); i++) {
      expected.put(join(futures.get(i)), contents.get(i));
    }
    assertThat(wal[0].syncs()).isLessThanOrEqualTo(wal[0].groupCommits());
    long groupsBefore = wal[0].groupCommits();
    long syncsBefore = wal[0].syncs();
    List<CompletableFuture<Long>> many = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      byte[] bytes = payload(random, 1 + random.nextInt(300));
      CompletableFuture<Long> f = wal[0].append(ByteBuffer.wrap(bytes));
      many.add(f.thenApply(offset -> {
        synchronized (expected) {
          expected.put(offset, bytes);
        }
        return offset;
      }));
    }
    many.forEach(WriteAheadLogContractTest::join);
    long groups = wal[0].groupCommits() - groupsBefore;
    assertThat(groups).as("200 appends queued at once go out in fewer groups").isLessThan(200);
    assertThat(wal[0].syncs() - syncsBefore).as("at most one sync per group").isLessThanOrEqualTo(groups);
    Map<Long, byte[]> recovered = reopen(wal, 4L << 20);
    assertThat(recovered.keySet()).containsExactlyElementsOf(expected.keySet());
    expected.forEach((offset, bytes) -> assertThat(recovered.get(offset)).isEqualTo(bytes));
  }
}
