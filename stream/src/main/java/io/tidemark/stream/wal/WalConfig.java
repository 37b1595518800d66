package io.tidemark.stream.wal;

import io.tidemark.stream.config.ConfigKey;
import java.util.List;

/** The write-ahead log settings, declared once; {@link WriteAheadLogs#create} reads them. */
public final class WalConfig {

  private static final long MIB = 1024L * 1024;

  public static final ConfigKey<String> TYPE = ConfigKey.choice("wal.type", "block",
      "Which WAL the broker writes: 'block' (a preallocated file or raw device written with O_DIRECT) or"
          + " 'object' (batches written as objects to the object storage, for nodes without a durable disk).",
      "block", "object");

  public static final ConfigKey<String> PATH = ConfigKey.string("wal.path", "data/wal/wal.log",
      "Block WAL: the file (created and preallocated on first start) or raw block device.");

  public static final ConfigKey<Long> CAPACITY_BYTES = ConfigKey.longKey("wal.capacity.bytes", 2048 * MIB,
      "Block WAL: total size including two header blocks; fixed when the file is formatted. When it is full,"
          + " appends wait for uploads to trim it. Its live part is at most the log cache's unuploaded bytes plus"
          + " wal.max.pending.bytes, so at least stream.cache.size.bytes + wal.max.pending.bytes lets the cache, not"
          + " the WAL, bound unuploaded data (smaller works, with earlier and smaller uploads).")
      .validate(ConfigKey.between(16 * MIB, Long.MAX_VALUE));

  public static final ConfigKey<Boolean> DIRECT_IO = ConfigKey.bool("wal.direct.io", true,
      "Block WAL: open the file with O_DIRECT. Where the filesystem refuses it the WAL falls back to buffered"
          + " writes with fdatasync (one warning); false selects that fallback explicitly.");

  public static final ConfigKey<Integer> BLOCK_SIZE_BYTES = ConfigKey.integer("wal.block.size.bytes", 0,
      "Block WAL: I/O alignment and header slot size; 0 uses the filesystem's block size (4096 when unknown).")
      .validate(v -> v == 0 || (v >= 512 && v <= 65536 && Integer.bitCount(v) == 1)
          ? null : "must be 0 or a power of two between 512 and 65536");

  public static final ConfigKey<Long> MAX_PENDING_BYTES = ConfigKey.longKey("wal.max.pending.bytes", 64 * MIB,
      "Bytes accepted but not yet durable (block WAL: queued for the writer; object WAL: not yet uploaded)."
          + " Beyond it the WAL refuses further records at once (nothing written) and the stream engine holds its"
          + " appends until earlier ones are durable; appending never blocks. Every such record also holds its log"
          + " cache reservation, so the smaller of this and stream.cache.size.bytes binds (default: a quarter of the"
          + " cache).")
      .validate(ConfigKey.between(MIB, Long.MAX_VALUE));

  public static final ConfigKey<Long> APPEND_TIMEOUT_MS = ConfigKey.longKey("wal.append.timeout.ms", 10_000,
      "Object WAL: how long a clean shutdown waits for outstanding batch uploads (appends themselves never time"
          + " out: an accepted record waits for space or for the object storage as long as it takes).")
      .validate(ConfigKey.between(0L, 3_600_000L));

  public static final ConfigKey<Long> OBJECT_BATCH_INTERVAL_MS = ConfigKey.longKey("wal.object.batch.interval.ms", 250,
      "Object WAL: the longest a record waits before its batch is uploaded.")
      .validate(ConfigKey.between(1L, 60_000L));

  public static final ConfigKey<Long> OBJECT_BATCH_MAX_BYTES = ConfigKey.longKey("wal.object.batch.max.bytes", 8 * MIB,
      "Object WAL: a batch is uploaded as soon as it holds this many bytes.")
      .validate(ConfigKey.between(1024L, 1024 * MIB));

  public static final ConfigKey<Integer> OBJECT_MAX_INFLIGHT = ConfigKey.integer("wal.object.max.inflight", 50,
      "Object WAL: most batch uploads in flight at once (and most parallel reads during recovery).")
      .validate(ConfigKey.between(1, 1000));

  public static final List<ConfigKey<?>> KEYS = List.of(TYPE, PATH, CAPACITY_BYTES, DIRECT_IO, BLOCK_SIZE_BYTES,
      MAX_PENDING_BYTES, APPEND_TIMEOUT_MS, OBJECT_BATCH_INTERVAL_MS, OBJECT_BATCH_MAX_BYTES, OBJECT_MAX_INFLIGHT);

  private WalConfig() {}
}
