package io.tidemark.bench.storage;

import io.tidemark.stream.wal.BlockWalOptions;
import io.tidemark.stream.wal.BlockWriteAheadLog;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One cell of the storage benchmark for A/B comparisons of the block WAL: the raw 4 KiB and 1 MiB
 * baselines (optional), the 16 KiB × 64 appenders closed loop and the open loop at half its rate,
 * with the group commits and syncs each took. To compare two builds, run it alternately with each
 * build's stream jar first on the class path (same machine, back to back) and take medians:
 *
 * <pre>
 *   java -cp "bench/target/tidemark-bench.jar:A/tidemark-stream.jar:bench/target/lib/*" \
 *       io.tidemark.bench.storage.WalCell DIR LABEL CELL_MS [raw]
 * </pre>
 */
public final class WalCell {

  private WalCell() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      throw new IllegalArgumentException("usage: WalCell DIR LABEL CELL_MS [raw]");
    }
    Path dir = Path.of(args[0]);
    String label = args[1];
    long cellNanos = Long.parseLong(args[2]) * 1_000_000;
    Files.createDirectories(dir);
    if (args.length > 3 && args[3].equals("raw")) {
      Measurement r4 = RawDirectWrites.run(dir, 4096, 256L << 20, 300_000_000L, cellNanos).measurement();
      Measurement r1 = RawDirectWrites.run(dir, 1 << 20, 256L << 20, 300_000_000L, cellNanos).measurement();
      System.out.printf("RESULT %s raw 4 KiB p50 %.0f µs; raw 1 MiB %.1f MB/s%n", label, r4.p50Micros(),
          r1.megabytesPerSecond());
    }
    Path file = dir.resolve("wal-" + label + ".log");
    Files.deleteIfExists(file);
    try (BlockWriteAheadLog wal = new BlockWriteAheadLog(BlockWalOptions.of(file, 1L << 30, 1, 1))) {
      wal.recover();
      wal.start();
      WalAppends appends = new WalAppends(wal);
      long g0 = wal.groupCommits();
      long s0 = wal.syncs();
      Measurement closed = appends.closedLoop(16 * 1024, 64, 500_000_000L, cellNanos);
      long g1 = wal.groupCommits();
      long s1 = wal.syncs();
      Measurement half = appends.openLoop(16 * 1024, closed.opsPerSecond() / 2, cellNanos, 4096);
      System.out.printf("RESULT %s 16 KiB x 64: %.1f MB/s p50 %.0f µs p99 %.0f µs, %d groups, %d syncs"
              + " | half rate %.0f/s: p50 %.0f µs p99 %.0f µs, %d groups, %d syncs (load %s)%n",
          label, closed.megabytesPerSecond(), closed.p50Micros(), closed.p99Micros(), g1 - g0, s1 - s0,
          half.opsPerSecond(), half.p50Micros(), half.p99Micros(), wal.groupCommits() - g1, wal.syncs() - s1,
          StorageBenchmark.loadAverage());
    } finally {
      Files.deleteIfExists(file);
    }
  }
}
