package io.tidemark.stream.wal;

import java.nio.file.Path;
import java.time.Clock;
import java.util.Objects;

/**
 * What a {@link BlockWriteAheadLog} needs: where, how big, how it writes, its bounds and who it is.
 * {@link WriteAheadLogs#create} builds one from {@link WalConfig}; tests and benchmarks may build
 * one directly (small capacities are allowed here, the configuration key enforces its minimum).
 *
 * @param path the WAL file (created and preallocated when missing) or a raw block device
 * @param capacityBytes total size including the two header blocks; used only when formatting
 * @param directIo open with {@code O_DIRECT}; false forces buffered I/O + {@code fdatasync}
 * @param blockSizeBytes I/O alignment; 0 = the filesystem's block size (4096 when unknown)
 * @param maxPendingBytes bound on bytes accepted but not yet durable; beyond it {@code append} refuses
 *     records at once with {@link WalFullException} (nothing written)
 * @param writerId the node owning this WAL; a file written by another node is refused
 * @param epoch the owner's current epoch; a file already opened with a higher epoch is refused
 * @param clock wall clock for the format id
 */
public record BlockWalOptions(
    Path path,
    long capacityBytes,
    boolean directIo,
    int blockSizeBytes,
    long maxPendingBytes,
    long writerId,
    long epoch,
    Clock clock) {

  public BlockWalOptions {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(clock, "clock");
    if (blockSizeBytes != 0 && (blockSizeBytes < 512 || Integer.bitCount(blockSizeBytes) != 1)) {
      throw new IllegalArgumentException("blockSizeBytes must be 0 or a power of two >= 512, got " + blockSizeBytes);
    }
    if (maxPendingBytes < 64 * 1024) {
      throw new IllegalArgumentException("maxPendingBytes must be at least 64 KiB, got " + maxPendingBytes);
    }
  }

  /** Options with the defaults of {@link WalConfig} for everything but the path, capacity and identity. */
  public static BlockWalOptions of(Path path, long capacityBytes, long writerId, long epoch) {
    return new BlockWalOptions(path, capacityBytes, true, 0, WalConfig.MAX_PENDING_BYTES.defaultValue(), writerId, epoch,
        Clock.systemUTC());
  }

  public BlockWalOptions withDirectIo(boolean direct) {
    return new BlockWalOptions(path, capacityBytes, direct, blockSizeBytes, maxPendingBytes, writerId, epoch, clock);
  }

  public BlockWalOptions withEpoch(long newEpoch) {
    return new BlockWalOptions(path, capacityBytes, directIo, blockSizeBytes, maxPendingBytes, writerId, newEpoch, clock);
  }

  public BlockWalOptions withWriterId(long newWriterId) {
    return new BlockWalOptions(path, capacityBytes, directIo, blockSizeBytes, maxPendingBytes, newWriterId, epoch, clock);
  }

  public BlockWalOptions withMaxPendingBytes(long bytes) {
    return new BlockWalOptions(path, capacityBytes, directIo, blockSizeBytes, bytes, writerId, epoch, clock);
  }
}
