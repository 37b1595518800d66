package io.tidemark.table.maintenance;

import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;
import java.util.List;

/**
 * The node-level bounds of built-in table maintenance: how often a table topic's coordinator runs
 * it, and how much one run may do (bytes and files rewritten, time). What runs for each table
 * (on/off, file size, snapshot retention, orphan age) is the topic's own config
 * ({@link io.tidemark.table.config.TableTopicConfig.Maintenance}). Immutable.
 *
 * @param intervalMs time between the end of one run and the start of the next, per table
 * @param maxBytesPerRun most bytes of data and delete files one run reads to rewrite (at least one bin is always allowed)
 * @param maxFilesPerRun most data files one run rewrites, and most orphan files it deletes
 * @param maxDurationMs time after which a run starts no new step or bin (what is in flight finishes)
 * @param minInputFiles a bin of small files is rewritten only when it holds at least this many files
 * @param deleteFilesTrigger a commit that leaves at least this many delete files in the table starts a run
 *     at once instead of at the interval (0: never)
 */
public record MaintenanceConfig(long intervalMs, long maxBytesPerRun, int maxFilesPerRun, long maxDurationMs,
    int minInputFiles, int deleteFilesTrigger) {

  public static final ConfigKey<Long> INTERVAL_MS = ConfigKey.longKey("table.maintenance.interval.ms", 300_000,
      "Time between two maintenance runs of one table topic (compaction, delete-file rewrite, manifest rewrite, "
          + "snapshot expiry, orphan removal; docs/table-topics.md#maintenance). Runs on the node coordinating the topic.")
      .validate(ConfigKey.between(1_000L, 7 * 24 * 3_600_000L));
  public static final ConfigKey<Long> MAX_BYTES_PER_RUN = ConfigKey.longKey("table.maintenance.max.bytes.per.run",
      512L << 20, "Most bytes of data and delete files one maintenance run reads to rewrite; the rest waits for the "
          + "next run.").validate(ConfigKey.between(1L << 20, 1L << 40));
  public static final ConfigKey<Integer> MAX_FILES_PER_RUN = ConfigKey.integer("table.maintenance.max.files.per.run",
      2_000, "Most data files one maintenance run rewrites, and most orphan files it deletes.")
      .validate(ConfigKey.between(2, 1_000_000));
  public static final ConfigKey<Long> MAX_DURATION_MS = ConfigKey.longKey("table.maintenance.max.duration.ms", 120_000,
      "Time after which a maintenance run starts no new step or rewrite (the one in flight finishes).")
      .validate(ConfigKey.between(100L, 3_600_000L));
  public static final ConfigKey<Integer> MIN_INPUT_FILES = ConfigKey.integer("table.maintenance.min.input.files", 5,
      "A group of small data files of one table partition is compacted only when it holds at least this many files "
          + "(files with deletes to apply are rewritten regardless).").validate(ConfigKey.between(2, 100_000));

  public static final ConfigKey<Integer> DELETE_FILES_TRIGGER = ConfigKey.integer(
      "table.maintenance.delete.files.trigger", 32,
      "When a commit leaves at least this many delete files (equality, position, deletion vectors) in a table, its "
          + "maintenance runs at once instead of at the next interval (at most one such run per "
          + TableMaintenance.EARLY_RUN_MIN_GAP_MS / 1000 + " s), so that upsert and CDC tables committed every second "
          + "stay cheap to read. 0 turns this off.").validate(ConfigKey.between(0, 1_000_000));

  public static final List<ConfigKey<?>> KEYS = List.of(INTERVAL_MS, MAX_BYTES_PER_RUN, MAX_FILES_PER_RUN,
      MAX_DURATION_MS, MIN_INPUT_FILES, DELETE_FILES_TRIGGER);

  public MaintenanceConfig {
    if (intervalMs <= 0 || maxBytesPerRun <= 0 || maxFilesPerRun < 2 || maxDurationMs <= 0 || minInputFiles < 2
        || deleteFilesTrigger < 0) {
      throw new IllegalArgumentException("maintenance bounds must be positive (files and input files at least 2, the "
          + "delete-file trigger at least 0): " + intervalMs + ", " + maxBytesPerRun + ", " + maxFilesPerRun + ", "
          + maxDurationMs + ", " + minInputFiles + ", " + deleteFilesTrigger);
    }
  }

  /** Bounds without the delete-file trigger (runs only at the interval). */
  public MaintenanceConfig(long intervalMs, long maxBytesPerRun, int maxFilesPerRun, long maxDurationMs,
      int minInputFiles) {
    this(intervalMs, maxBytesPerRun, maxFilesPerRun, maxDurationMs, minInputFiles, 0);
  }

  public static MaintenanceConfig from(Settings settings) {
    return new MaintenanceConfig(settings.get(INTERVAL_MS), settings.get(MAX_BYTES_PER_RUN),
        settings.get(MAX_FILES_PER_RUN), settings.get(MAX_DURATION_MS), settings.get(MIN_INPUT_FILES),
        settings.get(DELETE_FILES_TRIGGER));
  }

  /** The declared defaults. */
  public static MaintenanceConfig defaults() {
    return new MaintenanceConfig(INTERVAL_MS.defaultValue(), MAX_BYTES_PER_RUN.defaultValue(),
        MAX_FILES_PER_RUN.defaultValue(), MAX_DURATION_MS.defaultValue(), MIN_INPUT_FILES.defaultValue(),
        DELETE_FILES_TRIGGER.defaultValue());
  }
}
