package io.tidemark.table.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.registry.schema.SchemaType;
import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.convert.KafkaColumns;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: Debezium change events land as the current state of the source table: Avro envelopes
 * through the registry (struct key, {@code after} upserts, {@code before} of a delete removes the
 * row, the tombstone after it changes nothing, an unknown op is bad data), JSON envelopes with and
 * without the {@code schema}/{@code payload} wrapper, and a compacted topic with a struct key kept
 * as the latest value per key (equality deletes on the key's fields), each read with Iceberg's
 * generic reader.
 */
class DebeziumTableTest {

  private static final long TS = 1_700_000_000_000L;
  private static final Schema KEY = new Schema.Parser().parse("""
      {"type":"record","name":"Key","namespace":"shop.public.customers","fields":[{"name":"id","type":"long"}]}""");
  private static final Schema ROW = new Schema.Parser().parse("""
      {"type":"record","name":"Value","namespace":"shop.public.customers","fields":[
        {"name":"id","type":"long"},{"name":"name","type":["null","string"],"default":null},
        {"name":"address","type":["null",{"type":"record","name":"Address","fields":[{"name":"city","type":"string"}]}],
         "default":null}]}""");
  private static final Schema SOURCE = new Schema.Parser().parse("""
      {"type":"record","name":"Source","namespace":"io.debezium.connector.postgresql","fields":[
        {"name":"db","type":"string"},{"name":"table","type":"string"},{"name":"lsn","type":["null","long"],"default":null}]}""");
  private static final Schema ENVELOPE = SchemaBuilderShim.envelope(ROW, SOURCE);

  @TempDir
  static Path dir;
  private static TestWarehouse warehouse;
  private static TestRegistry registry;
  private final AtomicInteger ids = new AtomicInteger();

  @BeforeAll
  static void start() {
    warehouse = new TestWarehouse(dir);
    registry = new TestRegistry();
  }

  @AfterAll
  static void stop() throws Exception {
    registry.close();
    warehouse.close();
  }

  private TableSync sync(TestTopic topic, Map<String, String> configs) {
    Map<String, String> all = new HashMap<>(configs);
    all.put(TableTopicConfig.ENABLE, "true");
    return new TableSync(topic.name, TableTopicConfig.parse(all), warehouse.freshCatalog(), topic.sources(),
        registry.schemas, () -> "commit-" + ids.incrementAndGet(), 1 << 20, 64L << 20);
  }

  /** Helps build the Debezium envelope schema around a row schema. */
  private static final class SchemaBuilderShim {
    static Schema envelope(Schema row, Schema source) {
      return new Schema.Parser().parse("""
          {"type":"record","name":"Envelope","namespace":"shop.public.customers","fields":[
            {"name":"before","type":["null",%s],"default":null},
            {"name":"after","type":["null","shop.public.customers.Value"],"default":null},
            {"name":"source","type":%s},
            {"name":"op","type":"string"},
            {"name":"ts_ms","type":["null","long"],"default":null}]}""".formatted(row.toString(), source.toString()));
    }
  }

  private static GenericData.Record row(long id, String name, String city) {
    GenericData.Record r = new GenericData.Record(ROW);
    r.put("id", id);
    r.put("name", name);
    if (city != null) {
      GenericData.Record a = new GenericData.Record(ROW.getField("address").schema().getTypes().get(1));
      a.put("city", city);
      r.put("address", a);
    }
    return r;
  }

  private static byte[] event(int schemaId, String op, GenericData.Record before, GenericData.Record after) {
    GenericData.Record source = new GenericData.Record(SOURCE);
    source.put("db", "shop");
    source.put("table", "customers");
    GenericData.Record e = new GenericData.Record(ENVELOPE);
    e.put("before", before);
    e.put("after", after);
    e.put("source", source);
    e.put("op", op);
    e.put("ts_ms", TS);
    return io.tidemark.registry.client.WireFormat.frame(schemaId, TestRegistry.avroDatum(ENVELOPE, e));
  }

  private static byte[] key(int schemaId, long id) {
    GenericData.Record k = new GenericData.Record(KEY);
    k.put("id", id);
    return io.tidemark.registry.client.WireFormat.frame(schemaId, TestRegistry.avroDatum(KEY, k));
  }

  private static Map<Long, String> byId(List<Record> rows, String idColumn) {
    Map<Long, String> out = new TreeMap<>();
    for (Record r : rows) {
      long id = ((Number) r.getField(idColumn)).longValue();
      Object city = r.getField("address_city") != null ? r.getField("address_city")
          : r.getField("address") instanceof Record a ? a.getField("city") : null;
      assertThat(out.put(id, r.getField("name") + "@" + city)).as("one row per id %d", id).isNull();
    }
    return out;
  }

  @Test
  void avroDebeziumEventsLandAsTheSourceTablesCurrentState() {
    // goal: c/u/r upsert by after, d deletes by before, the tombstone after a delete is ignored, 't' is bad data
    for (String transform : List.of("debezium", "flatten_debezium")) {
      TestTopic topic = new TestTopic("customers_" + transform, 2);
      int keyId = registry.register(topic.name + "-key", SchemaType.AVRO, KEY.toString());
      int valueId = registry.register(topic.name + "-value", SchemaType.AVRO, ENVELOPE.toString());
      TableSync sync = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "by_schema_id",
          TableTopicConfig.CONVERT_KEY_TYPE, "by_schema_id", "automq.table.topic.transform.value.type", transform,
          TableTopicConfig.ID_COLUMNS, "[id]"));
      topic.append(0, List.of(
          new SimpleRecord(TS, key(keyId, 1), event(valueId, "r", null, row(1, "ann", "Oslo"))),
          new SimpleRecord(TS, key(keyId, 2), event(valueId, "c", null, row(2, "bob", "Lima"))),
          new SimpleRecord(TS, key(keyId, 1), event(valueId, "u", row(1, "ann", "Oslo"), row(1, "ann", "Rome")))));
      topic.append(1, List.of(new SimpleRecord(TS, key(keyId, 3), event(valueId, "c", null, row(3, "cy", null)))));
      assertThat(sync.runRound().committed()).isTrue();
      assertThat(byId(warehouse.readAll(sync.tableIdentifier()), "id"))
          .containsExactly(Map.entry(1L, "ann@Rome"), Map.entry(2L, "bob@Lima"), Map.entry(3L, "cy@null"));

      topic.append(0, List.of(
          new SimpleRecord(TS, key(keyId, 2), event(valueId, "d", row(2, "bob", "Lima"), null)),
          new SimpleRecord(TS, key(keyId, 2), null),
          new SimpleRecord(TS, key(keyId, 1), event(valueId, "t", null, null)),
          new SimpleRecord(TS, key(keyId, 1), event(valueId, "u", row(1, "ann", "Rome"), row(1, "ann", "Bern")))));
      topic.append(1, List.of(new SimpleRecord(TS, key(keyId, 3), event(valueId, "d", row(3, "cy", null), null)),
          new SimpleRecord(TS, key(keyId, 3), event(valueId, "c", null, row(3, "cy", "Nice")))));
      TableSync.RoundResult second = sync.runRound();
      assertThat(second.skipped()).as("the truncate event is bad data").isEqualTo(1);
      assertThat(byId(warehouse.readAll(sync.tableIdentifier()), "id"))
          .containsExactly(Map.entry(1L, "ann@Bern"), Map.entry(3L, "cy@Nice"));
      Table table = warehouse.load(sync.tableIdentifier());
      assertThat(table.schema().identifierFieldNames()).containsExactly("id");
      assertThat(table.schema().findField("before")).as("the envelope is unwrapped").isNull();
      assertThat(table.schema().findField("op")).isNull();
      assertThat(table.schema().findField(transform.startsWith("flatten") ? "address_city" : "address.city")).isNotNull();
    }
  }

  @Test
  void jsonDebeziumEventsWithOrWithoutTheSchemaWrapperKeyedByTheKafkaKey() {
    // goal: JsonConverter output (schemas.enable true or false) unwraps; with no id columns the Kafka key is the id
    TestTopic topic = new TestTopic("customers_json", 1);
    TableSync sync = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "json",
        TableTopicConfig.TRANSFORM_VALUE_TYPE, "flatten_debezium"));
    topic.append(0, List.of(
        json("{\"id\":1}", "{\"before\":null,\"after\":{\"id\":1,\"name\":\"ann\",\"address\":{\"city\":\"Oslo\"}},"
            + "\"source\":{\"db\":\"shop\"},\"op\":\"c\"}"),
        json("{\"id\":2}", "{\"schema\":{\"type\":\"struct\"},\"payload\":{\"before\":null,"
            + "\"after\":{\"id\":2,\"name\":\"bob\",\"address\":{\"city\":\"Lima\"}},\"source\":{\"db\":\"shop\"},\"op\":\"r\"}}"),
        json("{\"id\":1}", "{\"before\":{\"id\":1},\"after\":{\"id\":1,\"name\":\"ann\",\"address\":{\"city\":\"Rome\"}},"
            + "\"op\":\"u\"}")));
    sync.runRound();
    assertThat(byId(warehouse.readAll(sync.tableIdentifier()), "id"))
        .containsExactly(Map.entry(1L, "ann@Rome"), Map.entry(2L, "bob@Lima"));
    topic.append(0, List.of(json("{\"id\":2}", "{\"schema\":{},\"payload\":{\"before\":{\"id\":2},\"after\":null,\"op\":\"d\"}}"),
        json("{\"id\":2}", null), json("{\"id\":1}", "{\"after\":{\"id\":1},\"op\":\"x\"}")));
    TableSync.RoundResult r = sync.runRound();
    assertThat(r.skipped()).isEqualTo(1);
    assertThat(byId(warehouse.readAll(sync.tableIdentifier()), "id")).containsExactly(Map.entry(1L, "ann@Rome"));
    assertThat(warehouse.load(sync.tableIdentifier()).schema().identifierFieldNames()).containsExactly(KafkaColumns.KEY);
  }

  @Test
  void aCompactedTopicWithAStructKeyKeepsTheLatestValuePerKey() {
    // goal: cleanup.policy=compact means upsert by the key; a struct key's fields are the equality delete columns
    TestTopic topic = new TestTopic("customers_compacted", 1);
    int keyId = registry.register(topic.name + "-key", SchemaType.AVRO, KEY.toString());
    int valueId = registry.register(topic.name + "-value", SchemaType.AVRO, ROW.toString());
    TableSync sync = sync(topic, Map.of("cleanup.policy", "compact", TableTopicConfig.CONVERT_VALUE_TYPE, "by_schema_id",
        TableTopicConfig.CONVERT_KEY_TYPE, "by_schema_id"));
    topic.append(0, List.of(value(keyId, valueId, 1, "ann"), value(keyId, valueId, 2, "bob"), value(keyId, valueId, 1, "ann2")));
    sync.runRound();
    topic.append(0, List.of(new SimpleRecord(TS, key(keyId, 2), null), value(keyId, valueId, 1, "ann3"),
        value(keyId, valueId, 4, "dan")));
    sync.runRound();
    Map<Long, String> names = new TreeMap<>();
    for (Record r : warehouse.readAll(sync.tableIdentifier())) {
      long id = (Long) ((Record) r.getField(KafkaColumns.KEY)).getField("id");
      assertThat(names.put(id, (String) r.getField("name"))).isNull();
    }
    assertThat(names).containsExactly(Map.entry(1L, "ann3"), Map.entry(4L, "dan"));
  }

  private static SimpleRecord value(int keyId, int valueId, long id, String name) {
    return new SimpleRecord(TS, key(keyId, id), io.tidemark.registry.client.WireFormat.frame(valueId,
        TestRegistry.avroDatum(ROW, row(id, name, null))));
  }

  private static SimpleRecord json(String key, String value) {
    return new SimpleRecord(TS, key.getBytes(StandardCharsets.UTF_8), value == null ? null : value.getBytes(StandardCharsets.UTF_8));
  }
}
