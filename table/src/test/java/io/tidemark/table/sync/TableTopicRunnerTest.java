package io.tidemark.table.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.table.config.TableTopicConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Goal: the runner commits on its interval, so records produced while it runs become visible in a fresh table scan. */
class TableTopicRunnerTest {

  @TempDir
  Path dir;

  @Test
  void recordsProducedWhileRunningBecomeVisibleWithinTheInterval() throws Exception {
    // goal: freshness — each batch appears in the table within a few commit intervals, and the status counts it
    TestTopic topic = new TestTopic("live", 2);
    AtomicInteger ids = new AtomicInteger();
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    try (TestWarehouse warehouse = new TestWarehouse(dir)) {
      TableTopicConfig config = TableTopicConfig.parse(Map.of(TableTopicConfig.ENABLE, "true",
          TableTopicConfig.COMMIT_INTERVAL_MS, "1000", TableTopicConfig.CONVERT_VALUE_TYPE, "string"));
      TableSync sync = new TableSync(topic.name, config, warehouse.freshCatalog(), topic.sources(),
          () -> "c" + ids.incrementAndGet(), 1 << 20, 64L << 20);
      TableTopicRunner runner = new TableTopicRunner(sync, config.commitIntervalMs(), scheduler, System::currentTimeMillis);
      topic.append(0, List.of(new SimpleRecord(1L, null, "a".getBytes(StandardCharsets.UTF_8))));
      runner.start();
      await().atMost(Duration.ofSeconds(20)).ignoreExceptionsInstanceOf(org.apache.iceberg.exceptions.NoSuchTableException.class)
          .until(() -> warehouse.readAll(sync.tableIdentifier()).size() == 1);

      topic.append(1, List.of(new SimpleRecord(2L, null, "b".getBytes(StandardCharsets.UTF_8)),
          new SimpleRecord(3L, null, "c".getBytes(StandardCharsets.UTF_8))));
      await().atMost(Duration.ofSeconds(20)).until(() -> warehouse.readAll(sync.tableIdentifier()).size() == 3);
      runner.stop();

      TableTopicRunner.Status s = runner.status();
      assertThat(s.state()).isEqualTo("STOPPED");
      assertThat(s.rowsWritten()).isEqualTo(3);
      assertThat(s.commits()).isGreaterThanOrEqualTo(2);
      assertThat(s.lastCommitMs()).isPositive();
      assertThat(s.lastError()).isEmpty();
    } finally {
      scheduler.shutdownNow();
      scheduler.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS);
    }
  }
}
