package io.tidemark.registry.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.registry.log.RegistryRecord.ConfigRecord;
import io.tidemark.registry.log.RegistryRecord.DeleteSubjectRecord;
import io.tidemark.registry.log.RegistryRecord.ModeRecord;
import io.tidemark.registry.log.RegistryRecord.SchemaRecord;
import io.tidemark.registry.log.RegistryRecord.SchemaTombstone;
import io.tidemark.registry.schema.SchemaReference;
import io.tidemark.registry.schema.SchemaType;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Goal: _schemas records have Confluent's key/value JSON layout and decode back to the same records. */
class RecordCodecTest {

  private static String s(byte[] b) {
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  @Test
  void schemaRecordsUseConfluentLayout() {
    // Goal: SCHEMA key {keytype,subject,version,magic:1} and value {subject,version,id,schemaType,references,schema,deleted}.
    SchemaRecord record = new SchemaRecord("orders-value", 3, 17, SchemaType.PROTOBUF, "syntax = \"proto3\";",
        List.of(new SchemaReference("a.proto", "a", 1)), false);
    byte[][] kv = RecordCodec.encode(record);
    assertThat(s(kv[0])).isEqualTo("{\"keytype\":\"SCHEMA\",\"subject\":\"orders-value\",\"version\":3,\"magic\":1}");
    assertThat(s(kv[1])).isEqualTo("{\"subject\":\"orders-value\",\"version\":3,\"id\":17,\"schemaType\":\"PROTOBUF\","
        + "\"references\":[{\"name\":\"a.proto\",\"subject\":\"a\",\"version\":1}],\"schema\":\"syntax = \\\"proto3\\\";\",\"deleted\":false}");
    assertThat(RecordCodec.decode(kv[0], kv[1])).isEqualTo(record);
    SchemaRecord avro = new SchemaRecord("s", 1, 1, SchemaType.AVRO, "\"int\"", List.of(), true);
    byte[][] avroKv = RecordCodec.encode(avro);
    assertThat(s(avroKv[1])).doesNotContain("schemaType").contains("\"deleted\":true");
    assertThat(RecordCodec.decode(avroKv[0], avroKv[1])).isEqualTo(avro);
  }

  @Test
  void otherKeyTypesRoundTrip() {
    // Goal: CONFIG, MODE, DELETE_SUBJECT and tombstones encode as Confluent does and decode back.
    for (RegistryRecord record : List.of(new ConfigRecord(null, "FULL"), new ConfigRecord("s", null),
        new ModeRecord("s", "IMPORT"), new ModeRecord(null, "READONLY"), new DeleteSubjectRecord("s", 4),
        new SchemaTombstone("s", 2))) {
      byte[][] kv = RecordCodec.encode(record);
      assertThat(RecordCodec.decode(kv[0], kv[1])).isEqualTo(record);
    }
    assertThat(s(RecordCodec.encode(new ConfigRecord(null, "FULL"))[0])).isEqualTo("{\"keytype\":\"CONFIG\",\"subject\":null,\"magic\":0}");
    assertThat(s(RecordCodec.encode(new ConfigRecord(null, "FULL"))[1])).isEqualTo("{\"compatibilityLevel\":\"FULL\"}");
    assertThat(s(RecordCodec.encode(new DeleteSubjectRecord("s", 4))[1])).isEqualTo("{\"subject\":\"s\",\"version\":4}");
    assertThat(RecordCodec.encode(new SchemaTombstone("s", 2))[1]).isNull();
  }

  @Test
  void unknownKeyTypesAreIgnoredAndGarbageIsRefused() {
    // Goal: NOOP and future key types replay as no-ops; bytes that are not JSON objects are refused.
    assertThat(RecordCodec.decode("{\"keytype\":\"NOOP\",\"magic\":0}".getBytes(StandardCharsets.UTF_8), null))
        .isInstanceOf(RegistryRecord.Ignored.class);
    assertThatThrownBy(() -> RecordCodec.decode("nope".getBytes(StandardCharsets.UTF_8), null))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
