package io.tidemark.stream.wal;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The file (or raw block device) under a {@link BlockWriteAheadLog}: positioned, block-aligned
 * reads and writes plus a data sync.
 *
 * <p>Opened with {@code O_DIRECT} when asked and the filesystem accepts it; otherwise (or when
 * direct I/O is switched off) through the page cache, logging one warning. In both modes every
 * write is followed by {@link #sync()} ({@code fdatasync}) before anything is acknowledged, so
 * the durability guarantee is the same; direct I/O only avoids the double copy and cache churn.
 * All I/O uses buffers from {@link #allocate(int)} and positions/lengths that are multiples of
 * {@link #blockSize()}, which is what {@code O_DIRECT} requires.
 *
 * <p>Threading: not thread-safe; owned by the WAL's writer (and by recovery before that).
 */
final class WalFile implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(WalFile.class);
  static final int DEFAULT_BLOCK_SIZE = 4096;

  private final Path path;
  private final FileChannel channel;
  private final int blockSize;
  private final boolean direct;

  private WalFile(Path path, FileChannel channel, int blockSize, boolean direct) {
    this.path = path;
    this.channel = channel;
    this.blockSize = blockSize;
    this.direct = direct;
  }

  /**
   * Opens {@code path}, creating and preallocating a regular file of {@code capacityBytes} (written
   * with zeros, so later direct writes do not allocate) when it does not exist or is empty.
   *
   * @param blockSizeBytes alignment; 0 means the filesystem's block size ({@code FileStore.getBlockSize()}, else 4096)
   */
  static WalFile open(Path path, long capacityBytes, int blockSizeBytes, boolean directIo) throws IOException {
    Path parent = path.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    boolean regular = !Files.exists(path) || Files.isRegularFile(path);
    int blockSize = blockSizeBytes > 0 ? blockSizeBytes : detectBlockSize(path);
    if (regular && (!Files.exists(path) || Files.size(path) == 0)) {
      preallocate(path, capacityBytes, blockSize);
    }
    if (directIo) {
      FileChannel channel = null;
      try {
        channel = FileChannel.open(path, options(true));
        ByteBuffer probe = ByteBuffer.allocateDirect(2 * blockSize).alignedSlice(blockSize).limit(blockSize);
        channel.read(probe, 0);
        return new WalFile(path, channel, blockSize, true);
      } catch (IOException | UnsupportedOperationException e) {
        if (channel != null) {
          channel.close();
        }
        LOG.warn("O_DIRECT refused for WAL {} ({}); falling back to buffered I/O with fdatasync after every write;"
            + " set wal.direct.io=false to silence this", path, e.toString());
      }
    }
    return new WalFile(path, FileChannel.open(path, options(false)), blockSize, false);
  }

  private static OpenOption[] options(boolean direct) {
    List<OpenOption> options = new ArrayList<>(List.of(StandardOpenOption.READ, StandardOpenOption.WRITE));
    if (direct) {
      options.add(ExtendedOpenOption.DIRECT);
    }
    return options.toArray(OpenOption[]::new);
  }

  private static int detectBlockSize(Path path) {
    try {
      Path probe = Files.exists(path) ? path : path.toAbsolutePath().getParent();
      long size = Files.getFileStore(probe).getBlockSize();
      return size >= 512 && size <= 65536 && Long.bitCount(size) == 1 ? (int) size : DEFAULT_BLOCK_SIZE;
    } catch (IOException | UnsupportedOperationException e) {
      return DEFAULT_BLOCK_SIZE;
    }
  }

  private static void preallocate(Path path, long capacityBytes, int blockSize) throws IOException {
    try (FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      ByteBuffer zeros = ByteBuffer.allocateDirect((int) Math.min(capacityBytes, 1 << 20));
      long position = 0;
      while (position < capacityBytes) {
        zeros.clear().limit((int) Math.min(zeros.capacity(), capacityBytes - position));
        while (zeros.hasRemaining()) {
          position += channel.write(zeros, position);
        }
      }
      channel.force(true);
    }
    if (capacityBytes % blockSize != 0) {
      LOG.warn("WAL capacity {} is not a multiple of the block size {}; the remainder is unused", capacityBytes, blockSize);
    }
  }

  /** A direct buffer of {@code size} bytes whose address is aligned to the block size. */
  ByteBuffer allocate(int size) {
    return ByteBuffer.allocateDirect(size + blockSize).alignedSlice(blockSize).limit(size).slice();
  }

  /** Writes all of {@code src} at {@code position} (both block-aligned). */
  void write(long position, ByteBuffer src) throws IOException {
    long at = position;
    while (src.hasRemaining()) {
      at += channel.write(src, at);
    }
  }

  /** Fills {@code dst} from {@code position}; bytes past the end of the file read as zeros. */
  void read(long position, ByteBuffer dst) throws IOException {
    long at = position;
    while (dst.hasRemaining()) {
      int n = channel.read(dst, at);
      if (n < 0) {
        while (dst.hasRemaining()) {
          dst.put((byte) 0);
        }
        return;
      }
      at += n;
    }
  }

  /** Makes every completed write durable ({@code fdatasync}). */
  void sync() throws IOException {
    channel.force(false);
  }

  int blockSize() {
    return blockSize;
  }

  boolean direct() {
    return direct;
  }

  Path path() {
    return path;
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }
}
