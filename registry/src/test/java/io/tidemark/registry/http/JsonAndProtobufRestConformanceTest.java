package io.tidemark.registry.http;

import static io.tidemark.registry.http.RegistryHarness.schemaBody;
import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.registry.http.RegistryHarness.Reply;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Goal: the REST API serves JSON Schema and Protobuf subjects like Avro ones: schemaType in bodies, 42201, 409, references, normalize. */
class JsonAndProtobufRestConformanceTest {
  static final String JSON_V1 = "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"}},\"additionalProperties\":false}";
  static final String JSON_V2 = "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"number\"},\"name\":{\"type\":\"string\"}},"
      + "\"additionalProperties\":false}";
  static final String JSON_BAD_EVOLUTION = "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"}},\"additionalProperties\":false}";
  static final String PROTO_V1 = "syntax = \"proto3\";\npackage shop;\n\nmessage Order {\n  string id = 1;\n  int32 qty = 2;\n}\n";
  static final String PROTO_V2 = "syntax = \"proto3\";\npackage shop;\n\nmessage Order {\n  string id = 1;\n  int64 qty = 2;\n  string note = 3;\n}\n";
  static final String PROTO_BAD_EVOLUTION = "syntax = \"proto3\";\npackage shop;\n\nmessage Order {\n  string id = 1;\n  string qty = 2;\n}\n";

  RegistryHarness h;

  @BeforeEach
  void start() {
    h = new RegistryHarness();
  }

  @AfterEach
  void stop() {
    h.close();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"JSON", "PROTOBUF"})
  void registerReadLookupAndEvolve(String type) {
    // Goal: for each non-Avro type: register, idempotent re-register, read back with schemaType, lookup, compatible evolution, 409 on incompatible.
    String v1 = type.equals("JSON") ? JSON_V1 : PROTO_V1;
    String v2 = type.equals("JSON") ? JSON_V2 : PROTO_V2;
    String bad = type.equals("JSON") ? JSON_BAD_EVOLUTION : PROTO_BAD_EVOLUTION;
    int id1 = h.register("t", type, v1);
    assertThat(h.register("t", type, v1)).isEqualTo(id1);
    Reply version = h.get("/subjects/t/versions/1");
    assertThat(version.json().get("schemaType").asText()).isEqualTo(type);
    assertThat(version.json().get("schema").asText()).isEqualTo(type.equals("JSON") ? v1 : v1.strip());
    assertThat(h.get("/schemas/ids/" + id1).json().get("schemaType").asText()).isEqualTo(type);
    assertThat(h.post("/subjects/t", schemaBody(type, v1)).json().get("version").asInt()).isEqualTo(1);
    assertThat(h.post("/subjects/t", schemaBody(null, v1)).status()).as("as AVRO the text is another schema or invalid")
        .isIn(404, 422);

    Reply verbose = h.post("/compatibility/subjects/t/versions/latest?verbose=true", schemaBody(type, bad));
    assertThat(verbose.json().get("is_compatible").asBoolean()).isFalse();
    assertThat(verbose.json().get("messages").size()).isGreaterThan(0);
    Reply refused = h.post("/subjects/t/versions", schemaBody(type, bad));
    assertThat(refused.status()).isEqualTo(409);
    assertThat(refused.errorCode()).isEqualTo(409);

    int id2 = h.register("t", type, v2);
    assertThat(id2).isEqualTo(id1 + 1);
    assertThat(h.get("/subjects/t/versions").json().toString()).isEqualTo("[1,2]");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
      "JSON, '{\"type\": 7}'",
      "JSON, '{\"type\": \"object\"'",
      "PROTOBUF, 'syntax = \"proto3\"; message M { string a = 1 }'",
      "PROTOBUF, 'syntax = \"proto3\"; message M { Unknown a = 1; }'"})
  void invalidSchemasAre42201(String type, String schema) {
    // Goal: a schema that does not parse or link answers 42201 and registers nothing.
    Reply reply = h.post("/subjects/bad/versions", schemaBody(type, schema));
    assertThat(reply.status()).isEqualTo(422);
    assertThat(reply.errorCode()).isEqualTo(42201);
    assertThat(h.get("/subjects").json().size()).isZero();
  }

  @Test
  void protobufImportsResolveThroughReferences() {
    // Goal: a Protobuf schema importing another subject's file registers with a reference and shows in referencedby.
    String customer = "syntax = \"proto3\";\npackage crm;\nmessage Customer { string name = 1; }";
    String order = "syntax = \"proto3\";\npackage shop;\nimport \"crm/customer.proto\";\nmessage Order { crm.Customer buyer = 1; }";
    h.register("customer", "PROTOBUF", customer);
    assertThat(h.post("/subjects/order/versions", schemaBody("PROTOBUF", order)).errorCode()).isEqualTo(42201);
    Reply ok = h.post("/subjects/order/versions", schemaBody("PROTOBUF", order, "crm/customer.proto", "customer", 1));
    assertThat(ok.status()).isEqualTo(200);
    int id = ok.json().get("id").asInt();
    assertThat(h.get("/subjects/customer/versions/1/referencedby").json().toString()).isEqualTo("[" + id + "]");
    assertThat(h.get("/schemas/ids/" + id).json().get("references").get(0).get("name").asText()).isEqualTo("crm/customer.proto");
  }

  @Test
  void jsonSchemaRefsResolveThroughReferences() {
    // Goal: a JSON Schema whose $ref names a referenced subject registers and its compatibility follows the referenced document.
    String address = "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}";
    String person = "{\"type\":\"object\",\"properties\":{\"home\":{\"$ref\":\"address.json\"}},\"additionalProperties\":false}";
    h.register("address", "JSON", address);
    Reply ok = h.post("/subjects/person/versions", schemaBody("JSON", person, "address.json", "address", 1));
    assertThat(ok.status()).isEqualTo(200);
    Reply check = h.post("/compatibility/subjects/person/versions/latest",
        schemaBody("JSON", person, "address.json", "address", 1));
    assertThat(check.json().get("is_compatible").asBoolean()).isTrue();
  }

  @Test
  void normalizeMakesEquivalentSchemasOneVersion() {
    // Goal: with normalize=true, reordered JSON keys and reordered proto fields are the same schema (same id, no new version).
    String reordered = "{\"additionalProperties\":false,\"properties\":{\"id\":{\"type\":\"integer\"}},\"type\":\"object\"}";
    Reply first = h.post("/subjects/j/versions?normalize=true", schemaBody("JSON", JSON_V1));
    Reply second = h.post("/subjects/j/versions?normalize=true", schemaBody("JSON", reordered));
    assertThat(second.json().get("id").asInt()).isEqualTo(first.json().get("id").asInt());
    assertThat(h.get("/subjects/j/versions").json().toString()).isEqualTo("[1]");

    String protoReordered = "syntax = \"proto3\"; package shop; message Order { int32 qty = 2; string id = 1; }";
    Reply p1 = h.post("/subjects/p/versions?normalize=true", schemaBody("PROTOBUF", PROTO_V1));
    Reply p2 = h.post("/subjects/p/versions?normalize=true", schemaBody("PROTOBUF", protoReordered));
    assertThat(p2.json().get("id").asInt()).isEqualTo(p1.json().get("id").asInt());
    assertThat(h.post("/subjects/p?normalize=true", schemaBody("PROTOBUF", protoReordered)).json().get("version").asInt()).isEqualTo(1);
    Reply plain = h.post("/subjects/p", schemaBody("PROTOBUF", protoReordered));
    assertThat(plain.errorCode()).as("without normalize the text differs").isEqualTo(40403);
  }

  @Test
  void changingTheSchemaTypeIsIncompatible() {
    // Goal: a subject cannot switch schema type under a compatibility level.
    h.register("mixed", "JSON", JSON_V1);
    Reply reply = h.post("/subjects/mixed/versions", schemaBody("PROTOBUF", PROTO_V1));
    assertThat(reply.status()).isEqualTo(409);
  }
}
