package io.tidemark.table.sync;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.DynamicMessage;
import io.tidemark.registry.client.WireFormat;
import io.tidemark.registry.schema.SchemaType;
import io.tidemark.registry.schema.protobuf.ProtobufSchema;
import io.tidemark.table.commit.TableCommitter;
import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.convert.KafkaColumns;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.iceberg.data.Record;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;

/**
 * Goal: by_latest_schema decodes unframed values with a subject's latest version and picks up a
 * newer one (on its refresh interval, or at once when a value does not decode); unknown schema ids
 * and undecodable values take the error path of each tolerance mode, with and without the DLQ,
 * against a real schema registry.
 */
class LatestSchemaAndErrorsTest extends RegistryTableTest {

  private static final Schema V1 = new Schema.Parser().parse("""
      {"type":"record","name":"Ev","fields":[{"name":"n","type":"int"}]}""");
  private static final Schema V2 = new Schema.Parser().parse("""
      {"type":"record","name":"Ev","fields":[{"name":"n","type":"int"},{"name":"tag","type":"string","default":""}]}""");
  private static final Schema V3 = new Schema.Parser().parse("""
      {"type":"record","name":"Ev","fields":[{"name":"n","type":"long"},{"name":"tag","type":"string","default":""}]}""");

  private static SimpleRecord value(byte[] v) {
    return new SimpleRecord(1L, null, v);
  }

  @Test
  void latestSchemaDecodesUnframedValuesAndFollowsNewVersions() {
    // goal: <topic>-value's latest version decodes; a newer version is used at once when a value needs it, and after the refresh interval anyway
    registry.register("ticks-value", SchemaType.AVRO, V1.toString());
    TestTopic topic = new TestTopic("ticks", 1);
    topic.append(0, List.of(value(TestRegistry.avro(V1, Map.of("n", 1)))));
    TableSync sync = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "by_latest_schema"));
    sync.runRound();

    // v2 appends a field: its values do not decode with the cached v1 (bytes left over), so v2 is fetched
    // again at once, unless v1 was fetched under a second ago: then the partition waits for that second
    registry.register("ticks-value", SchemaType.AVRO, V2.toString());
    topic.append(0, List.of(value(TestRegistry.avro(V2, Map.of("n", 2, "tag", "b")))));
    TableSync.RoundResult held = sync.runRound();
    assertThat(held.skipped()).isZero();
    assertThat(held.moreData()).isTrue();
    registry.clockMs.addAndGet(1_000);
    assertThat(sync.runRound().skipped()).isZero();

    // v3 widens n: a small long decodes with v2 as well, so v3 is used only once the refresh interval is up
    registry.register("ticks-value", SchemaType.AVRO, V3.toString());
    registry.clockMs.addAndGet(2_000);
    topic.append(0, List.of(value(TestRegistry.avro(V3, Map.of("n", 7L, "tag", "c")))));
    assertThat(sync.runRound().skipped()).isZero();
    assertThat(warehouse.load(sync.tableIdentifier()).schema().findField("n").type().typeId())
        .isEqualTo(org.apache.iceberg.types.Type.TypeID.INTEGER);

    registry.clockMs.addAndGet(10_001);
    topic.append(0, List.of(value(TestRegistry.avro(V3, Map.of("n", 8L, "tag", "d")))));
    assertThat(sync.runRound().skipped()).isZero();
    assertThat(warehouse.load(sync.tableIdentifier()).schema().findField("n").type().typeId())
        .isEqualTo(org.apache.iceberg.types.Type.TypeID.LONG);

    List<Record> rows = RegistrySchemaEvolutionTest.sorted(warehouse.readAll(sync.tableIdentifier()));
    assertThat(rows).extracting(r -> r.getField("n")).containsExactly(1L, 2L, 7L, 8L);
    assertThat(rows).extracting(r -> r.getField("tag")).containsExactly(null, "b", "c", "d");
  }

  @Test
  void latestSchemaHonoursTheSubjectAndProtobufMessageOverrides() {
    // goal: table.topic.convert.value.subject and .message.full.name pick the schema and the message
    int id = registry.register("custom", SchemaType.PROTOBUF, """
        syntax = "proto3";
        package p;
        message Other { bool flag = 1; }
        message Ping { string host = 1; int32 ms = 2; }""");
    Descriptor ping = ((ProtobufSchema) registry.client.parsedSchemaById(id)).descriptor().findMessageTypeByName("Ping");
    TestTopic topic = new TestTopic("pings", 1);
    topic.append(0, List.of(value(DynamicMessage.newBuilder(ping).setField(ping.findFieldByName("host"), "h1")
        .setField(ping.findFieldByName("ms"), 12).build().toByteArray())));
    TableSync sync = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "by_latest_schema",
        "automq.table.topic.convert.value.subject", "custom",
        TableTopicConfig.CONVERT_VALUE_MESSAGE_FULL_NAME, "p.Ping"));

    sync.runRound();

    assertThat(warehouse.readAll(sync.tableIdentifier())).singleElement().satisfies(r -> {
      assertThat(r.getField("host")).isEqualTo("h1");
      assertThat(r.getField("ms")).isEqualTo(12);
      assertThat(r.getField("flag")).isNull();
    });
  }

  private TestTopic badTopic(String name) {
    int id = registry.register(name + "-value", SchemaType.AVRO, V1.toString());
    TestTopic topic = new TestTopic(name, 1);
    topic.append(0, List.of(
        value(TestRegistry.framedAvro(id, V1, Map.of("n", 1))),
        value(TestRegistry.framedAvro(999, V1, Map.of("n", 2))),                  // unknown schema id
        value("not framed".getBytes(StandardCharsets.UTF_8)),                    // no magic byte
        value(WireFormat.frame(id, new byte[] {(byte) 0x80})),                    // truncated Avro varint
        value(TestRegistry.framedAvro(id, V1, Map.of("n", 5)))));
    return topic;
  }

  @Test
  void underToleranceNoneAnUnknownSchemaIdPausesThePartition() {
    // goal: errors.tolerance=none stops before the first bad record and says why; nothing after it lands
    TestTopic topic = badTopic("strict");
    TableSync sync = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "by_schema_id",
        TableTopicConfig.ERRORS_TOLERANCE, "none", TableTopicConfig.ERRORS_DLQ_ENABLE, "true"));

    sync.runRound();

    assertThat(sync.status(0).state()).isEqualTo(TableSync.PartitionState.PAUSED);
    assertThat(sync.status(0).pauseReason()).contains("offset 1").contains("schema id 999 is not registered");
    assertThat(warehouse.readAll(sync.tableIdentifier())).extracting(r -> r.getField("n")).containsExactly(1);
    assertThat(new TableCommitter(warehouse.load(sync.tableIdentifier())).committed().nextOffsets()).containsEntry(0, 1L);
  }

  @Test
  void underInvalidDataBadRecordsAreSkippedAndDeadLetteredWithTheReason() {
    // goal: unknown id, unframed and undecodable values are counted, written to <table>_dlq with the reason, and later records land
    TestTopic topic = badTopic("lenient");
    TableSync sync = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "by_schema_id",
        TableTopicConfig.ERRORS_TOLERANCE, "invalid_data", TableTopicConfig.ERRORS_DLQ_ENABLE, "true"));

    TableSync.RoundResult r = sync.runRound();

    assertThat(r.skipped()).isEqualTo(3);
    assertThat(RegistrySchemaEvolutionTest.sorted(warehouse.readAll(sync.tableIdentifier()))).extracting(x -> x.getField("n"))
        .containsExactly(1, 5);
    List<Record> dead = RegistrySchemaEvolutionTest.sorted(warehouse.readAll(sync.dlqIdentifier()));
    assertThat(dead).extracting(x -> x.getField(KafkaColumns.OFFSET)).containsExactly(1L, 2L, 3L);
    assertThat(dead.get(0).getField("_error").toString()).contains("schema id 999 is not registered");
    assertThat(dead.get(1).getField("_error").toString()).contains("not in the schema registry wire format");
    assertThat(dead.get(2).getField("_error").toString()).contains("do not decode with the Avro schema");
  }

  @Test
  void aRegistryOutageHoldsThePartitionUnderInvalidDataButIsSkippedUnderAll() {
    // goal: an unreachable registry is not bad data: invalid_data waits (nothing lost), all skips them into the DLQ
    TestTopic topic = badTopic("outage");
    registry.close(); // nothing was looked up yet: every schema id needs the registry
    TableSync waiting = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "by_schema_id",
        TableTopicConfig.ERRORS_TOLERANCE, "invalid_data"));
    TableSync.RoundResult held = waiting.runRound();
    assertThat(held.committed()).isFalse();
    assertThat(held.moreData()).isTrue();
    assertThat(held.skipped()).isZero();

    TableSync skipping = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "by_schema_id",
        TableTopicConfig.ERRORS_TOLERANCE, "all", TableTopicConfig.TABLE_NAME, "outage_all", TableTopicConfig.ERRORS_DLQ_ENABLE, "true"));
    TableSync.RoundResult skipped = skipping.runRound();
    assertThat(skipped.skipped()).isEqualTo(5);
    assertThat(skipped.nextOffsets()).containsEntry(0, 5L);
    assertThat(warehouse.readAll(skipping.dlqIdentifier())).extracting(x -> x.getField("_error").toString())
        .allSatisfy(e -> assertThat(e).containsAnyOf("unreachable", "not in the schema registry wire format"));
  }

  private static final Schema KEY = new Schema.Parser().parse("""
      {"type":"record","name":"Key","fields":[{"name":"id","type":"long"},{"name":"region","type":"string"}]}""");

  @Test
  void keysDecodeWithTheirOwnSchemaByIdOrLatest() {
    // goal: convert.key.type by_schema_id gives a struct _kafka_key, by_latest_schema of <topic>-key a primitive one; a bad key is dead-lettered
    int keyId = registry.register("keyed-key", SchemaType.AVRO, KEY.toString());
    int valueId = registry.register("keyed-value", SchemaType.AVRO, V1.toString());
    TestTopic framed = new TestTopic("keyed", 1);
    framed.append(0, List.of(
        new SimpleRecord(1L, TestRegistry.framedAvro(keyId, KEY, Map.of("id", 42L, "region", "eu")),
            TestRegistry.framedAvro(valueId, V1, Map.of("n", 1))),
        new SimpleRecord(1L, "plain".getBytes(StandardCharsets.UTF_8), TestRegistry.framedAvro(valueId, V1, Map.of("n", 2))),
        new SimpleRecord(1L, null, TestRegistry.framedAvro(valueId, V1, Map.of("n", 3)))));
    TableSync byId = sync(framed, Map.of(TableTopicConfig.CONVERT_KEY_TYPE, "by_schema_id",
        TableTopicConfig.CONVERT_VALUE_TYPE, "by_schema_id", TableTopicConfig.ERRORS_DLQ_ENABLE, "true"));
    assertThat(byId.runRound().skipped()).isEqualTo(1);
    List<Record> rows = RegistrySchemaEvolutionTest.sorted(warehouse.readAll(byId.tableIdentifier()));
    assertThat(rows).extracting(r -> r.getField("n")).containsExactly(1, 3);
    Record key = (Record) rows.get(0).getField(KafkaColumns.KEY);
    assertThat(key.getField("id")).isEqualTo(42L);
    assertThat(key.getField("region")).isEqualTo("eu");
    assertThat(rows.get(1).getField(KafkaColumns.KEY)).isNull();
    assertThat(warehouse.readAll(byId.dlqIdentifier())).singleElement()
        .satisfies(d -> assertThat(d.getField("_error").toString()).startsWith("the key: "));

    registry.register("counted-key", SchemaType.AVRO, "\"long\"");
    TestTopic latest = new TestTopic("counted", 1);
    latest.append(0, List.of(new SimpleRecord(1L, TestRegistry.avroDatum(Schema.create(Schema.Type.LONG), 7L),
        "{\"n\": 1}".getBytes(StandardCharsets.UTF_8))));
    TableSync byLatest = sync(latest, Map.of(TableTopicConfig.CONVERT_KEY_TYPE, "by_latest_schema",
        TableTopicConfig.CONVERT_VALUE_TYPE, "json"));
    byLatest.runRound();
    assertThat(warehouse.readAll(byLatest.tableIdentifier())).singleElement()
        .satisfies(r -> assertThat(r.getField(KafkaColumns.KEY)).isEqualTo(7L));
  }

  @Test
  void aSubjectWithNoVersionHoldsThePartitionInsteadOfDroppingRecords() {
    // goal: by_latest_schema with an unregistered subject is a setup problem: invalid_data waits, and the records land once it is registered
    TestTopic topic = new TestTopic("early", 1);
    topic.append(0, List.of(value(TestRegistry.avro(V1, Map.of("n", 1)))));
    TableSync sync = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "by_latest_schema"));
    TableSync.RoundResult waiting = sync.runRound();
    assertThat(waiting.committed()).isFalse();
    assertThat(waiting.skipped()).isZero();

    registry.register("early-value", SchemaType.AVRO, V1.toString());
    sync.runRound();
    assertThat(warehouse.readAll(sync.tableIdentifier())).extracting(r -> r.getField("n")).containsExactly(1);
  }
}
