package io.tidemark.table.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.table.config.TableTopicConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: measure single-thread conversion throughput (read from the partition log, convert, write
 * Parquet, commit) for ~1 KiB JSON records; prints MiB/s. Full tier only: {@code mvn -Pfull}.
 */
@Tag("full")
class ConversionThroughputTest {

  @TempDir
  Path dir;

  @Test
  void jsonRecordsOfAboutOneKibPerSecond() throws Exception {
    // goal: every produced record lands; the rate is reported for docs/benchmarks.md
    int records = "full".equals(System.getProperty("tidemark.test.scale")) ? 200_000 : 20_000;
    TestTopic topic = new TestTopic("bench", 1);
    String pad = "x".repeat(900);
    long bytes = 0;
    List<SimpleRecord> batch = new ArrayList<>();
    for (int i = 0; i < records; i++) {
      String json = "{\"id\": " + i + ", \"user\": \"u" + (i % 1000) + "\", \"score\": " + (i * 0.5) + ", \"ok\": true, \"pad\": \""
          + pad + "\"}";
      byte[] v = json.getBytes(StandardCharsets.UTF_8);
      bytes += v.length;
      batch.add(new SimpleRecord(1_700_000_000_000L + i, ("k" + i).getBytes(StandardCharsets.UTF_8), v));
      if (batch.size() == 500) {
        topic.append(0, batch);
        batch.clear();
      }
    }
    if (!batch.isEmpty()) {
      topic.append(0, batch);
    }
    AtomicInteger ids = new AtomicInteger();
    try (TestWarehouse warehouse = new TestWarehouse(dir)) {
      for (String type : List.of("raw", "json")) {
        copyAll(warehouse, topic, type, type + "_warmup", ids); // JIT warm-up on its own table
        long start = System.nanoTime();
        long rows = copyAll(warehouse, topic, type, type + "_measured", ids);
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("table conversion %s: %d records, %.1f MiB in %.2f s = %.1f MiB/s, %.0f records/s (1 thread)%n",
            type, rows, bytes / 1048576.0, seconds, bytes / 1048576.0 / seconds, rows / seconds);
        assertThat(rows).isEqualTo(records);
      }
    }
  }

  private static long copyAll(TestWarehouse warehouse, TestTopic topic, String type, String table, AtomicInteger ids) {
    TableSync sync = new TableSync(topic.name, TableTopicConfig.parse(Map.of(TableTopicConfig.ENABLE, "true",
        TableTopicConfig.CONVERT_VALUE_TYPE, type, TableTopicConfig.TABLE_NAME, table)), warehouse.freshCatalog(),
        topic.sources(), () -> "c" + ids.incrementAndGet(), 64 << 20, 64L << 20);
    long rows = 0;
    TableSync.RoundResult r;
    do {
      r = sync.runRound();
      rows += r.rows();
    } while (r.moreData());
    return rows;
  }
}
