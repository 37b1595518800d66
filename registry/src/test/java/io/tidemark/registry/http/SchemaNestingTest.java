package io.tidemark.registry.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.registry.RegistryConfig;
import io.tidemark.registry.schema.SchemaLimits;
import io.tidemark.registry.store.MemorySchemaStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Schemas nested past the bound get 422 with the bound in the message; schemas within it register;
 * a schema that does not parse says why without the parser's class names.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SchemaNestingTest {
  private static final int HOSTILE = 5000;
  private RegistryHarness h;

  @BeforeAll
  void start() {
    h = new RegistryHarness(new MemorySchemaStore(), RegistryConfig.defaults(0).withMaxRequestBytes(64 * 1024 * 1024));
  }

  @AfterAll
  void stop() {
    h.close();
  }

  static String protobuf(int depth) {
    StringBuilder proto = new StringBuilder("syntax = \"proto3\";\n");
    for (int i = 0; i < depth; i++) {
      proto.append("message M").append(i).append(" { int32 f").append(i).append(" = 1;\n");
    }
    return proto.append("}".repeat(depth)).toString();
  }

  static String avro(int depth) {
    StringBuilder avro = new StringBuilder();
    for (int i = 0; i < depth; i++) {
      avro.append("{\"type\":\"record\",\"name\":\"R").append(i).append("\",\"fields\":[{\"name\":\"f\",\"type\":");
    }
    avro.append("\"int\"");
    avro.append("}]}".repeat(depth));
    return avro.toString();
  }

  static String jsonSchema(int depth) {
    return "{\"type\":\"object\",\"properties\":{\"a\":".repeat(depth) + "{\"type\":\"string\"}" + "}}".repeat(depth);
  }

  private void assertRefused(String type, String schema) {
    RegistryHarness.Reply reply = h.post("/subjects/deep-" + type + "/versions", RegistryHarness.schemaBody(type, schema));
    assertThat(reply.status()).as("%s", reply).isEqualTo(422);
    assertThat(reply.errorCode()).isEqualTo(42201);
    assertThat(reply.json().path("message").asText()).contains("deeper than");
    ErrorBodies.assertFreeOfInternals(reply.text());
  }

  @Test
  void hostileNestingIsRefusedWith422() {
    // Goal: a 5000-deep schema of each format is a 422 naming the bound, not a 500 with StackOverflowError.
    assertRefused("PROTOBUF", protobuf(HOSTILE));
    assertRefused(null, avro(HOSTILE));
    assertRefused("JSON", jsonSchema(HOSTILE));
    assertRefused("PROTOBUF", protobuf(SchemaLimits.MAX_NESTING_DEPTH + 1));
    assertThat(h.get("/schemas/types").status()).isEqualTo(200);
  }

  @Test
  void nestingWithinTheBoundRegisters() {
    // Goal: the bound leaves room for deep real schemas.
    int depth = SchemaLimits.MAX_NESTING_DEPTH - 4;
    assertThat(h.register("ok-proto", "PROTOBUF", protobuf(SchemaLimits.MAX_NESTING_DEPTH))).isPositive();
    assertThat(h.register("ok-avro", null, avro(depth))).isPositive();
    assertThat(h.register("ok-json", "JSON", jsonSchema(SchemaLimits.MAX_JSON_DEPTH / 4 - 2))).isPositive();
  }

  @Test
  void unparsableAvroSaysWhyWithoutInternals() {
    // Goal: Avro's wrapped Jackson error reaches the client as Jackson's words, not "com.fasterxml...Exception: ...".
    RegistryHarness.Reply reply = h.post("/subjects/broken/versions", RegistryHarness.schemaBody(null, "{\"type\": rec"));
    assertThat(reply.status()).isEqualTo(422);
    assertThat(reply.json().path("message").asText()).contains("not JSON");
    ErrorBodies.assertFreeOfInternals(reply.text());
  }
}
