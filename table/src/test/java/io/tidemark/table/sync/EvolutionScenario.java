package io.tidemark.table.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.registry.schema.SchemaType;
import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.convert.KafkaColumns;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.IntBinaryOperator;
import org.apache.avro.generic.GenericData;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.kafka.common.record.internal.SimpleRecord;

/**
 * A table topic whose producers move through the versions of an {@link EvolvingSchema} while its
 * partitions are converted by several groups (of one broker, or of several brokers each with its
 * own catalog client) in one round, their batches interleaved in a given order; then every row of
 * the table, read with Iceberg's generic reader, is checked value by value against its record.
 */
final class EvolutionScenario {

  private final TestWarehouse warehouse;
  private final TestRegistry registry;
  private final String topicName;
  private final EvolvingSchema schema;
  private final boolean flatten;

  EvolutionScenario(TestWarehouse warehouse, TestRegistry registry, String topicName, List<EvolvingSchema.Step> steps,
      boolean flatten) {
    this.warehouse = warehouse;
    this.registry = registry;
    this.topicName = topicName;
    this.schema = new EvolvingSchema(steps, flatten);
    this.flatten = flatten;
  }

  int versions() {
    return schema.versions.size();
  }

  /**
   * Produces {@code batches} batches of {@code recordsPerBatch} records to each of {@code partitions}
   * partitions, batch {@code b} of partition {@code p} in version {@code versionOf(p, b)}; converts them
   * in one round by {@code groups} (partitions dealt round robin), batch order chosen by {@code order}
   * among the groups that have batches left; checks the table.
   *
   * @param brokers whether each group is another broker (its own catalog client) rather than a group of one broker
   * @param order picks the next group to read a batch, from {@code (turn, groupsWithBatchesLeft)}: an index into them
   */
  void run(int partitions, int batches, int recordsPerBatch, IntBinaryOperator versionOf, int groups, boolean brokers,
      IntBinaryOperator order, Random values) throws Exception {
    List<Integer> ids = new ArrayList<>();
    for (org.apache.avro.Schema v : schema.avro) {
      ids.add(registry.register(topicName + "-value", SchemaType.AVRO, v.toString()));
    }
    TestTopic topic = new TestTopic(topicName, partitions);
    Map<String, Map<String, Object>> expected = new TreeMap<>(); // "partition/offset" -> value columns
    Map<Integer, List<Long>> batchStarts = new TreeMap<>();
    for (int b = 0; b < batches; b++) {
      for (int p = 0; p < partitions; p++) {
        int version = versionOf.applyAsInt(p, b);
        List<SimpleRecord> records = new ArrayList<>();
        List<Map<String, Object>> wanted = new ArrayList<>();
        for (int r = 0; r < recordsPerBatch; r++) {
          GenericData.Record value = schema.randomValue(version, values);
          records.add(new SimpleRecord(1L, null, io.tidemark.registry.client.WireFormat.frame(ids.get(version),
              TestRegistry.avroDatum(schema.avro.get(version), value))));
          wanted.add(schema.expected(value));
        }
        long base = topic.append(p, records);
        batchStarts.computeIfAbsent(p, k -> new ArrayList<>()).add(base);
        for (int r = 0; r < wanted.size(); r++) {
          expected.put(p + "/" + (base + r), wanted.get(r));
        }
      }
    }
    List<List<Integer>> dealt = new ArrayList<>();
    int groupCount = Math.min(groups, partitions);
    for (int g = 0; g < groupCount; g++) {
      dealt.add(new ArrayList<>());
    }
    for (int p = 0; p < partitions; p++) {
      dealt.get(p % groupCount).add(p);
    }
    InterleavedRound round = new InterleavedRound();
    List<List<long[]>> perGroup = new ArrayList<>(); // each group's batches in the order it reads them
    for (List<Integer> group : dealt) {
      List<long[]> seq = new ArrayList<>();
      for (int p : group) {
        batchStarts.get(p).forEach(base -> seq.add(new long[] {p, base}));
      }
      perGroup.add(seq);
    }
    int[] position = new int[groupCount];
    for (int turn = 0; ; turn++) {
      List<Integer> left = new ArrayList<>();
      for (int g = 0; g < groupCount; g++) {
        if (position[g] < perGroup.get(g).size()) {
          left.add(g);
        }
      }
      if (left.isEmpty()) {
        break;
      }
      int g = left.get(Math.floorMod(order.applyAsInt(turn, left.size()), left.size()));
      long[] batch = perGroup.get(g).get(position[g]++);
      round.then((int) batch[0], batch[1]);
    }

    Map<String, String> configs = Map.of(TableTopicConfig.ENABLE, "true", TableTopicConfig.CONVERT_VALUE_TYPE, "by_schema_id",
        TableTopicConfig.TRANSFORM_VALUE_TYPE, flatten ? "flatten" : "none", TableTopicConfig.ERRORS_TOLERANCE, "none");
    TableTopicConfig config = TableTopicConfig.parse(configs);
    Catalog shared = warehouse.freshCatalog();
    String commitId = "round-" + topicName;
    TableSync committer = new TableSync(topicName, config, shared, Map.of(), registry.schemas, () -> commitId, 1 << 20, 64L << 20);
    TableSync.RoundResult result = round.run(commitId, dealt, topic.sources(),
        sources -> new TableSync(topicName, config, brokers ? warehouse.freshCatalog() : shared, sources, registry.schemas,
            () -> commitId, 1 << 20, 64L << 20), committer);
    assertThat(result.skipped()).as("records skipped").isZero();
    assertThat(result.moreData()).as("records left for a later round").isFalse();
    assertThat(result.rows()).isEqualTo(expected.size());

    Map<String, Map<String, Object>> inTable = new TreeMap<>();
    for (Record row : warehouse.readAll(TableIdentifier.of("default", topicName))) {
      String key = row.getField(KafkaColumns.PARTITION) + "/" + row.getField(KafkaColumns.OFFSET);
      assertThat(inTable.put(key, EvolvingSchema.actual(row))).as("row %s written twice", key).isNull();
    }
    Map<String, String> wrong = new TreeMap<>();
    expected.forEach((k, v) -> {
      if (!v.equals(inTable.get(k))) {
        wrong.put(k, "record " + v + ", table " + inTable.get(k));
      }
    });
    assertThat(wrong).as("rows that differ from their records (%d of %d; %s)", wrong.size(), expected.size(), schema)
        .isEmpty();
    assertThat(inTable.keySet()).isEqualTo(expected.keySet());
  }
}
