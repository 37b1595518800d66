package io.tidemark.stream.metadata;

import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;
import java.util.List;

/**
 * Settings of the standalone metadata authority ({@link MemoryStreamMetadata}).
 *
 * @param objectDeleteDelayMs how long an object marked for deletion stays readable before it is deleted
 * @param objectDeleteBatchMax the most objects deleted per lifecycle tick (one batched delete request)
 * @param prepareCountMax the most object ids one prepare may reserve
 */
public record StreamMetadataConfig(long objectDeleteDelayMs, int objectDeleteBatchMax, int prepareCountMax) {

  public static final ConfigKey<Long> OBJECT_DELETE_DELAY_MS = ConfigKey.longKey("metadata.object.delete.delay.ms",
      60_000L, "Delay between marking an object for deletion (compacted, trimmed, expired) and deleting it, so "
          + "that readers holding older metadata can finish.").validate(ConfigKey.between(0L, 7L * 24 * 3600 * 1000));
  public static final ConfigKey<Integer> OBJECT_DELETE_BATCH_MAX = ConfigKey.integer("metadata.object.delete.batch.max",
      1000, "Most objects deleted per lifecycle tick, in one batched delete.").validate(ConfigKey.between(1, 100_000));
  public static final ConfigKey<Integer> PREPARE_COUNT_MAX = ConfigKey.integer("metadata.object.prepare.count.max",
      10_000, "Most object ids one prepare request may reserve.").validate(ConfigKey.between(1, 1_000_000));

  public static final List<ConfigKey<?>> KEYS = List.of(OBJECT_DELETE_DELAY_MS, OBJECT_DELETE_BATCH_MAX, PREPARE_COUNT_MAX);

  public StreamMetadataConfig {
    if (objectDeleteDelayMs < 0 || objectDeleteBatchMax < 1 || prepareCountMax < 1) {
      throw new IllegalArgumentException("invalid metadata config: delete delay " + objectDeleteDelayMs
          + " ms, delete batch " + objectDeleteBatchMax + ", prepare max " + prepareCountMax);
    }
  }

  public static StreamMetadataConfig from(Settings settings) {
    return new StreamMetadataConfig(settings.get(OBJECT_DELETE_DELAY_MS), settings.get(OBJECT_DELETE_BATCH_MAX),
        settings.get(PREPARE_COUNT_MAX));
  }

  public static StreamMetadataConfig defaults() {
    return from(Settings.empty());
  }
}
