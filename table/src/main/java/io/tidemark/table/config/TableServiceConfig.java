package io.tidemark.table.config;

import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;
import java.util.List;

/**
 * The server-level settings of the table topics on one node: whether the node runs them, the
 * catalog type (its other {@code table.catalog.*} keys pass through to Iceberg, see
 * {@link TableCatalogConfig}), and the bounds of one commit round. Immutable.
 *
 * @param enabled whether this node runs table-topic workers and coordinators
 * @param targetFileBytes a data file is rolled at this size (and at every commit)
 * @param maxBytesPerPartitionRound most bytes of one partition read in one round (more data: next round at once)
 * @param roundBudgetMs how long a worker prepares one round; unfinished partitions join the next round
 * @param replyWaitMs how long the coordinator waits for the workers' files before committing what arrived
 * @param scanIntervalMs how often the node looks for enabled, changed or disabled table topics
 * @param workerThreads how many threads convert one table topic's partitions led here in parallel
 */
public record TableServiceConfig(boolean enabled, long targetFileBytes, int maxBytesPerPartitionRound, long roundBudgetMs,
    long replyWaitMs, long scanIntervalMs, int workerThreads) {

  public static final ConfigKey<String> CATALOG_TYPE = ConfigKey.choice(TableCatalogConfig.TYPE, "jdbc",
      TableCatalogConfig.KEYS.get(0).doc(), "jdbc", "rest", "s3tables", "glue", "hive", "nessie");
  public static final ConfigKey<String> CATALOG_EMBEDDED_DB = ConfigKey.string(TableCatalogConfig.EMBEDDED_DB, "",
      TableCatalogConfig.KEYS.get(1).doc());
  public static final ConfigKey<Boolean> ENABLE = ConfigKey.bool("table.enable", true,
      "Runs the table topics (topics with table.topic.enable=true) on this node: workers for the partitions it leads "
          + "and the coordinators placed here.");
  public static final ConfigKey<Long> TARGET_FILE_BYTES = ConfigKey.longKey("table.writer.target.file.bytes", 64L << 20,
      "Size at which a Parquet data file of a table topic is rolled (files are also rolled at every commit).")
      .validate(ConfigKey.between(1L << 20, 1L << 30));
  public static final ConfigKey<Integer> MAX_BYTES_PER_PARTITION_ROUND = ConfigKey.integer(
      "table.round.max.bytes.per.partition", 16 << 20,
      "Most record bytes of one partition converted in one commit round; a partition with more goes on in the next "
          + "round at once.").validate(ConfigKey.between(64 << 10, 1 << 30));
  public static final ConfigKey<Long> ROUND_BUDGET_MS = ConfigKey.longKey("table.round.budget.ms", 10_000,
      "How long a worker may prepare one commit round; a partition not finished (or whose read does not answer) "
          + "by then joins the next round, so a slow partition never holds back the others longer.")
      .validate(ConfigKey.between(100L, 600_000L));
  public static final ConfigKey<Long> REPLY_WAIT_MS = ConfigKey.longKey("table.commit.reply.wait.ms", 30_000,
      "How long a table topic's coordinator waits for the workers' files of a round; what arrived by then is "
          + "committed and the late partitions join the next round. Keep it above table.round.budget.ms.")
      .validate(ConfigKey.between(100L, 3_600_000L));
  public static final ConfigKey<Long> SCAN_INTERVAL_MS = ConfigKey.longKey("table.topics.scan.interval.ms", 1_000,
      "How often the node checks topics for table.topic.* changes (enable, disable, reconfigure).")
      .validate(ConfigKey.between(10L, 600_000L));

  public static final ConfigKey<Integer> WORKER_THREADS = ConfigKey.integer("table.worker.threads", 4,
      "Threads that convert the partitions of one table topic this broker leads in parallel (the partitions are "
          + "dealt into this many groups; a topic with fewer partitions here uses fewer).")
      .validate(ConfigKey.between(1, 64));

  public static final List<ConfigKey<?>> KEYS = List.of(ENABLE, CATALOG_TYPE, CATALOG_EMBEDDED_DB, TARGET_FILE_BYTES,
      MAX_BYTES_PER_PARTITION_ROUND, ROUND_BUDGET_MS, REPLY_WAIT_MS, SCAN_INTERVAL_MS, WORKER_THREADS);

  public static TableServiceConfig from(Settings settings) {
    return new TableServiceConfig(settings.get(ENABLE), settings.get(TARGET_FILE_BYTES),
        settings.get(MAX_BYTES_PER_PARTITION_ROUND), settings.get(ROUND_BUDGET_MS), settings.get(REPLY_WAIT_MS),
        settings.get(SCAN_INTERVAL_MS), settings.get(WORKER_THREADS));
  }
}
