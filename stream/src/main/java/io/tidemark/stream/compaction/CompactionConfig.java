package io.tidemark.stream.compaction;

import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;
import java.util.List;

/**
 * Settings of compaction: how often the caller runs it, how much one run may take on (objects and
 * bytes, which also bound its memory: a run holds its inputs in memory), when a stream is split
 * out of a stream-set object, how large merged stream objects grow, and the layout of the objects
 * it writes. Declared once here; the server reads {@link #KEYS}.
 */
public record CompactionConfig(
    long intervalMs,
    int maxObjects,
    long maxBytes,
    long splitBytes,
    long forceSplitAgeMs,
    long streamObjectTargetBytes,
    int blockSizeBytes,
    long partSizeBytes,
    long prepareTtlMs,
    int maxConcurrentReads) {

  private static final long KIB = 1024;
  private static final long MIB = 1024 * KIB;

  public static final ConfigKey<Long> INTERVAL_MS = ConfigKey.longKey("stream.compaction.interval.ms", 300_000,
          "Time between two compaction runs of a node (the caller schedules runOnce()).")
      .validate(ConfigKey.between(1_000L, Long.MAX_VALUE));
  public static final ConfigKey<Integer> MAX_OBJECTS = ConfigKey.integer("stream.compaction.max.objects", 100,
          "Most input objects one compaction run replaces.")
      .validate(ConfigKey.between(2, 10_000));
  public static final ConfigKey<Long> MAX_BYTES = ConfigKey.longKey("stream.compaction.max.bytes", 256 * MIB,
          "Most input bytes one compaction run reads; a run holds them in memory. Larger objects are left alone.")
      .validate(ConfigKey.between(1L * MIB, 64L * 1024 * MIB));
  public static final ConfigKey<Long> SPLIT_BYTES = ConfigKey.longKey("stream.compaction.split.bytes", 8 * MIB,
          "A stream with at least this many bytes in one stream-set compaction run is split out into stream objects.")
      .validate(ConfigKey.between(1L, Long.MAX_VALUE));
  public static final ConfigKey<Long> FORCE_SPLIT_AGE_MS = ConfigKey.longKey("stream.compaction.force.split.age.ms",
          7_200_000, "Stream-set objects older than this are split entirely into stream objects when compacted.")
      .validate(ConfigKey.between(1L, Long.MAX_VALUE));
  public static final ConfigKey<Long> STREAM_OBJECT_TARGET_BYTES = ConfigKey.longKey(
          "stream.compaction.stream.object.target.bytes", 64 * MIB,
          "Consecutive stream objects of one stream are merged while the merged object stays at or below this size.")
      .validate(ConfigKey.between(1L, Long.MAX_VALUE));
  public static final ConfigKey<Integer> BLOCK_SIZE_BYTES = ConfigKey.integer("stream.compaction.block.size.bytes",
          512 * 1024, "Data block size of the objects compaction writes.")
      .validate(ConfigKey.between(1024, 64 * 1024 * 1024));
  public static final ConfigKey<Long> PART_SIZE_BYTES = ConfigKey.longKey("stream.compaction.part.size.bytes",
          16 * MIB, "Multipart upload part size of the objects compaction writes.")
      .validate(ConfigKey.between(1L * MIB, 5L * 1024 * MIB));
  public static final ConfigKey<Long> PREPARE_TTL_MS = ConfigKey.longKey("stream.compaction.prepare.ttl.ms", 3_600_000,
          "Lifetime of the object ids a run reserves; ids not committed by then are deleted by the controller.")
      .validate(ConfigKey.between(60_000L, Long.MAX_VALUE));
  public static final ConfigKey<Integer> MAX_CONCURRENT_READS = ConfigKey.integer(
          "stream.compaction.max.concurrent.reads", 4, "Input objects a compaction run reads at the same time.")
      .validate(ConfigKey.between(1, 256));

  public static final List<ConfigKey<?>> KEYS = List.of(INTERVAL_MS, MAX_OBJECTS, MAX_BYTES, SPLIT_BYTES,
      FORCE_SPLIT_AGE_MS, STREAM_OBJECT_TARGET_BYTES, BLOCK_SIZE_BYTES, PART_SIZE_BYTES, PREPARE_TTL_MS,
      MAX_CONCURRENT_READS);

  public static CompactionConfig from(Settings settings) {
    return new CompactionConfig(settings.get(INTERVAL_MS), settings.get(MAX_OBJECTS), settings.get(MAX_BYTES),
        settings.get(SPLIT_BYTES), settings.get(FORCE_SPLIT_AGE_MS), settings.get(STREAM_OBJECT_TARGET_BYTES),
        settings.get(BLOCK_SIZE_BYTES), settings.get(PART_SIZE_BYTES), settings.get(PREPARE_TTL_MS),
        settings.get(MAX_CONCURRENT_READS));
  }

  public static CompactionConfig defaults() {
    return from(Settings.empty());
  }
}
