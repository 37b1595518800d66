package io.tidemark.table.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.convert.KafkaColumns;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tag;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.data.Record;
import org.apache.kafka.common.record.internal.SimpleRecord;

/**
 * Goal: after every commit of random upsert/delete sequences, spread over 3 Kafka partitions,
 * converted by 1 to 3 groups, with ids written several times within one round and across rounds,
 * in a table partitioned by a column that changes between versions of a row (or not), in format
 * v2 (position delete files) or v3 (deletion vectors), the table read with Iceberg's generic reader
 * holds exactly the latest row of every live id and nothing else, in each mode: tombstones by key,
 * a CDC operation field, Debezium envelopes. Small tries by default, many under {@code -Pfull}.
 */
class UpsertProperties {

  private static final int PARTITIONS = 3;

  /** How the topic says upsert and delete. */
  enum Mode { KEY_TOMBSTONE, CDC_FIELD, DEBEZIUM }

  /** One record: an upsert of {@code id} with group {@code grp}, or a delete; {@code commitAfter} ends a round. */
  record Op(boolean delete, int id, int grp, boolean commitAfter) {}

  @Property(tries = 4)
  void theTableHoldsTheLatestRowOfEveryLiveId(@ForAll("ops") List<Op> ops, @ForAll Mode mode,
      @ForAll @IntRange(min = 1, max = 3) int groups, @ForAll boolean partitioned, @ForAll boolean v3) throws Exception {
    check(ops, mode, groups, partitioned, v3);
  }

  @Property(tries = 150)
  @Tag("full")
  void theTableHoldsTheLatestRowOfEveryLiveIdManyRuns(@ForAll("ops") List<Op> ops, @ForAll Mode mode,
      @ForAll @IntRange(min = 1, max = 3) int groups, @ForAll boolean partitioned, @ForAll boolean v3) throws Exception {
    check(ops, mode, groups, partitioned, v3);
  }

  @Provide
  Arbitrary<List<Op>> ops() {
    Arbitrary<Op> op = Combinators.combine(Arbitraries.integers().between(0, 3).map(n -> n == 0),
        Arbitraries.integers().between(0, 11), Arbitraries.integers().between(0, 2),
        Arbitraries.integers().between(0, 7).map(n -> n == 0)).as(Op::new);
    return op.list().ofMinSize(1).ofMaxSize(60);
  }

  private static Path dir;
  private static TestWarehouse warehouse;
  private static final AtomicInteger topics = new AtomicInteger();
  private static final AtomicInteger commitIds = new AtomicInteger();

  @BeforeContainer
  static void startWarehouse() throws IOException {
    dir = Files.createTempDirectory("tidemark-upsert");
    warehouse = new TestWarehouse(dir);
  }

  @AfterContainer
  static void stopWarehouse() throws IOException {
    warehouse.close();
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  private static void check(List<Op> ops, Mode mode, int groups, boolean partitioned, boolean v3) throws Exception {
    TestTopic topic = new TestTopic("upserts" + topics.incrementAndGet(), PARTITIONS);
    Map<String, String> configs = new HashMap<>();
    configs.put(TableTopicConfig.ENABLE, "true");
    configs.put(TableTopicConfig.CONVERT_VALUE_TYPE, "json");
    configs.put(TableTopicConfig.FORMAT_VERSION, v3 ? "3" : "2");
    switch (mode) {
      case KEY_TOMBSTONE -> configs.put("automq.table.topic.upsert.enable", "true");
      case CDC_FIELD -> {
        configs.put(TableTopicConfig.CDC_FIELD, "op");
        configs.put("automq.table.topic.id.columns", "[id]");
      }
      case DEBEZIUM -> {
        configs.put(TableTopicConfig.TRANSFORM_VALUE_TYPE, "debezium");
        configs.put(TableTopicConfig.ID_COLUMNS, "[id]");
      }
    }
    if (partitioned) {
      configs.put(TableTopicConfig.PARTITION_BY, "[grp]");
    }
    TableTopicConfig config = TableTopicConfig.parse(configs);
    List<TableSync> syncs = new ArrayList<>();
    for (int g = 0; g < groups; g++) {
      Map<Integer, io.tidemark.table.source.PartitionRecordSource> mine = new TreeMap<>();
      for (int p = g; p < PARTITIONS; p += groups) {
        mine.put(p, topic.sources().get(p));
      }
      if (!mine.isEmpty()) {
        syncs.add(new TableSync(topic.name, config, warehouse.freshCatalog(), mine,
            () -> "c" + commitIds.incrementAndGet(), 1 << 20, 64L << 20));
      }
    }
    Map<Integer, String> model = new TreeMap<>();
    int version = 0;
    try {
      for (int i = 0; i < ops.size(); i++) {
        Op op = ops.get(i);
        int partition = op.id() % PARTITIONS; // a key always goes to one partition, as Kafka's partitioner does
        version++;
        for (SimpleRecord r : records(mode, op, version)) {
          topic.append(partition, List.of(r));
        }
        if (op.delete()) {
          model.remove(op.id());
        } else {
          model.put(op.id(), "v" + version + "/g" + op.grp());
        }
        if (op.commitAfter() || i == ops.size() - 1) {
          commit(syncs);
          assertThat(read(warehouse.load(syncs.getFirst().tableIdentifier()), mode))
              .as("after op %d of %s (mode %s, groups %d, partitioned %s, v3 %s)", i, ops, mode, groups, partitioned, v3)
              .isEqualTo(model);
        }
      }
      Table table = warehouse.load(syncs.getFirst().tableIdentifier());
      assertThat(TableUtil.formatVersion(table)).isEqualTo(v3 ? 3 : 2);
      if (mode != Mode.KEY_TOMBSTONE) {
        assertThat(table.schema().identifierFieldNames()).containsExactly("id");
      } else {
        assertThat(table.schema().identifierFieldNames()).containsExactly(KafkaColumns.KEY);
      }
    } finally {
      warehouse.closeCatalogs();
    }
  }

  private static void commit(List<TableSync> syncs) {
    List<TableSync.PreparedRound> parts = new ArrayList<>();
    for (TableSync s : syncs) {
      parts.add(s.prepare());
    }
    syncs.getFirst().commit(TableSync.PreparedRound.union("round" + commitIds.incrementAndGet(), parts));
  }

  /** The records a producer of {@code mode} sends for {@code op}. */
  private static List<SimpleRecord> records(Mode mode, Op op, int version) {
    String key = "k" + op.id();
    String row = "{\"id\":" + op.id() + ",\"val\":\"v" + version + "\",\"grp\":" + op.grp() + "}";
    return switch (mode) {
      case KEY_TOMBSTONE -> List.of(record(key, op.delete() ? null : row));
      case CDC_FIELD -> List.of(record(key, op.delete() ? "{\"id\":" + op.id() + ",\"op\":\"d\"}"
          : row.substring(0, row.length() - 1) + ",\"op\":\"" + (version % 2 == 0 ? "u" : "c") + "\"}"));
      case DEBEZIUM -> op.delete()
          ? List.of(record(key, "{\"before\":" + row + ",\"after\":null,\"op\":\"d\",\"source\":{\"db\":\"shop\"}}"),
              record(key, null))
          : List.of(record(key, "{\"before\":null,\"after\":" + row + ",\"op\":\"" + (version % 3 == 0 ? "r" : "u")
              + "\",\"source\":{\"db\":\"shop\"},\"ts_ms\":1}"));
    };
  }

  private static SimpleRecord record(String key, String value) {
    return new SimpleRecord(1_700_000_000_000L, key.getBytes(StandardCharsets.UTF_8),
        value == null ? null : value.getBytes(StandardCharsets.UTF_8));
  }

  /** id → "val/grp" of every row of the table; a second row of one id fails. */
  private static Map<Integer, String> read(Table table, Mode mode) throws IOException {
    Map<Integer, String> out = new TreeMap<>();
    try (var rows = org.apache.iceberg.data.IcebergGenerics.read(table).build()) {
      for (Record r : rows) {
        int id = mode == Mode.KEY_TOMBSTONE ? Integer.parseInt(((String) r.getField(KafkaColumns.KEY)).substring(1))
            : ((Number) r.getField("id")).intValue();
        String previous = out.put(id, r.getField("val") + "/g" + r.getField("grp"));
        assertThat(previous).as("a second row of id %d", id).isNull();
      }
    }
    return out;
  }
}
