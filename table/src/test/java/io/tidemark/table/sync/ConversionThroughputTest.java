package io.tidemark.table.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.convert.AvroSchemaSource;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: measure single-thread conversion throughput (read from the partition log, convert, write
 * Parquet, commit) for ~1 KiB JSON records (raw and schemaless json) and ~1 KiB framed Avro records
 * with a nested record (by_schema_id; the schema source is in-process, as after the first lookup
 * through the registry client's cache), and ~1 KiB JSON records into an upsert table keyed by
 * {@code id}, each id written 4 times (equality and position deletes); prints MiB/s. Full tier only: {@code mvn -Pfull}.
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
    TestTopic avroTopic = new TestTopic("bench_avro", 1);
    long avroBytes = 0;
    for (int i = 0; i < records; i++) {
      GenericData.Record ctx = new GenericData.Record(AVRO.getField("ctx").schema());
      ctx.put("page", "/p/" + (i % 100));
      ctx.put("ref", i % 3 == 0 ? null : "r" + i);
      byte[] v = TestRegistry.framedAvro(1, AVRO, Map.of("id", (long) i, "user", "u" + (i % 1000), "score", i * 0.5,
          "ok", true, "ctx", ctx, "pad", pad));
      avroBytes += v.length;
      batch.add(new SimpleRecord(1_700_000_000_000L + i, ("k" + i).getBytes(StandardCharsets.UTF_8), v));
      if (batch.size() == 500) {
        avroTopic.append(0, batch);
        batch.clear();
      }
    }
    if (!batch.isEmpty()) {
      avroTopic.append(0, batch);
    }
    // upsert: the same records keyed by id, each id written 4 times (position deletes within the round)
    TestTopic upsertTopic = new TestTopic("bench_upsert", 1);
    long upsertBytes = 0;
    for (int i = 0; i < records; i++) {
      int id = i % (records / 4);
      String json = "{\"id\": " + id + ", \"user\": \"u" + (i % 1000) + "\", \"score\": " + (i * 0.5)
          + ", \"ok\": true, \"pad\": \"" + pad + "\"}";
      byte[] v = json.getBytes(StandardCharsets.UTF_8);
      upsertBytes += v.length;
      batch.add(new SimpleRecord(1_700_000_000_000L + i, ("k" + id).getBytes(StandardCharsets.UTF_8), v));
      if (batch.size() == 500) {
        upsertTopic.append(0, batch);
        batch.clear();
      }
    }
    if (!batch.isEmpty()) {
      upsertTopic.append(0, batch);
    }
    AtomicInteger ids = new AtomicInteger();
    try (TestWarehouse warehouse = new TestWarehouse(dir)) {
      for (String type : List.of("raw", "json", "by_schema_id", "json_upsert")) {
        TestTopic source = type.equals("by_schema_id") ? avroTopic : type.equals("json_upsert") ? upsertTopic : topic;
        long size = type.equals("by_schema_id") ? avroBytes : type.equals("json_upsert") ? upsertBytes : bytes;
        copyAll(warehouse, source, type, type + "_warmup", ids); // JIT warm-up on its own table
        long start = System.nanoTime();
        long rows = copyAll(warehouse, source, type, type + "_measured", ids);
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("table conversion %s: %d records, %.1f MiB in %.2f s = %.1f MiB/s, %.0f records/s (1 thread)%n",
            type, rows, size / 1048576.0, seconds, size / 1048576.0 / seconds, rows / seconds);
        assertThat(rows).isEqualTo(records);
        if (type.equals("json_upsert")) {
          assertThat(warehouse.readAll(org.apache.iceberg.catalog.TableIdentifier.of("default", type + "_measured")))
              .as("one row per id").hasSize(records / 4);
        }
      }
    }
  }

  private static final Schema AVRO = new Schema.Parser().parse("""
      {"type":"record","name":"Click","fields":[
        {"name":"id","type":"long"},{"name":"user","type":"string"},{"name":"score","type":"double"},
        {"name":"ok","type":"boolean"},
        {"name":"ctx","type":{"type":"record","name":"Ctx","fields":[
          {"name":"page","type":"string"},{"name":"ref","type":["null","string"],"default":null}]}},
        {"name":"pad","type":"string"}]}""");

  private static long copyAll(TestWarehouse warehouse, TestTopic topic, String type, String table, AtomicInteger ids) {
    AvroSchemaSource schemas = id -> AVRO;
    Map<String, String> configs = new java.util.HashMap<>(Map.of(TableTopicConfig.ENABLE, "true",
        TableTopicConfig.CONVERT_VALUE_TYPE, type, TableTopicConfig.TABLE_NAME, table));
    if (type.equals("json_upsert")) {
      configs.put(TableTopicConfig.CONVERT_VALUE_TYPE, "json");
      configs.put(TableTopicConfig.ID_COLUMNS, "[id]");
      configs.put(TableTopicConfig.UPSERT_ENABLE, "true");
    }
    TableSync sync = new TableSync(topic.name, TableTopicConfig.parse(configs), warehouse.freshCatalog(),
        topic.sources(), schemas, () -> "c" + ids.incrementAndGet(), 64 << 20, 64L << 20);
    long rows = 0;
    TableSync.RoundResult r;
    do {
      r = sync.runRound();
      rows += r.rows();
    } while (r.moreData());
    return rows;
  }
}
