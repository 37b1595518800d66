package io.tidemark.table.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tidemark.registry.schema.SchemaType;
import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.control.ControlLog;
import io.tidemark.table.convert.KafkaColumns;
import io.tidemark.table.convert.SchemaMismatchException;
import io.tidemark.table.node.TableTopicNode;
import io.tidemark.table.writer.TableWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.avro.Schema;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Goal (issue 10, item 6): a schema change made by one conversion group reaches the open writers of
 * the other groups, so no value of a record written after the change is dropped. The scenario of
 * the issue, through a whole node: four partitions converted by four groups, 3,000 Avro records of
 * v1 then 1,000 of v2 (v1 plus an optional {@code note}, half of them set) in one round.
 */
class GroupSchemaRaceTest extends RegistryTableTest {

  private static final Schema V1 = new Schema.Parser().parse("""
      {"type":"record","name":"Event","fields":[{"name":"id","type":"int"},
        {"name":"meta","type":{"type":"record","name":"Meta","fields":[{"name":"source","type":"string"}]}}]}""");
  private static final Schema V2 = new Schema.Parser().parse("""
      {"type":"record","name":"Event","fields":[{"name":"id","type":"int"},
        {"name":"meta","type":{"type":"record","name":"Meta","fields":[{"name":"source","type":"string"}]}},
        {"name":"note","type":["null","string"],"default":null}]}""");

  private final List<TableTopicNode> nodes = new ArrayList<>();

  @AfterEach
  void stopNodes() {
    nodes.forEach(TableTopicNode::close);
  }

  @Test
  void everyNoteLandsWhenFourGroupsConvertVersionOneThenTwoInOneRound() {
    // goal: the scenario keeps all 500 notes (the old code kept about 125: only the evolving group's)
    int v1 = registry.register("events-value", SchemaType.AVRO, V1.toString());
    int v2 = registry.register("events-value", SchemaType.AVRO, V2.toString());
    TestTopic topic = new TestTopic("events", 4);
    Map<String, String> notes = new HashMap<>(); // "partition/offset" -> note (null when unset)
    for (int i = 0; i < 4_000; i++) {
      boolean second = i >= 3_000;
      Map<String, Object> fields = new HashMap<>();
      fields.put("id", i);
      fields.put("meta", meta("s" + i));
      String note = second && i % 2 == 0 ? "note-" + i : null;
      if (second) {
        fields.put("note", note);
      }
      byte[] value = TestRegistry.framedAvro(second ? v2 : v1, second ? V2 : V1, fields);
      int partition = i % 4;
      long offset = topic.append(partition, List.of(new SimpleRecord(1L, null, value)));
      notes.put(partition + "/" + offset, note);
    }
    ControlLog control = ControlLog.local(new TestTopic(ControlLog.TOPIC, 1).logs.get(0), System::currentTimeMillis, 1 << 20);
    TableTopicNode node = new TableTopicNode(
        new TableTopicNode.Settings(1, 64L << 20, 64 << 20, 120_000, 180_000, 10, 60_000, 4),
        warehouse.freshCatalog(), registry.schemas, control, System::currentTimeMillis);
    node.start();
    nodes.add(node);
    TableTopicConfig config = config(Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "by_schema_id",
        TableTopicConfig.TRANSFORM_VALUE_TYPE, "flatten", TableTopicConfig.COMMIT_INTERVAL_MS, "1000"));
    node.apply("events", new TableTopicNode.Assignment("id-1", config, topic.sources(), true, Set.of(1)));

    TableIdentifier id = TableIdentifier.of("default", "events");
    await().atMost(Duration.ofMinutes(3)).until(() -> warehouse.freshCatalog().tableExists(id)
        && warehouse.readAll(id).size() == notes.size());
    Map<String, String> inTable = new HashMap<>();
    for (Record r : warehouse.readAll(id)) {
      String key = r.getField(KafkaColumns.PARTITION) + "/" + r.getField(KafkaColumns.OFFSET);
      assertThat(inTable.containsKey(key)).as("row %s written twice", key).isFalse();
      inTable.put(key, (String) r.getField("note"));
      assertThat(r.getField("meta_source")).as("meta_source of %s", key).isNotNull();
    }
    long notesSet = notes.values().stream().filter(n -> n != null).count();
    long notesInTable = inTable.values().stream().filter(n -> n != null).count();
    assertThat(notesInTable).as("notes in the table (of %d)", notesSet).isEqualTo(notesSet);
    assertThat(inTable).isEqualTo(notes);
  }

  @ParameterizedTest(name = "flatten={0}, {1} groups, brokers={2}")
  @CsvSource({"true, 4, false", "false, 3, true"})
  void interleavedEvolutionsOnEveryPartitionInOneRoundKeepEveryValue(boolean flatten, int groups, boolean brokers)
      throws Exception {
    // goal: added, nested-added, widened and optional-made fields, each version reaching every partition in
    // turn within one round, while other groups (or brokers) hold files of older versions open: every value lands
    List<EvolvingSchema.Step> steps = List.of(new EvolvingSchema.AddField(EvolvingSchema.Kind.STRING),
        new EvolvingSchema.AddNested(0, EvolvingSchema.Kind.STRING), new EvolvingSchema.Widen(0),
        new EvolvingSchema.Widen(0), new EvolvingSchema.AddField(EvolvingSchema.Kind.STRUCT),
        new EvolvingSchema.MakeOptional(1));
    EvolutionScenario scenario = new EvolutionScenario(warehouse, registry, "interleaved", steps, flatten);
    // batch b of every partition is version b; the groups take turns batch by batch
    scenario.run(4, scenario.versions(), 5, (partition, batch) -> batch, groups, brokers, (turn, left) -> turn,
        new java.util.Random(42));
  }

  @Test
  void aWriterRefusesARowOfAnotherSchemaAndRollsToItWhenAsked() throws Exception {
    // goal: a file never takes a row by position from another schema (that dropped the new columns); useSchema rolls
    org.apache.iceberg.catalog.Catalog catalog = warehouse.freshCatalog();
    org.apache.iceberg.Table table = catalog.createTable(TableIdentifier.of("default", "writer"),
        new org.apache.iceberg.Schema(Types.NestedField.optional(1, "a", Types.StringType.get())));
    TableWriter writer = new TableWriter(table, table.schema(), 0, "c1", 64L << 20);
    writer.write(row(table.schema(), "a", "1"));
    table.updateSchema().addColumn("note", Types.StringType.get()).commit();
    table.refresh();
    org.apache.iceberg.Schema evolved = table.schema();
    assertThatThrownBy(() -> writer.write(row(evolved, "note", "n")))
        .isInstanceOf(SchemaMismatchException.class).hasMessageContaining("move the writer");
    writer.useSchema(evolved);
    writer.write(row(evolved, "note", "n"));
    List<org.apache.iceberg.DataFile> files = writer.drain();
    assertThat(files).hasSize(2).extracting(org.apache.iceberg.DataFile::recordCount).containsExactly(1L, 1L);
    table.newAppend().appendFile(files.get(0)).appendFile(files.get(1)).commit();
    assertThat(warehouse.readAll(TableIdentifier.of("default", "writer"))).extracting(r -> r.getField("note"))
        .containsExactlyInAnyOrder(null, "n");
  }

  private static org.apache.iceberg.data.GenericRecord row(org.apache.iceberg.Schema schema, String column, String value) {
    org.apache.iceberg.data.GenericRecord r = org.apache.iceberg.data.GenericRecord.create(schema);
    r.setField(column, value);
    return r;
  }

  private static org.apache.avro.generic.GenericData.Record meta(String source) {
    org.apache.avro.generic.GenericData.Record m = new org.apache.avro.generic.GenericData.Record(V1.getField("meta").schema());
    m.put("source", source);
    return m;
  }
}
