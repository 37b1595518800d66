package io.tidemark.table.convert;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.registry.schema.SchemaType;
import io.tidemark.registry.schema.protobuf.ProtobufSchema;
import io.tidemark.registry.schema.SchemaFormats;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** Goal: the schema-to-column rules refuse what cannot be a column and read the framing edge cases exactly. */
class DecoderTest {

  private static ProtobufSchema proto(String text) {
    return (ProtobufSchema) new SchemaFormats().format(SchemaType.PROTOBUF).parse(text, List.of(), List.of());
  }

  @Test
  void recursiveSchemasAreRefusedInEveryFormat() throws Exception {
    // goal: a type containing itself cannot become columns; the reason names it
    Schema avro = new Schema.Parser().parse("""
        {"type":"record","name":"Node","fields":[{"name":"next","type":["null","Node"]}]}""");
    assertThatThrownBy(() -> new AvroDecoder(avro)).isInstanceOf(InvalidRecordException.class).hasMessageContaining("Node is recursive");

    var json = new ObjectMapper().readTree("""
        {"type":"object","properties":{"child":{"$ref":"#"}}}""");
    assertThatThrownBy(() -> new JsonSchemaDecoder(json, Map.of())).isInstanceOf(InvalidRecordException.class)
        .hasMessageContaining("$ref # is recursive");

    ProtobufSchema p = proto("""
        syntax = "proto3";
        message Tree { repeated Tree children = 1; }""");
    assertThatThrownBy(() -> new ProtobufDecoder(p.firstMessage())).isInstanceOf(InvalidRecordException.class)
        .hasMessageContaining("Tree is recursive");
  }

  @Test
  void messageIndexesFollowTheConfluentEncoding() throws Exception {
    // goal: [0] as one zero byte, nested paths, multi-byte varints and indexes out of range
    ProtobufSchema p = proto("""
        syntax = "proto3";
        message A { message Inner { int32 x = 1; } }
        message B { int32 y = 1; }""");
    assertThat(ProtobufDecoder.messageAt(p.descriptor(), ByteBuffer.wrap(new byte[] {0})).getName()).isEqualTo("A");
    assertThat(ProtobufDecoder.messageAt(p.descriptor(), ByteBuffer.wrap(new byte[] {2, 2})).getName()).isEqualTo("B");
    assertThat(ProtobufDecoder.messageAt(p.descriptor(), ByteBuffer.wrap(new byte[] {4, 0, 0})).getName()).isEqualTo("Inner");
    ByteBuffer rest = ByteBuffer.wrap(new byte[] {2, 2, 8, 5});
    ProtobufDecoder.messageAt(p.descriptor(), rest);
    assertThat(rest.remaining()).isEqualTo(2); // the message bytes are left
    // index 200 = zig-zag 400 = varint 0x90 0x03: out of range
    assertThatThrownBy(() -> ProtobufDecoder.messageAt(p.descriptor(), ByteBuffer.wrap(new byte[] {2, (byte) 0x90, 3})))
        .isInstanceOf(InvalidRecordException.class).hasMessageContaining("[200]");
    assertThatThrownBy(() -> ProtobufDecoder.messageAt(p.descriptor(), ByteBuffer.wrap(new byte[] {2})))
        .isInstanceOf(InvalidRecordException.class).hasMessageContaining("end inside");
  }

  @Test
  void jsonSchemaTypeListsAndEmptyObjectsMapAsDocumented() throws Exception {
    // goal: [T, null] is optional T, several types a union struct, an object without properties its JSON text
    var schema = new ObjectMapper().readTree("""
        {"type":"object","properties":{
          "a":{"type":["integer","null"]},
          "b":{"type":["integer","string"]},
          "c":{"type":"object"}}}""");
    JsonSchemaDecoder d = new JsonSchemaDecoder(schema, Map.of());
    Types.StructType t = d.type().asStructType();
    assertThat(t.field("a").type()).isEqualTo(Types.LongType.get());
    assertThat(t.field("b").type().asStructType().fields()).extracting(Types.NestedField::name).containsExactly("integer", "string");
    assertThat(t.field("c").type()).isEqualTo(Types.StringType.get());
    @SuppressWarnings("unchecked")
    Map<String, Object> v = (Map<String, Object>) d.decode(ByteBuffer.wrap(
        "{\"a\": null, \"b\": \"s\", \"c\": {\"k\": [1]}}".getBytes(StandardCharsets.UTF_8)));
    assertThat(v.get("a")).isNull();
    Map<String, Object> union = new java.util.HashMap<>();
    union.put("integer", null);
    union.put("string", "s");
    assertThat(v.get("b")).isEqualTo(union);
    assertThat(v.get("c")).isEqualTo("{\"k\":[1]}");
  }
}
