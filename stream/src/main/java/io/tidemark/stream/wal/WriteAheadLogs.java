package io.tidemark.stream.wal;

import io.tidemark.stream.config.Settings;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.ScheduledExecutorService;

/** Builds the write-ahead log that {@link WalConfig#TYPE} selects. */
public final class WriteAheadLogs {

  private WriteAheadLogs() {}

  /**
   * The configured WAL, not yet recovered.
   *
   * @param storage the object storage (used by the object WAL only)
   * @param nodeId the owning node: the block WAL refuses a file of another node; the object WAL writes under its prefix
   * @param epoch the node's epoch: a higher epoch fences older writers
   * @param clock wall clock (block WAL: its format id; object WAL: how long close waits)
   * @param scheduler runs the object WAL's batch timer and background deletes; owned by the caller
   */
  public static WriteAheadLog create(Settings settings, ObjectStorage storage, int nodeId, long epoch, Clock clock,
      ScheduledExecutorService scheduler) {
    return switch (settings.get(WalConfig.TYPE)) {
      case "object" -> new ObjectWriteAheadLog(objectOptions(settings, nodeId, epoch), storage, scheduler, clock);
      default -> new BlockWriteAheadLog(blockOptions(settings, nodeId, epoch, clock));
    };
  }

  public static BlockWalOptions blockOptions(Settings settings, int nodeId, long epoch, Clock clock) {
    return new BlockWalOptions(Path.of(settings.get(WalConfig.PATH)), settings.get(WalConfig.CAPACITY_BYTES),
        settings.get(WalConfig.DIRECT_IO), settings.get(WalConfig.BLOCK_SIZE_BYTES),
        settings.get(WalConfig.MAX_PENDING_BYTES), nodeId, epoch, clock);
  }

  public static ObjectWalOptions objectOptions(Settings settings, int nodeId, long epoch) {
    return new ObjectWalOptions(nodeId, epoch, settings.get(WalConfig.OBJECT_BATCH_INTERVAL_MS),
        settings.get(WalConfig.OBJECT_BATCH_MAX_BYTES), settings.get(WalConfig.OBJECT_MAX_INFLIGHT),
        settings.get(WalConfig.MAX_PENDING_BYTES), settings.get(WalConfig.APPEND_TIMEOUT_MS));
  }
}
