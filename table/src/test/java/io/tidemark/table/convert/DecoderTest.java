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

  @Test
  void avroUnionBranchesGetDistinctFieldNames() throws Exception {
    // goal: two branch records with one simple name in different namespaces become two fields, the written one set
    Schema s = new Schema.Parser().parse("""
        {"type":"record","name":"Ev","fields":[{"name":"u","type":["null",
          {"type":"record","name":"Id","namespace":"a","fields":[{"name":"x","type":"int"}]},
          {"type":"record","name":"Id","namespace":"b","fields":[{"name":"y","type":"string"}]}]}]}""");
    AvroDecoder d = new AvroDecoder(s);
    assertThat(d.type().asStructType().field("u").type().asStructType().fields()).extracting(Types.NestedField::name)
        .containsExactly("Id", "Id2");
    org.apache.avro.generic.GenericData.Record b = new org.apache.avro.generic.GenericData.Record(
        s.getField("u").schema().getTypes().get(2));
    b.put("y", "v");
    org.apache.avro.generic.GenericData.Record ev = new org.apache.avro.generic.GenericData.Record(s);
    ev.put("u", b);
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    org.apache.avro.io.BinaryEncoder enc = org.apache.avro.io.EncoderFactory.get().binaryEncoder(out, null);
    new org.apache.avro.generic.GenericDatumWriter<Object>(s).write(ev, enc);
    enc.flush();
    Map<?, ?> row = (Map<?, ?>) d.decode(ByteBuffer.wrap(out.toByteArray()));
    Map<?, ?> union = (Map<?, ?>) row.get("u");
    assertThat(union.get("Id")).isNull();
    assertThat(union.get("Id2")).isEqualTo(Map.of("y", "v"));
  }
}
