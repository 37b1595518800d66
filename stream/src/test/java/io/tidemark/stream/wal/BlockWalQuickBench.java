package io.tidemark.stream.wal;

import com.sun.nio.file.ExtendedOpenOption;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A quick, single-run comparison (not the real benchmark, which lives in bench/): block WAL append
 * throughput with 16 KiB records and 64 concurrent appenders versus raw sequential O_DIRECT 1 MiB
 * writes with fdatasync on the same filesystem.
 *
 * <p>Run: {@code java -cp <stream classpath> io.tidemark.stream.wal.BlockWalQuickBench /var/tmp/walbench 8}
 */
public final class BlockWalQuickBench {

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args.length > 0 ? args[0] : "/var/tmp/tidemark-walbench");
    int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 8;
    int appenders = args.length > 2 ? Integer.parseInt(args[2]) : 64;
    int recordBytes = args.length > 3 ? Integer.parseInt(args[3]) : 16 * 1024;
    Files.createDirectories(dir);
    long capacity = 512L << 20;
    System.out.printf("raw O_DIRECT 1 MiB + fdatasync: %.1f MB/s%n", raw(dir.resolve("raw.bin"), capacity, 1 << 20, seconds));
    System.out.printf("raw O_DIRECT 4 KiB + fdatasync: %.1f MB/s%n", raw(dir.resolve("raw4k.bin"), capacity, 4096, seconds));
    wal(dir.resolve("wal.log"), capacity, appenders, recordBytes, seconds);
    Files.deleteIfExists(dir.resolve("raw.bin"));
    Files.deleteIfExists(dir.resolve("raw4k.bin"));
    Files.deleteIfExists(dir.resolve("wal.log"));
  }

  private static double raw(Path file, long capacity, int writeBytes, int seconds) throws Exception {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
      for (long p = 0; p < capacity; p += zeros.capacity()) {
        ch.write(zeros.clear(), p);
      }
      ch.force(true);
    }
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, ExtendedOpenOption.DIRECT)) {
      ByteBuffer buffer = ByteBuffer.allocateDirect(writeBytes + 4096).alignedSlice(4096).limit(writeBytes).slice();
      long deadline = System.nanoTime() + seconds * 1_000_000_000L;
      long start = System.nanoTime();
      long written = 0;
      long position = 0;
      long[] latencies = new long[1 << 20];
      int n = 0;
      while (System.nanoTime() < deadline) {
        long t0 = System.nanoTime();
        buffer.clear();
        ch.write(buffer, position);
        ch.force(false);
        if (n < latencies.length) {
          latencies[n++] = System.nanoTime() - t0;
        }
        written += writeBytes;
        position = (position + writeBytes) % capacity;
      }
      double secs = (System.nanoTime() - start) / 1e9;
      Arrays.sort(latencies, 0, n);
      System.out.printf("  (%d writes, p50 %.2f ms, p99 %.2f ms)%n", n, latencies[n / 2] / 1e6, latencies[(int) (n * 0.99)] / 1e6);
      return written / secs / 1e6;
    }
  }

  private static void wal(Path file, long capacity, int appenders, int recordBytes, int seconds) throws Exception {
    BlockWalOptions options = BlockWalOptions.of(file, capacity, 1, 1).withMaxPendingBytes(64L << 20);
    try (BlockWriteAheadLog wal = new BlockWriteAheadLog(options)) {
      wal.recover();
      wal.start();
      System.out.printf("block WAL: direct I/O %s, block size %d%n", wal.directIo(), wal.blockSize());
      AtomicLong records = new AtomicLong();
      AtomicLong maxOffset = new AtomicLong();
      long deadline = System.nanoTime() + seconds * 1_000_000_000L;
      long[][] latencies = new long[appenders][200_000];
      int[] counts = new int[appenders];
      CountDownLatch done = new CountDownLatch(appenders);
      long start = System.nanoTime();
      for (int t = 0; t < appenders; t++) {
        int thread = t;
        Thread.ofPlatform().start(() -> {
          ByteBuffer record = ByteBuffer.allocate(recordBytes);
          try {
            while (System.nanoTime() < deadline) {
              long t0 = System.nanoTime();
              long offset = wal.append(record.duplicate()).join();
              if (counts[thread] < latencies[thread].length) {
                latencies[thread][counts[thread]++] = System.nanoTime() - t0;
              }
              maxOffset.accumulateAndGet(offset, Math::max);
              records.incrementAndGet();
            }
          } finally {
            done.countDown();
          }
        });
      }
      // Trim behind the writers, as the uploader would, keeping half the capacity live.
      while (done.getCount() > 0) {
        long keep = maxOffset.get() - capacity / 2;
        if (keep > 0) {
          wal.trim(keep).join();
        }
        done.await(50, java.util.concurrent.TimeUnit.MILLISECONDS);
      }
      double secs = (System.nanoTime() - start) / 1e9;
      long total = Arrays.stream(counts).sum();
      long[] all = new long[(int) total];
      int at = 0;
      for (int t = 0; t < appenders; t++) {
        System.arraycopy(latencies[t], 0, all, at, counts[t]);
        at += counts[t];
      }
      Arrays.sort(all);
      System.out.printf("block WAL %d appenders x %d B: %.1f MB/s, %d appends, p50 %.2f ms, p99 %.2f ms%n", appenders,
          recordBytes, records.get() * (double) recordBytes / secs / 1e6, records.get(), all[all.length / 2] / 1e6,
          all[(int) (all.length * 0.99)] / 1e6);
      System.out.printf("  %d group commits (%.0f KiB each), %d syncs%n", wal.groupCommits(),
          wal.writtenBytes() / 1024.0 / Math.max(1, wal.groupCommits()), wal.syncs());
    }
  }
}
