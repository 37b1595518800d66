package io.tidemark.stream.engine;

import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.ConfigException;
import io.tidemark.stream.config.Settings;
import java.util.List;

/**
 * Settings of the stream engine of one node ({@link StreamEngine}). Declared once here; the
 * server lists {@link #KEYS} in the configuration reference.
 */
public record StreamEngineConfig(
    long cacheSizeBytes,
    long uploadThresholdBytes,
    long uploadIntervalMs,
    long objectSplitBytes,
    int objectBlockSizeBytes,
    long objectPartSizeBytes,
    long objectPrepareTtlMs,
    long appendWaitingMaxBytes,
    int uploadRetryMax,
    long uploadRetryBackoffMaxMs,
    int coldReadObjectsMax,
    long closeTimeoutMs,
    long appendStallMs) {

  private static final long MIB = 1024 * 1024;

  public static final ConfigKey<Long> CACHE_SIZE_BYTES = ConfigKey.longKey("stream.cache.size.bytes", 256 * MIB,
      "Memory for the log cache: every acknowledged batch not yet uploaded, plus recent uploaded batches for tail "
          + "reads. When full, appends wait for an upload to free space.")
      .validate(ConfigKey.between(1L, Long.MAX_VALUE));
  public static final ConfigKey<Long> UPLOAD_THRESHOLD_BYTES = ConfigKey.longKey("stream.upload.threshold.bytes",
      64 * MIB, "Upload to object storage once this many bytes are cached and not yet uploaded. At most half of "
          + "stream.cache.size.bytes.").validate(ConfigKey.between(1L, Long.MAX_VALUE));
  public static final ConfigKey<Long> UPLOAD_INTERVAL_MS = ConfigKey.longKey("stream.upload.interval.ms", 30_000L,
      "Upload whatever is cached and not yet uploaded at least this often, so that the WAL is trimmed on quiet nodes.")
      .validate(ConfigKey.between(1L, 24L * 3600 * 1000));
  public static final ConfigKey<Long> OBJECT_SPLIT_BYTES = ConfigKey.longKey("stream.object.split.bytes", 8 * MIB,
      "A stream with at least this many bytes in one upload gets its own stream object; smaller streams share one "
          + "stream-set object.").validate(ConfigKey.between(1L, Long.MAX_VALUE));
  public static final ConfigKey<Integer> OBJECT_BLOCK_SIZE_BYTES = ConfigKey.integer("stream.object.block.size.bytes",
      512 * 1024, "Target size of a data block inside an object (the unit of a ranged read).")
      .validate(ConfigKey.between(1024, 64 * 1024 * 1024));
  public static final ConfigKey<Long> OBJECT_PART_SIZE_BYTES = ConfigKey.longKey("stream.object.part.size.bytes",
      16 * MIB, "Objects larger than this are written with a multipart upload in parts of this size.")
      .validate(ConfigKey.between(1L, 5L * 1024 * MIB));
  public static final ConfigKey<Long> OBJECT_PREPARE_TTL_MS = ConfigKey.longKey("stream.object.prepare.ttl.ms",
      3_600_000L, "Time-to-live of reserved object ids; an upload not committed by then is deleted.")
      .validate(ConfigKey.between(1000L, 7L * 24 * 3600 * 1000));
  public static final ConfigKey<Long> APPEND_WAITING_MAX_BYTES = ConfigKey.longKey("stream.append.waiting.max.bytes",
      64 * MIB, "Appends waiting for log cache or WAL space may hold at most this many bytes; beyond it an append "
          + "is refused at once with AppendBackpressureException (nothing written, nothing assigned; the broker "
          + "answers a retriable error).").validate(ConfigKey.between(1L, Long.MAX_VALUE));
  public static final ConfigKey<Integer> UPLOAD_RETRY_MAX = ConfigKey.integer("stream.upload.retry.max", 30,
      "Attempts of one object write within an upload before that upload is reconciled with the metadata and "
          + "started again. Uploads themselves never give up while the node lives: a store outage holds appends "
          + "(backpressure) and they resume on their own.")
      .validate(ConfigKey.between(1, 1_000_000));
  public static final ConfigKey<Long> UPLOAD_RETRY_BACKOFF_MAX_MS = ConfigKey.longKey(
      "stream.upload.retry.backoff.max.ms", 10_000L, "Longest pause between upload attempts (doubling from 100 ms); "
          + "also how often a warning is logged while the object storage or the controller stays unreachable.")
      .validate(ConfigKey.between(1L, 600_000L));
  public static final ConfigKey<Long> APPEND_STALL_MS = ConfigKey.longKey("stream.append.stall.ms", 5_000L,
      "Readiness (/ready) turns false when appends are outstanding and none has been acknowledged for this long "
          + "(log cache and WAL full while uploads fail, a stuck disk), and true again with the next acknowledgement.")
      .validate(ConfigKey.between(1L, 3_600_000L));
  public static final ConfigKey<Integer> COLD_READ_OBJECTS_MAX = ConfigKey.integer("stream.cold.read.objects.max", 8,
      "Most objects located per metadata lookup of a cold read.").validate(ConfigKey.between(1, 1000));

  public static final ConfigKey<Long> CLOSE_TIMEOUT_MS = ConfigKey.longKey("stream.close.timeout.ms", 30_000L,
      "Longest a clean shutdown waits to upload what the WAL holds; data not uploaded by then stays in the WAL and is "
          + "recovered at the next start (so a node whose controller quorum is gone still stops promptly).")
      .validate(ConfigKey.between(0L, 3_600_000L));

  public static final List<ConfigKey<?>> KEYS = List.of(CACHE_SIZE_BYTES, UPLOAD_THRESHOLD_BYTES, UPLOAD_INTERVAL_MS,
      OBJECT_SPLIT_BYTES, OBJECT_BLOCK_SIZE_BYTES, OBJECT_PART_SIZE_BYTES, OBJECT_PREPARE_TTL_MS,
      APPEND_WAITING_MAX_BYTES, UPLOAD_RETRY_MAX, UPLOAD_RETRY_BACKOFF_MAX_MS, COLD_READ_OBJECTS_MAX, CLOSE_TIMEOUT_MS,
      APPEND_STALL_MS);

  /** Settings with the default shutdown wait and stall bound. */
  public StreamEngineConfig(long cacheSizeBytes, long uploadThresholdBytes, long uploadIntervalMs, long objectSplitBytes,
      int objectBlockSizeBytes, long objectPartSizeBytes, long objectPrepareTtlMs, long appendWaitingMaxBytes,
      int uploadRetryMax, long uploadRetryBackoffMaxMs, int coldReadObjectsMax) {
    this(cacheSizeBytes, uploadThresholdBytes, uploadIntervalMs, objectSplitBytes, objectBlockSizeBytes,
        objectPartSizeBytes, objectPrepareTtlMs, appendWaitingMaxBytes, uploadRetryMax, uploadRetryBackoffMaxMs,
        coldReadObjectsMax, CLOSE_TIMEOUT_MS.defaultValue(), APPEND_STALL_MS.defaultValue());
  }

  /** These settings with another readiness stall bound. */
  public StreamEngineConfig withAppendStallMs(long stallMs) {
    return new StreamEngineConfig(cacheSizeBytes, uploadThresholdBytes, uploadIntervalMs, objectSplitBytes,
        objectBlockSizeBytes, objectPartSizeBytes, objectPrepareTtlMs, appendWaitingMaxBytes, uploadRetryMax,
        uploadRetryBackoffMaxMs, coldReadObjectsMax, closeTimeoutMs, stallMs);
  }

  public StreamEngineConfig {
    if (uploadThresholdBytes > cacheSizeBytes / 2) {
      throw new ConfigException(UPLOAD_THRESHOLD_BYTES.name(), String.valueOf(uploadThresholdBytes),
          "must be at most half of " + CACHE_SIZE_BYTES.name() + " (" + cacheSizeBytes + ")");
    }
  }

  public static StreamEngineConfig from(Settings s) {
    return new StreamEngineConfig(s.get(CACHE_SIZE_BYTES), s.get(UPLOAD_THRESHOLD_BYTES), s.get(UPLOAD_INTERVAL_MS),
        s.get(OBJECT_SPLIT_BYTES), s.get(OBJECT_BLOCK_SIZE_BYTES), s.get(OBJECT_PART_SIZE_BYTES),
        s.get(OBJECT_PREPARE_TTL_MS), s.get(APPEND_WAITING_MAX_BYTES), s.get(UPLOAD_RETRY_MAX),
        s.get(UPLOAD_RETRY_BACKOFF_MAX_MS), s.get(COLD_READ_OBJECTS_MAX), s.get(CLOSE_TIMEOUT_MS),
        s.get(APPEND_STALL_MS));
  }

  public static StreamEngineConfig defaults() {
    return from(Settings.empty());
  }
}
