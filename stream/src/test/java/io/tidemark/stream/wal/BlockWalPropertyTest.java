package io.tidemark.stream.wal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tag;

/**
 * Property: for random sequences of appends, trims, clean restarts and crashes in the middle of
 * group commits, block WAL recovery returns exactly the acknowledged, untrimmed records (plus, after
 * a crash, a prefix of the appends that were in flight), byte-identical.
 *
 * <p>A crash is modelled without hooks: the file is copied while appends are being written, and the
 * log continues from the copy, which holds whatever reached the file at that moment.
 */
class BlockWalPropertyTest {

  sealed interface Op permits Append, Trim, Restart, Crash {}

  record Append(int count, int maxSize) implements Op {}

  record Trim(double fraction) implements Op {}

  record Restart() implements Op {}

  record Crash(int inFlight) implements Op {}

  @Provide
  Arbitrary<List<Op>> operations() {
    Arbitrary<Op> append = Combinators.combine(Arbitraries.integers().between(1, 12), Arbitraries.integers().between(1, 6000))
        .as(Append::new);
    Arbitrary<Op> trim = Arbitraries.doubles().between(0, 1).map(Trim::new);
    Arbitrary<Op> restart = Arbitraries.just(new Restart());
    Arbitrary<Op> crash = Arbitraries.integers().between(1, 10).map(Crash::new);
    return Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(6, append), net.jqwik.api.Tuple.of(2, trim),
        net.jqwik.api.Tuple.of(1, restart), net.jqwik.api.Tuple.of(2, crash))
        .list().ofMinSize(4).ofMaxSize(30);
  }

  @Property(tries = 20)
  void recoveryReturnsExactlyTheAcknowledgedUntrimmedRecords(@ForAll("operations") List<Op> ops,
      @ForAll boolean direct, @ForAll long seed) throws IOException {
    check(ops, direct, seed);
  }

  @Property(tries = 400)
  @Tag("full")
  void recoveryReturnsExactlyTheAcknowledgedUntrimmedRecordsManyRuns(@ForAll("operations") List<Op> ops,
      @ForAll boolean direct, @ForAll long seed) throws IOException {
    check(ops, direct, seed);
  }

  private void check(List<Op> ops, boolean direct, long seed) throws IOException {
    Path dir = Files.createTempDirectory("tidemark-wal-property");
    Random random = new Random(seed);
    long[] epoch = {0};
    int[] generation = {0};
    Harness h = new Harness(dir, direct, epoch, generation);
    try {
      TreeMap<Long, byte[]> live = new TreeMap<>();
      assertThat(h.reopen()).isEmpty();
      for (Op op : ops) {
        if (!(op instanceof Trim) && h.wal.trimWanted() && !live.isEmpty()) {
          // An accepted append waits for space until a trim (it never fails for lack of it). At most half of the
          // 248 KiB data area is in use when no trim is wanted, which holds any one operation (<= 80 KiB).
          h.wal.trim(live.lastKey() + 1).orTimeout(30, TimeUnit.SECONDS).join();
          live.clear();
        }
        switch (op) {
          case Append a -> appendAndAwait(h.wal, random, a, live);
          case Trim t -> {
            if (!live.isEmpty()) {
              List<Long> offsets = new ArrayList<>(live.keySet());
              long at = offsets.get((int) (t.fraction() * (offsets.size() - 1)));
              h.wal.trim(at).orTimeout(30, TimeUnit.SECONDS).join();
              live.headMap(at).clear();
            }
          }
          case Restart r -> assertSame(h.reopen(), live);
          case Crash c -> crash(h, random, c.inFlight(), live);
        }
      }
      assertSame(h.reopen(), live);
    } finally {
      h.close();
      try (Stream<Path> files = Files.walk(dir)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private static void appendAndAwait(WriteAheadLog wal, Random random, Append a, TreeMap<Long, byte[]> live) {
    List<CompletableFuture<Long>> futures = new ArrayList<>();
    List<byte[]> payloads = new ArrayList<>();
    for (int i = 0; i < a.count(); i++) {
      byte[] bytes = WriteAheadLogContractTest.payload(random, random.nextInt(a.maxSize()));
      payloads.add(bytes);
      futures.add(wal.append(ByteBuffer.wrap(bytes)));
    }
    for (int i = 0; i < futures.size(); i++) {
      try {
        live.put(futures.get(i).orTimeout(30, TimeUnit.SECONDS).join(), payloads.get(i));
      } catch (CompletionException e) {
        assertThat(e.getCause()).isInstanceOf(WalFullException.class); // not acknowledged: must not come back
      }
    }
  }

  private static void crash(Harness h, Random random, int inFlight, TreeMap<Long, byte[]> live) throws IOException {
    List<CompletableFuture<Long>> futures = new ArrayList<>();
    List<byte[]> payloads = new ArrayList<>();
    for (int i = 0; i < inFlight; i++) {
      byte[] bytes = WriteAheadLogContractTest.payload(random, random.nextInt(5000));
      payloads.add(bytes);
      futures.add(h.wal.append(ByteBuffer.wrap(bytes)));
    }
    Path image = h.snapshot(); // the "disk" at the moment of the crash
    TreeMap<Long, byte[]> inflight = new TreeMap<>();
    for (int i = 0; i < futures.size(); i++) {
      try {
        inflight.put(futures.get(i).orTimeout(30, TimeUnit.SECONDS).join(), payloads.get(i));
      } catch (CompletionException e) {
        assertThat(e.getCause()).isInstanceOf(WalFullException.class);
      }
    }
    Map<Long, byte[]> recovered = h.reopenFrom(image);
    // Every acknowledged record, then a prefix of the in-flight ones, nothing else.
    List<Long> expectedOrder = new ArrayList<>(live.keySet());
    expectedOrder.addAll(inflight.keySet());
    List<Long> got = new ArrayList<>(recovered.keySet());
    assertThat(got.size()).isGreaterThanOrEqualTo(live.size());
    assertThat(got).isEqualTo(expectedOrder.subList(0, got.size()));
    recovered.forEach((offset, bytes) -> assertThat(bytes).isEqualTo(live.containsKey(offset) ? live.get(offset) : inflight.get(offset)));
    live.clear();
    live.putAll(recovered);
  }

  private static void assertSame(Map<Long, byte[]> actual, TreeMap<Long, byte[]> expected) {
    assertThat(actual.keySet()).containsExactlyElementsOf(expected.keySet());
    expected.forEach((offset, bytes) -> assertThat(actual.get(offset)).isEqualTo(bytes));
  }

  /** The WAL under test and the file it lives in (which changes after a crash). */
  private static final class Harness {
    final Path dir;
    final boolean direct;
    final long[] epoch;
    final int[] generation;
    Path file;
    BlockWriteAheadLog wal;

    Harness(Path dir, boolean direct, long[] epoch, int[] generation) {
      this.dir = dir;
      this.direct = direct;
      this.epoch = epoch;
      this.generation = generation;
      this.file = dir.resolve("wal-0.log");
    }

    Map<Long, byte[]> reopen() {
      close();
      wal = new BlockWriteAheadLog(new BlockWalOptions(file, 256 * 1024, direct, 0, 64 * 1024, 1, ++epoch[0],
          Clock.systemUTC()));
      Map<Long, byte[]> recovered = WriteAheadLogContractTest.drain(wal.recover());
      wal.start();
      return recovered;
    }

    Path snapshot() throws IOException {
      Path image = dir.resolve("wal-" + (++generation[0]) + ".log");
      Files.copy(file, image);
      return image;
    }

    Map<Long, byte[]> reopenFrom(Path image) throws IOException {
      close();
      Files.delete(file);
      file = image;
      return reopen();
    }

    void close() {
      if (wal != null) {
        wal.close();
        wal = null;
      }
    }
  }
}
