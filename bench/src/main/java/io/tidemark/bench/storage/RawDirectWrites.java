package io.tidemark.bench.storage;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.SplittableRandom;

/**
 * The hardware baseline: sequential writes of one block size to a preallocated file opened with
 * {@code O_DIRECT}, each followed by {@code fdatasync} ({@code force(false)}), from one thread,
 * with a buffer aligned to the filesystem block size. Wraps around inside the file so that every
 * write overwrites allocated space, as a preallocated WAL does. Where the filesystem refuses
 * {@code O_DIRECT} it measures buffered writes + fdatasync and says so.
 */
final class RawDirectWrites {

  /** The result, and whether O_DIRECT was in effect. */
  record Result(Measurement measurement, boolean direct) {}

  private RawDirectWrites() {}

  static Result run(Path dir, int blockBytes, long fileBytes, long warmupNanos, long durationNanos) throws IOException {
    Files.createDirectories(dir);
    Path file = dir.resolve("raw-" + blockBytes + ".dat");
    preallocate(file, fileBytes);
    int align = (int) Math.max(512, Files.getFileStore(dir).getBlockSize());
    ByteBuffer buffer = ByteBuffer.allocateDirect(blockBytes + align).alignedSlice(align);
    byte[] random = new byte[blockBytes];
    new SplittableRandom(blockBytes).nextBytes(random);
    buffer.put(random).flip();
    boolean direct = true;
    FileChannel channel;
    try {
      channel = FileChannel.open(file, StandardOpenOption.WRITE, ExtendedOpenOption.DIRECT);
    } catch (IOException | UnsupportedOperationException e) {
      direct = false;
      channel = FileChannel.open(file, new OpenOption[] {StandardOpenOption.WRITE});
    }
    long blocks = fileBytes / blockBytes;
    LatencyRecorder latencies = new LatencyRecorder(1 << 20);
    long written = 0;
    long ops = 0;
    try (FileChannel ch = channel) {
      long now = System.nanoTime();
      long start = now + warmupNanos;
      long deadline = start + durationNanos;
      while (now < deadline) {
        long position = (ops % blocks) * blockBytes;
        buffer.position(0).limit(blockBytes);
        long before = now;
        while (buffer.hasRemaining()) {
          ch.write(buffer, position + buffer.position());
        }
        ch.force(false);
        now = System.nanoTime();
        ops++;
        if (before >= start) {
          latencies.record(now - before);
          written += blockBytes;
        }
      }
      double seconds = (now - start) / 1e9;
      return new Result(new Measurement(written / seconds, latencies.count() / seconds, latencies.percentileMicros(0.50),
          latencies.percentileMicros(0.99)), direct);
    } finally {
      Files.deleteIfExists(file);
    }
  }

  private static void preallocate(Path file, long bytes) throws IOException {
    ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      for (long pos = 0; pos < bytes; pos += zeros.capacity()) {
        zeros.clear().limit((int) Math.min(zeros.capacity(), bytes - pos));
        while (zeros.hasRemaining()) {
          ch.write(zeros, pos + zeros.position());
        }
      }
      ch.force(true);
    }
  }
}
