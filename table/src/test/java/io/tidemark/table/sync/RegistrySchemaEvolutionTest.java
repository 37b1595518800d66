package io.tidemark.table.sync;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Timestamp;
import io.tidemark.registry.client.WireFormat;
import io.tidemark.registry.schema.SchemaReference;
import io.tidemark.registry.schema.SchemaType;
import io.tidemark.registry.schema.protobuf.ProtobufSchema;
import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.convert.KafkaColumns;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;

/**
 * Goal: by_schema_id values of Avro, JSON Schema and Protobuf, registered in a real schema registry
 * and read over its REST API, become nested typed columns; new versions add optional columns (nested
 * too) and widen types without stopping the topic; an illegal change goes to the dead-letter table
 * while later records still land. Checked field by field with Iceberg's generic reader.
 */
class RegistrySchemaEvolutionTest extends RegistryTableTest {

  private static final long TS = 1_700_000_000_000L;
  private static final OffsetDateTime PLACED = OffsetDateTime.ofInstant(Instant.ofEpochMilli(TS), ZoneOffset.UTC);

  private TableSync sync(TestTopic topic) {
    return sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "by_schema_id", TableTopicConfig.ERRORS_DLQ_ENABLE, "true"));
  }

  static List<Record> sorted(List<Record> rows) {
    List<Record> out = new ArrayList<>(rows);
    out.sort(Comparator.comparing(r -> (Long) r.getField(KafkaColumns.OFFSET)));
    return out;
  }

  static Record struct(Record row, String name) {
    return (Record) row.getField(name);
  }

  // ---- Avro ----

  private static final Schema AVRO_V1 = new Schema.Parser().parse("""
      {"type":"record","name":"Order","namespace":"shop","fields":[
        {"name":"id","type":"int"},
        {"name":"customer","type":{"type":"record","name":"Customer","fields":[
          {"name":"name","type":"string"},
          {"name":"tier","type":{"type":"enum","name":"Tier","symbols":["GOLD","SILVER"]}}]}},
        {"name":"lines","type":{"type":"array","items":{"type":"record","name":"Line","fields":[
          {"name":"sku","type":"string"},{"name":"qty","type":"int"}]}}},
        {"name":"attrs","type":{"type":"map","values":"long"}},
        {"name":"total","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
        {"name":"placed","type":{"type":"long","logicalType":"timestamp-millis"}},
        {"name":"day","type":{"type":"int","logicalType":"date"}},
        {"name":"ref","type":["null","int","string"],"default":null},
        {"name":"weight","type":"float"},
        {"name":"legacy","type":["null","string"],"default":null}]}""");
  private static final Schema AVRO_V2 = new Schema.Parser().parse("""
      {"type":"record","name":"Order","namespace":"shop","fields":[
        {"name":"id","type":"long"},
        {"name":"customer","type":{"type":"record","name":"Customer","fields":[
          {"name":"name","type":"string"},
          {"name":"tier","type":{"type":"enum","name":"Tier","symbols":["GOLD","SILVER"]}},
          {"name":"email","type":["null","string"],"default":null}]}},
        {"name":"lines","type":{"type":"array","items":{"type":"record","name":"Line","fields":[
          {"name":"sku","type":"string"},{"name":"qty","type":"int"},
          {"name":"price","type":["null","double"],"default":null}]}}},
        {"name":"attrs","type":{"type":"map","values":"long"}},
        {"name":"total","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
        {"name":"placed","type":{"type":"long","logicalType":"timestamp-millis"}},
        {"name":"day","type":{"type":"int","logicalType":"date"}},
        {"name":"ref","type":["null","int","string"],"default":null},
        {"name":"weight","type":"double"},
        {"name":"note","type":["null","string"],"default":null}]}""");
  private static final Schema AVRO_ILLEGAL = new Schema.Parser().parse("""
      {"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"string"}]}""");

  private static Map<String, Object> avroOrder(Schema schema, Object id, String email, Object ref, Object weight) {
    Schema customer = schema.getField("customer").schema();
    GenericData.Record c = new GenericData.Record(customer);
    c.put("name", "ann");
    c.put("tier", new GenericData.EnumSymbol(customer.getField("tier").schema(), "GOLD"));
    if (customer.getField("email") != null) {
      c.put("email", email);
    }
    Schema lineSchema = schema.getField("lines").schema().getElementType();
    GenericData.Record line = new GenericData.Record(lineSchema);
    line.put("sku", "a-1");
    line.put("qty", 2);
    if (lineSchema.getField("price") != null) {
      line.put("price", 9.5);
    }
    Map<String, Object> m = new HashMap<>();
    m.put("id", id);
    m.put("customer", c);
    m.put("lines", List.of(line));
    m.put("attrs", Map.of("x", 1L));
    m.put("total", ByteBuffer.wrap(new BigDecimal("12.34").unscaledValue().toByteArray()));
    m.put("placed", TS);
    m.put("day", 19_000);
    m.put("ref", ref);
    m.put("weight", weight);
    if (schema.getField("legacy") != null) {
      m.put("legacy", "old");
    }
    return m;
  }

  @Test
  void avroNestedRecordsEvolveAcrossVersionsAndAnIllegalChangeGoesToTheDeadLetterTable() {
    // goal: nested structs, lists, maps, logical types and unions land typed; v2 adds nested columns and widens; string→int is dead-lettered
    int v1 = registry.register("orders-value", SchemaType.AVRO, AVRO_V1.toString());
    TestTopic topic = new TestTopic("orders", 1);
    topic.append(0, List.of(new SimpleRecord(TS, null, TestRegistry.framedAvro(v1, AVRO_V1, avroOrder(AVRO_V1, 7, null, 5, 1.5f)))));
    TableSync sync = sync(topic);
    sync.runRound();
    Table t1 = warehouse.load(sync.tableIdentifier());
    assertThat(t1.schema().findField("customer.tier").type()).isEqualTo(Types.StringType.get());
    assertThat(t1.schema().findField("total").type()).isEqualTo(Types.DecimalType.of(9, 2));
    assertThat(t1.schema().findField("id").type()).isEqualTo(Types.IntegerType.get());

    int v2 = registry.register("orders-value", SchemaType.AVRO, AVRO_V2.toString());
    int illegal = registry.register("orders-other-value", SchemaType.AVRO, AVRO_ILLEGAL.toString());
    topic.append(0, List.of(
        new SimpleRecord(TS, null, TestRegistry.framedAvro(v2, AVRO_V2, avroOrder(AVRO_V2, 5_000_000_000L, "a@b.c", "r-9", 2.25d))),
        new SimpleRecord(TS, null, TestRegistry.framedAvro(illegal, AVRO_ILLEGAL, Map.of("id", "x"))),
        new SimpleRecord(TS, null, TestRegistry.framedAvro(v1, AVRO_V1, avroOrder(AVRO_V1, 8, null, null, 0.5f)))));
    TableSync.RoundResult r = sync.runRound();
    assertThat(r.skipped()).isEqualTo(1);

    Table t2 = warehouse.load(sync.tableIdentifier());
    assertThat(t2.schema().findField("id").type()).isEqualTo(Types.LongType.get());
    assertThat(t2.schema().findField("weight").type()).isEqualTo(Types.DoubleType.get());
    assertThat(t2.schema().findField("total").type()).isEqualTo(Types.DecimalType.of(12, 2));
    assertThat(t2.schema().findField("customer.email").isOptional()).isTrue();
    assertThat(t2.schema().findField("lines.element.price").type()).isEqualTo(Types.DoubleType.get());

    List<Record> rows = sorted(warehouse.readAll(sync.tableIdentifier()));
    assertThat(rows).extracting(x -> x.getField(KafkaColumns.OFFSET)).containsExactly(0L, 1L, 3L);
    assertThat(rows).extracting(x -> x.getField("id")).containsExactly(7L, 5_000_000_000L, 8L);
    assertThat(rows).extracting(x -> struct(x, "customer").getField("name")).containsExactly("ann", "ann", "ann");
    assertThat(rows).extracting(x -> struct(x, "customer").getField("tier")).containsExactly("GOLD", "GOLD", "GOLD");
    assertThat(rows).extracting(x -> struct(x, "customer").getField("email")).containsExactly(null, "a@b.c", null);
    Record line0 = (Record) ((List<?>) rows.get(0).getField("lines")).get(0);
    Record line1 = (Record) ((List<?>) rows.get(1).getField("lines")).get(0);
    assertThat(line0.getField("sku")).isEqualTo("a-1");
    assertThat(line0.getField("qty")).isEqualTo(2);
    assertThat(line0.getField("price")).isNull();
    assertThat(line1.getField("price")).isEqualTo(9.5);
    assertThat(rows).extracting(x -> x.getField("attrs")).containsOnly(Map.of("x", 1L));
    assertThat(rows).extracting(x -> x.getField("total")).containsOnly(new BigDecimal("12.34"));
    assertThat(rows).extracting(x -> x.getField("placed")).containsOnly(PLACED);
    assertThat(rows).extracting(x -> x.getField("day")).containsOnly(LocalDate.ofEpochDay(19_000));
    assertThat(rows).extracting(x -> struct(x, "ref") == null ? null : struct(x, "ref").getField("int"))
        .containsExactly(5, null, null);
    assertThat(rows).extracting(x -> struct(x, "ref") == null ? null : struct(x, "ref").getField("string"))
        .containsExactly(null, "r-9", null);
    assertThat(rows).extracting(x -> x.getField("weight")).containsExactly(1.5, 2.25, 0.5);
    assertThat(rows).extracting(x -> x.getField("legacy")).containsExactly("old", null, "old");
    assertThat(rows).extracting(x -> x.getField("note")).containsExactly(null, null, null);

    List<Record> dead = warehouse.readAll(sync.dlqIdentifier());
    assertThat(dead).singleElement().satisfies(d -> {
      assertThat(d.getField(KafkaColumns.OFFSET)).isEqualTo(2L);
      assertThat(d.getField("_error").toString()).contains("column id is long and cannot hold a string");
    });
  }

  // ---- JSON Schema ----

  private static final String JSON_ADDRESS = """
      {"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"string"}}}""";
  private static final String JSON_V1 = """
      {"type":"object","properties":{
        "id":{"type":"integer"},
        "user":{"type":"object","properties":{"name":{"type":"string"}}},
        "at":{"type":"string","format":"date-time"},
        "tags":{"type":"array","items":{"type":"string"}},
        "counts":{"type":"object","additionalProperties":{"type":"integer"}},
        "price":{"type":["number","null"]},
        "kind":{"enum":["a","b"]},
        "ref":{"oneOf":[{"type":"integer"},{"type":"string"}]}}}""";
  private static final String JSON_V2 = """
      {"type":"object","properties":{
        "id":{"type":"integer"},
        "user":{"type":"object","properties":{"name":{"type":"string"},"email":{"type":"string"}}},
        "at":{"type":"string","format":"date-time"},
        "tags":{"type":"array","items":{"type":"string"}},
        "counts":{"type":"object","additionalProperties":{"type":"integer"}},
        "price":{"type":["number","null"]},
        "kind":{"enum":["a","b"]},
        "ref":{"oneOf":[{"type":"integer"},{"type":"string"}]},
        "home":{"$ref":"address.json"},
        "first":{"$ref":"#/definitions/Line"}},
       "definitions":{"Line":{"type":"object","properties":{"sku":{"type":"string"}}}}}""";
  private static final String JSON_ILLEGAL = """
      {"type":"object","properties":{"user":{"type":"string"}}}""";

  private static byte[] framedJson(int id, String json) {
    return WireFormat.frame(id, json.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void jsonSchemaObjectsEvolveWithNestedPropertiesAndReferences() {
    // goal: JSON Schema objects become structs (maps, lists, date-time, oneOf); v2 adds a nested property and $ref'd structs; a struct→string change is dead-lettered
    int v1 = registry.register("events-value", SchemaType.JSON, JSON_V1);
    TestTopic topic = new TestTopic("events", 1);
    topic.append(0, List.of(new SimpleRecord(TS, null, framedJson(v1, """
        {"id": 1, "user": {"name": "ann"}, "at": "2023-11-14T22:13:20Z", "tags": ["x", "y"],
         "counts": {"a": 3}, "price": 2.5, "kind": "a", "ref": 42}"""))));
    TableSync sync = sync(topic);
    sync.runRound();

    registry.register("address", SchemaType.JSON, JSON_ADDRESS);
    int v2 = registry.register("events-value", SchemaType.JSON, JSON_V2, new SchemaReference("address.json", "address", 1));
    int illegal = registry.register("events-other-value", SchemaType.JSON, JSON_ILLEGAL);
    topic.append(0, List.of(
        new SimpleRecord(TS, null, framedJson(v2, """
            {"id": 5000000000, "user": {"name": "bob", "email": "b@c.d"}, "at": "2023-11-15T00:00:00+02:00",
             "tags": [], "counts": {}, "price": null, "kind": "b", "ref": "r-1",
             "home": {"city": "Oslo", "zip": "0150"}, "first": {"sku": "s-1"}}""")),
        new SimpleRecord(TS, null, framedJson(illegal, "{\"user\": \"flat\"}")),
        new SimpleRecord(TS, null, framedJson(v2, "{\"id\": \"not a number\"}"))));
    TableSync.RoundResult r = sync.runRound();
    assertThat(r.skipped()).isEqualTo(2);

    Table t = warehouse.load(sync.tableIdentifier());
    assertThat(t.schema().findField("id").type()).isEqualTo(Types.LongType.get());
    assertThat(t.schema().findField("at").type()).isEqualTo(Types.TimestampType.withZone());
    assertThat(t.schema().findField("user.email").type()).isEqualTo(Types.StringType.get());
    assertThat(t.schema().findField("home.city").type()).isEqualTo(Types.StringType.get());
    assertThat(t.schema().findField("counts").type().isMapType()).isTrue();

    List<Record> rows = sorted(warehouse.readAll(sync.tableIdentifier()));
    assertThat(rows).extracting(x -> x.getField("id")).containsExactly(1L, 5_000_000_000L);
    assertThat(rows).extracting(x -> struct(x, "user").getField("name")).containsExactly("ann", "bob");
    assertThat(rows).extracting(x -> struct(x, "user").getField("email")).containsExactly(null, "b@c.d");
    assertThat(rows).extracting(x -> x.getField("at")).containsExactly(
        OffsetDateTime.parse("2023-11-14T22:13:20Z"), OffsetDateTime.parse("2023-11-14T22:00:00Z"));
    assertThat(rows).extracting(x -> x.getField("tags")).containsExactly(List.of("x", "y"), List.of());
    assertThat(rows).extracting(x -> x.getField("counts")).containsExactly(Map.of("a", 3L), Map.of());
    assertThat(rows).extracting(x -> x.getField("price")).containsExactly(2.5, null);
    assertThat(rows).extracting(x -> x.getField("kind")).containsExactly("a", "b");
    assertThat(rows).extracting(x -> struct(x, "ref").getField("integer")).containsExactly(42L, null);
    assertThat(rows).extracting(x -> struct(x, "ref").getField("string")).containsExactly(null, "r-1");
    assertThat(rows.get(0).getField("home")).isNull();
    assertThat(struct(rows.get(1), "home").getField("city")).isEqualTo("Oslo");
    assertThat(struct(rows.get(1), "home").getField("zip")).isEqualTo("0150");
    assertThat(struct(rows.get(1), "first").getField("sku")).isEqualTo("s-1");

    List<Record> dead = sorted(warehouse.readAll(sync.dlqIdentifier()));
    assertThat(dead).extracting(d -> d.getField(KafkaColumns.OFFSET)).containsExactly(2L, 3L);
    assertThat(dead.get(0).getField("_error").toString()).contains("column user is struct");
    assertThat(dead.get(1).getField("_error").toString()).contains("field $.id should be an integer");
  }

  // ---- Protobuf ----

  private static final String PROTO_COMMON = """
      syntax = "proto3";
      package common;
      message Money { string currency = 1; int64 units = 2; }""";
  private static final String PROTO_V1 = """
      syntax = "proto3";
      package shop;
      import "google/protobuf/timestamp.proto";
      import "common.proto";
      message Header { string source = 1; }
      message Order {
        int32 id = 1;
        Customer customer = 2;
        repeated Line lines = 3;
        map<string, int32> tags = 4;
        Status status = 5;
        google.protobuf.Timestamp placed = 6;
        common.Money total = 7;
        oneof payment { string card = 8; string voucher = 9; }
        float weight = 10;
        uint64 big = 11;
        message Customer { string name = 1; }
        message Line { string sku = 1; int32 qty = 2; }
      }
      enum Status { UNKNOWN = 0; PAID = 1; }""";
  // Order moves to the front (message index [0], the one-byte shortcut), fields are added and widened
  private static final String PROTO_V2 = """
      syntax = "proto3";
      package shop;
      import "google/protobuf/timestamp.proto";
      import "common.proto";
      message Order {
        int64 id = 1;
        Customer customer = 2;
        repeated Line lines = 3;
        map<string, int32> tags = 4;
        Status status = 5;
        google.protobuf.Timestamp placed = 6;
        common.Money total = 7;
        oneof payment { string card = 8; string voucher = 9; }
        double weight = 10;
        uint64 big = 11;
        optional string note = 12;
        message Customer { string name = 1; string email = 2; }
        message Line { string sku = 1; int32 qty = 2; double price = 3; }
      }
      message Header { string source = 1; }
      enum Status { UNKNOWN = 0; PAID = 1; }""";
  private static final String PROTO_ILLEGAL = """
      syntax = "proto3";
      package shop;
      message Order { string id = 1; }""";

  private Descriptor order(int schemaId) {
    return ((ProtobufSchema) registry.client.parsedSchemaById(schemaId)).descriptor().findMessageTypeByName("Order");
  }

  private static DynamicMessage protoOrder(Descriptor d, long id, String email, double weight) {
    Descriptor customer = d.findNestedTypeByName("Customer");
    DynamicMessage.Builder c = DynamicMessage.newBuilder(customer).setField(customer.findFieldByName("name"), "ann");
    if (customer.findFieldByName("email") != null) {
      c.setField(customer.findFieldByName("email"), email);
    }
    Descriptor line = d.findNestedTypeByName("Line");
    DynamicMessage.Builder l = DynamicMessage.newBuilder(line).setField(line.findFieldByName("sku"), "a-1")
        .setField(line.findFieldByName("qty"), 2);
    if (line.findFieldByName("price") != null) {
      l.setField(line.findFieldByName("price"), 9.5);
    }
    Descriptor tagEntry = d.findFieldByName("tags").getMessageType();
    DynamicMessage tag = DynamicMessage.newBuilder(tagEntry).setField(tagEntry.findFieldByNumber(1), "t")
        .setField(tagEntry.findFieldByNumber(2), 4).build();
    Descriptor money = d.findFieldByName("total").getMessageType();
    DynamicMessage total = DynamicMessage.newBuilder(money).setField(money.findFieldByName("currency"), "EUR")
        .setField(money.findFieldByName("units"), 12L).build();
    Timestamp placed = Timestamp.newBuilder().setSeconds(TS / 1000).setNanos(5_000).build();
    DynamicMessage.Builder b = DynamicMessage.newBuilder(d)
        .setField(d.findFieldByName("id"), d.findFieldByName("id").getJavaType() == com.google.protobuf.Descriptors.FieldDescriptor.JavaType.INT
            ? (Object) (int) id : (Object) id)
        .setField(d.findFieldByName("customer"), c.build())
        .addRepeatedField(d.findFieldByName("lines"), l.build())
        .addRepeatedField(d.findFieldByName("tags"), tag)
        .setField(d.findFieldByName("status"), d.getFile().findEnumTypeByName("Status").findValueByName("PAID"))
        .setField(d.findFieldByName("placed"), DynamicMessage.newBuilder(placed).build())
        .setField(d.findFieldByName("total"), total)
        .setField(d.findFieldByName("card"), "visa")
        .setField(d.findFieldByName("big"), -1L); // 2^64 - 1 as unsigned
    if (d.findFieldByName("weight").getJavaType() == com.google.protobuf.Descriptors.FieldDescriptor.JavaType.FLOAT) {
      b.setField(d.findFieldByName("weight"), (float) weight);
    } else {
      b.setField(d.findFieldByName("weight"), weight);
    }
    return b.build();
  }

  @Test
  void protobufMessagesWithReferencesEvolveAndFollowTheMessageIndex() {
    // goal: DynamicMessage decoding against the registered descriptor (with an import by reference) lands nested typed rows; v2 adds and widens
    registry.register("common", SchemaType.PROTOBUF, PROTO_COMMON);
    SchemaReference common = new SchemaReference("common.proto", "common", 1);
    int v1 = registry.register("shop-value", SchemaType.PROTOBUF, PROTO_V1, common);
    TestTopic topic = new TestTopic("shop", 1);
    topic.append(0, List.of(new SimpleRecord(TS, null, TestRegistry.framedProtobuf(v1, List.of(1), protoOrder(order(v1), 7, null, 1.5)))));
    TableSync sync = sync(topic);
    sync.runRound();
    Table t1 = warehouse.load(sync.tableIdentifier());
    assertThat(t1.schema().findField("id").type()).isEqualTo(Types.IntegerType.get());
    assertThat(t1.schema().findField("weight").type()).isEqualTo(Types.FloatType.get());

    int v2 = registry.register("shop-value", SchemaType.PROTOBUF, PROTO_V2, common);
    int illegal = registry.register("shop-other-value", SchemaType.PROTOBUF, PROTO_ILLEGAL);
    Descriptor bad = ((ProtobufSchema) registry.client.parsedSchemaById(illegal)).descriptor().findMessageTypeByName("Order");
    topic.append(0, List.of(
        new SimpleRecord(TS, null, TestRegistry.framedProtobuf(v2, List.of(0), protoOrder(order(v2), 5_000_000_000L, "a@b.c", 2.25))),
        new SimpleRecord(TS, null, TestRegistry.framedProtobuf(illegal, List.of(0),
            DynamicMessage.newBuilder(bad).setField(bad.findFieldByName("id"), "x").build())),
        new SimpleRecord(TS, null, TestRegistry.framedProtobuf(v1, List.of(7), protoOrder(order(v1), 1, null, 1)))));
    TableSync.RoundResult r = sync.runRound();
    assertThat(r.skipped()).isEqualTo(2);

    Table t2 = warehouse.load(sync.tableIdentifier());
    assertThat(t2.schema().findField("id").type()).isEqualTo(Types.LongType.get());
    assertThat(t2.schema().findField("weight").type()).isEqualTo(Types.DoubleType.get());
    assertThat(t2.schema().findField("big").type()).isEqualTo(Types.DecimalType.of(20, 0));
    assertThat(t2.schema().findField("customer.email").type()).isEqualTo(Types.StringType.get());
    assertThat(t2.schema().findField("lines.element.price").type()).isEqualTo(Types.DoubleType.get());
    assertThat(t2.schema().findField("tags").type().isMapType()).isTrue();

    List<Record> rows = sorted(warehouse.readAll(sync.tableIdentifier()));
    assertThat(rows).extracting(x -> x.getField("id")).containsExactly(7L, 5_000_000_000L);
    assertThat(rows).extracting(x -> struct(x, "customer").getField("name")).containsExactly("ann", "ann");
    assertThat(rows).extracting(x -> struct(x, "customer").getField("email")).containsExactly(null, "a@b.c");
    assertThat(rows).extracting(x -> ((Record) ((List<?>) x.getField("lines")).get(0)).getField("qty")).containsExactly(2, 2);
    assertThat(rows).extracting(x -> ((Record) ((List<?>) x.getField("lines")).get(0)).getField("price")).containsExactly(null, 9.5);
    assertThat(rows).extracting(x -> x.getField("tags")).containsOnly(Map.of("t", 4));
    assertThat(rows).extracting(x -> x.getField("status")).containsOnly("PAID");
    assertThat(rows).extracting(x -> x.getField("placed")).containsOnly(PLACED.plusNanos(5_000));
    assertThat(rows).extracting(x -> struct(x, "total").getField("currency")).containsOnly("EUR");
    assertThat(rows).extracting(x -> struct(x, "total").getField("units")).containsOnly(12L);
    assertThat(rows).extracting(x -> x.getField("card")).containsOnly("visa");
    assertThat(rows).extracting(x -> x.getField("voucher")).containsOnly((Object) null);
    assertThat(rows).extracting(x -> x.getField("weight")).containsExactly(1.5, 2.25);
    assertThat(rows).extracting(x -> x.getField("big")).containsOnly(new BigDecimal("18446744073709551615"));
    assertThat(rows).extracting(x -> x.getField("note")).containsOnly((Object) null);

    List<Record> dead = sorted(warehouse.readAll(sync.dlqIdentifier()));
    assertThat(dead).extracting(d -> d.getField(KafkaColumns.OFFSET)).containsExactly(2L, 3L);
    assertThat(dead.get(0).getField("_error").toString()).contains("column id is long and cannot hold a string");
    assertThat(dead.get(1).getField("_error").toString()).contains("message index [7]");
  }

  @Test
  void aRequiredColumnTheRecordsNoLongerCarryBecomesOptional() {
    // goal: a table made beforehand with a required value column keeps taking records whose schema dropped that field
    TestTopic topic = new TestTopic("legacy", 1);
    TableSync sync = sync(topic);
    org.apache.iceberg.Schema initial = new io.tidemark.table.convert.RecordConverter(
        TableTopicConfig.parse(Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "json"))).initialSchema();
    List<Types.NestedField> columns = new ArrayList<>(initial.columns());
    columns.add(Types.NestedField.required(100, "region", Types.StringType.get()));
    ((org.apache.iceberg.catalog.SupportsNamespaces) warehouse.freshCatalog()).createNamespace(sync.tableIdentifier().namespace());
    warehouse.freshCatalog().createTable(sync.tableIdentifier(), new org.apache.iceberg.Schema(columns));
    int v1 = registry.register("legacy-value", SchemaType.AVRO, AVRO_ILLEGAL.toString());
    topic.append(0, List.of(new SimpleRecord(TS, null, TestRegistry.framedAvro(v1, AVRO_ILLEGAL, Map.of("id", "x")))));

    TableSync.RoundResult r = sync.runRound();

    assertThat(r.skipped()).isZero();
    Table t = warehouse.load(sync.tableIdentifier());
    assertThat(t.schema().findField("region").isOptional()).isTrue();
    assertThat(warehouse.readAll(sync.tableIdentifier())).singleElement().satisfies(row -> {
      assertThat(row.getField("id")).isEqualTo("x");
      assertThat(row.getField("region")).isNull();
    });
    assertThat(t.schema().findField(KafkaColumns.OFFSET).isRequired()).isTrue();
    assertThat(t.schema().findField("id").type().typeId()).isEqualTo(Type.TypeID.STRING);
  }
}
