package io.tidemark.table.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.registry.schema.SchemaType;
import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.convert.KafkaColumns;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;

/**
 * Goal: transform.value.type=flatten turns nested structs into top-level parent_child columns
 * (Avro and schemaless JSON); partition.by changed in the topic config re-partitions from the next
 * commit, and a spec changed in the catalog by someone else is kept and used from the next commit.
 */
class FlattenAndPartitionTest extends RegistryTableTest {

  private static final long TS = 1_700_000_000_000L;

  private static SimpleRecord json(String value) {
    return new SimpleRecord(TS, null, value.getBytes(StandardCharsets.UTF_8));
  }

  private static final Schema NESTED = new Schema.Parser().parse("""
      {"type":"record","name":"User","fields":[
        {"name":"id","type":"int"},
        {"name":"profile","type":{"type":"record","name":"Profile","fields":[
          {"name":"name","type":"string"},
          {"name":"home","type":["null",{"type":"record","name":"Address","fields":[{"name":"city","type":"string"}]}]}]}},
        {"name":"visits","type":{"type":"array","items":{"type":"record","name":"Visit","fields":[{"name":"page","type":"string"}]}}}]}""");

  @Test
  void flattenTurnsNestedStructsIntoTopLevelColumns() {
    // goal: profile.home.city becomes profile_home_city; lists keep their element structs; a null struct leaves its columns empty
    int id = registry.register("users-value", SchemaType.AVRO, NESTED.toString());
    Schema profileSchema = NESTED.getField("profile").schema();
    Schema address = profileSchema.getField("home").schema().getTypes().get(1);
    GenericData.Record home = new GenericData.Record(address);
    home.put("city", "Oslo");
    GenericData.Record p1 = new GenericData.Record(profileSchema);
    p1.put("name", "ann");
    p1.put("home", home);
    GenericData.Record p2 = new GenericData.Record(profileSchema);
    p2.put("name", "bob");
    GenericData.Record visit = new GenericData.Record(NESTED.getField("visits").schema().getElementType());
    visit.put("page", "/a");
    TestTopic topic = new TestTopic("users", 1);
    topic.append(0, List.of(
        new SimpleRecord(TS, null, TestRegistry.framedAvro(id, NESTED, Map.of("id", 1, "profile", p1, "visits", List.of(visit)))),
        new SimpleRecord(TS, null, TestRegistry.framedAvro(id, NESTED, Map.of("id", 2, "profile", p2, "visits", List.of())))));
    TableSync sync = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "by_schema_id",
        TableTopicConfig.TRANSFORM_VALUE_TYPE, "flatten"));

    sync.runRound();

    Table t = warehouse.load(sync.tableIdentifier());
    assertThat(t.schema().asStruct().field("profile")).isNull();
    assertThat(t.schema().asStruct().field("profile_name")).isNotNull();
    assertThat(t.schema().asStruct().field("profile_home_city")).isNotNull();
    assertThat(t.schema().findField("visits.element.page")).isNotNull();
    List<Record> rows = RegistrySchemaEvolutionTest.sorted(warehouse.readAll(sync.tableIdentifier()));
    assertThat(rows).extracting(r -> r.getField("id")).containsExactly(1, 2);
    assertThat(rows).extracting(r -> r.getField("profile_name")).containsExactly("ann", "bob");
    assertThat(rows).extracting(r -> r.getField("profile_home_city")).containsExactly("Oslo", null);
    assertThat(((Record) ((List<?>) rows.get(0).getField("visits")).get(0)).getField("page")).isEqualTo("/a");
  }

  @Test
  void flattenAppliesToSchemalessJsonAndAColumnNameClashIsInvalidData() {
    // goal: nested JSON objects become a_b columns (types inferred and widened as usual); a_b given twice is skipped
    TestTopic topic = new TestTopic("flatjson", 1);
    topic.append(0, List.of(
        json("{\"a\": {\"b\": 1, \"c\": {\"d\": \"x\"}}, \"e\": true}"),
        json("{\"a\": {\"b\": 5000000000}}"),
        json("{\"a_b\": 1, \"a\": {\"b\": 2}}")));
    TableSync sync = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "json",
        TableTopicConfig.TRANSFORM_VALUE_TYPE, "flatten", TableTopicConfig.ERRORS_DLQ_ENABLE, "true"));

    TableSync.RoundResult r = sync.runRound();

    assertThat(r.skipped()).isEqualTo(1);
    List<Record> rows = RegistrySchemaEvolutionTest.sorted(warehouse.readAll(sync.tableIdentifier()));
    assertThat(rows).extracting(x -> x.getField("a_b")).containsExactly(1L, 5_000_000_000L);
    assertThat(rows).extracting(x -> x.getField("a_c_d")).containsExactly("x", null);
    assertThat(rows).extracting(x -> x.getField("e")).containsExactly(true, null);
    assertThat(warehouse.readAll(sync.dlqIdentifier())).singleElement()
        .satisfies(d -> assertThat(d.getField("_error").toString()).contains("become column a_b"));
  }

  @SuppressWarnings("deprecation") // Snapshot.addedDataFiles(FileIO): the simplest way to list a snapshot's files in a test
  private static List<DataFile> lastFiles(Table t) {
    List<DataFile> out = new java.util.ArrayList<>();
    t.currentSnapshot().addedDataFiles(t.io()).forEach(out::add);
    return out;
  }

  @Test
  void aChangedPartitionByRepartitionsFromTheNextCommitAndAnExternalSpecIsKept() {
    // goal: config [bucket(user, 4)] → [day(_kafka_timestamp)] swaps the spec; a field added in the catalog afterwards survives later rounds
    Map<String, String> bucketed = Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "json",
        TableTopicConfig.PARTITION_BY, "[bucket(user, 4)]");
    TestTopic topic = new TestTopic("visits", 1);
    topic.append(0, List.of(json("{\"user\": \"ann\"}"), json("{\"user\": \"bob\"}")));
    TableSync sync = sync(topic, bucketed);
    sync.runRound();
    Table t1 = warehouse.load(sync.tableIdentifier());
    assertThat(t1.spec().fields()).extracting(f -> f.transform().toString()).containsExactly("bucket[4]");
    assertThat(t1.properties()).containsEntry(TableSync.PARTITION_BY_PROPERTY, "bucket[4](user)");

    Map<String, String> daily = new HashMap<>(bucketed);
    daily.put(TableTopicConfig.PARTITION_BY, "[day(_kafka_timestamp)]");
    sync.updateConfig(config(daily));
    topic.append(0, List.of(json("{\"user\": \"cy\"}")));
    sync.runRound();
    Table t2 = warehouse.load(sync.tableIdentifier());
    assertThat(t2.spec().fields()).extracting(f -> f.transform().toString()).containsExactly("day");
    assertThat(lastFiles(t2)).singleElement().satisfies(f -> assertThat(f.specId()).isEqualTo(t2.spec().specId()));

    // someone else partitions the table further in the catalog, between two rounds
    warehouse.load(sync.tableIdentifier()).updateSpec().addField(KafkaColumns.PARTITION).commit();
    topic.append(0, List.of(json("{\"user\": \"di\"}")));
    sync.runRound();
    topic.append(0, List.of(json("{\"user\": \"ed\"}")));
    sync.runRound();
    Table t3 = warehouse.load(sync.tableIdentifier());
    assertThat(t3.spec().fields()).extracting(f -> f.transform().toString()).containsExactly("day", "identity");
    assertThat(lastFiles(t3)).singleElement().satisfies(f -> assertThat(f.specId()).isEqualTo(t3.spec().specId()));

    // back to unpartitioned through the config
    Map<String, String> none = new HashMap<>(bucketed);
    none.remove(TableTopicConfig.PARTITION_BY);
    sync.updateConfig(config(none));
    topic.append(0, List.of(json("{\"user\": \"fy\"}")));
    sync.runRound();
    Table t4 = warehouse.load(sync.tableIdentifier());
    assertThat(t4.spec().isUnpartitioned()).isTrue();
    assertThat(warehouse.readAll(sync.tableIdentifier())).extracting(r -> r.getField("user"))
        .containsExactlyInAnyOrder("ann", "bob", "cy", "di", "ed", "fy");
  }
}
