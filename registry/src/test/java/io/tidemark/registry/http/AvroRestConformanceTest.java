package io.tidemark.registry.http;

import static io.tidemark.registry.http.RegistryHarness.schemaBody;
import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.registry.http.RegistryHarness.Reply;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Goal: every Confluent REST endpoint answers with Confluent's bodies and error codes, exercised with Avro schemas over real HTTP. */
class AvroRestConformanceTest {
  static final String USER_V1 = "{\"type\":\"record\",\"name\":\"User\",\"namespace\":\"acme\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"}]}";
  static final String USER_V2 = "{\"type\":\"record\",\"name\":\"User\",\"namespace\":\"acme\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"},"
      + "{\"name\":\"email\",\"type\":\"string\",\"default\":\"\"}]}";
  static final String USER_V2_NO_DEFAULT = "{\"type\":\"record\",\"name\":\"User\",\"namespace\":\"acme\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"},"
      + "{\"name\":\"email\",\"type\":\"string\"}]}";

  RegistryHarness h;

  @BeforeEach
  void start() {
    h = new RegistryHarness();
  }

  @AfterEach
  void stop() {
    h.close();
  }

  @Test
  void registerReturnsDenseIdsAndReRegistrationIsIdempotent() {
    // Goal: ids start at 1, are dense across subjects, and the same schema gets the same id again.
    int first = h.register("users-value", null, USER_V1);
    String spaced = USER_V1.replace(",", " ,\n ");
    int again = h.register("users-value", null, spaced);
    int second = h.register("users-value", null, USER_V2);
    int otherSubject = h.register("other-value", "AVRO", USER_V1);
    assertThat(first).isEqualTo(1);
    assertThat(again).isEqualTo(1);
    assertThat(second).isEqualTo(2);
    assertThat(otherSubject).isEqualTo(1);
    assertThat(h.get("/subjects/users-value/versions").json().toString()).isEqualTo("[1,2]");
    assertThat(h.get("/subjects").json().toString()).isEqualTo("[\"other-value\",\"users-value\"]");
    assertThat(h.get("/subjects?subjectPrefix=users").json().toString()).isEqualTo("[\"users-value\"]");
  }

  @Test
  void versionEndpointsReturnConfluentBodies() {
    // Goal: GET version / latest / schema / schemas by id answer the Confluent JSON shapes and content type.
    h.register("users-value", null, USER_V1);
    h.register("users-value", null, USER_V2);
    Reply latest = h.get("/subjects/users-value/versions/latest");
    assertThat(latest.status()).isEqualTo(200);
    assertThat(latest.contentType()).startsWith(RegistryHarness.V1);
    assertThat(latest.json().get("subject").asText()).isEqualTo("users-value");
    assertThat(latest.json().get("version").asInt()).isEqualTo(2);
    assertThat(latest.json().get("id").asInt()).isEqualTo(2);
    assertThat(latest.json().has("schemaType")).isFalse();
    assertThat(h.get("/subjects/users-value/versions/-1").json().get("version").asInt()).isEqualTo(2);
    assertThat(h.get("/subjects/users-value/versions/1").json().get("schema").asText()).isEqualTo(USER_V1);
    assertThat(h.get("/subjects/users-value/versions/1/schema").json().get("name").asText()).isEqualTo("User");
    assertThat(h.get("/schemas/ids/1").json().get("schema").asText()).isEqualTo(USER_V1);
    assertThat(h.get("/schemas/ids/2/schema").json().get("fields").size()).isEqualTo(2);
    assertThat(h.get("/schemas/ids/1/subjects").json().toString()).isEqualTo("[\"users-value\"]");
    assertThat(h.get("/schemas/ids/1/versions").json().toString()).isEqualTo("[{\"subject\":\"users-value\",\"version\":1}]");
    assertThat(h.get("/schemas/types").json().toString()).contains("AVRO", "JSON", "PROTOBUF");
    assertThat(h.get("/schemas").json()).hasSize(2);
    assertThat(h.get("/schemas?latestOnly=true").json()).singleElement()
        .satisfies(n -> assertThat(n.get("version").asInt()).isEqualTo(2));
    assertThat(h.get("/schemas?offset=1&limit=5").json()).singleElement()
        .satisfies(n -> assertThat(n.get("id").asInt()).isEqualTo(2));
    assertThat(h.get("/schemas?subjectPrefix=nope").json()).isEmpty();
    assertThat(h.get("/schemas?limit=x").errorCode()).isEqualTo(422);
    Reply plain = h.call("GET", "/schemas/ids/1", null, java.util.Map.of("Accept", "application/json"));
    assertThat(plain.contentType()).startsWith("application/json");
  }

  @Test
  void notFoundErrorsCarryConfluentCodes() {
    // Goal: unknown subject, version and id answer 404 with 40401, 40402, 40403; bad versions 42202.
    h.register("users-value", null, USER_V1);
    assertThat(h.get("/subjects/nope/versions").errorCode()).isEqualTo(40401);
    assertThat(h.get("/subjects/nope/versions/1").errorCode()).isEqualTo(40401);
    Reply missingVersion = h.get("/subjects/users-value/versions/7");
    assertThat(missingVersion.status()).isEqualTo(404);
    assertThat(missingVersion.errorCode()).isEqualTo(40402);
    assertThat(h.get("/schemas/ids/99").errorCode()).isEqualTo(40403);
    assertThat(h.get("/schemas/ids/99/schema").errorCode()).isEqualTo(40403);
    Reply badVersion = h.get("/subjects/users-value/versions/zero");
    assertThat(badVersion.status()).isEqualTo(422);
    assertThat(badVersion.errorCode()).isEqualTo(42202);
    assertThat(h.get("/subjects/users-value/versions/0").errorCode()).isEqualTo(42202);
    assertThat(h.get("/no/such/path").status()).isEqualTo(404);
  }

  @Test
  void badInputIsRefusedAndChangesNothing() {
    // Goal: invalid schemas (42201), malformed JSON (400), unknown fields (422), wrong media type (415) leave the registry unchanged.
    Reply invalid = h.post("/subjects/s/versions", schemaBody(null, "{\"type\":\"record\",\"name\":\"X\"}"));
    assertThat(invalid.status()).isEqualTo(422);
    assertThat(invalid.errorCode()).isEqualTo(42201);
    assertThat(h.post("/subjects/s/versions", schemaBody(null, "not json")).errorCode()).isEqualTo(42201);
    assertThat(h.post("/subjects/s/versions", schemaBody(null,
        "{\"type\":\"record\",\"name\":\"X\",\"fields\":[{\"name\":\"a\",\"type\":\"int\",\"default\":\"x\"}]}")).errorCode())
        .as("a default of the wrong type is invalid").isEqualTo(42201);
    assertThat(h.post("/subjects/s/versions", schemaBody("XML", "<a/>")).errorCode()).isEqualTo(42201);
    Reply malformed = h.post("/subjects/s/versions", "{\"schema\": ");
    assertThat(malformed.status()).isEqualTo(400);
    assertThat(malformed.errorCode()).isEqualTo(400);
    assertThat(h.post("/subjects/s/versions", "{\"schema\":\"\\\"int\\\"\",\"bogus\":1}").errorCode()).isEqualTo(422);
    assertThat(h.call("POST", "/subjects/s/versions", schemaBody(null, "\"int\""),
        java.util.Map.of("Content-Type", "text/plain")).status()).isEqualTo(415);
    assertThat(h.get("/subjects").json().size()).isZero();
    assertThat(h.store.endOffset()).isZero();
  }

  @Test
  void oversizedBodiesAreRefusedWith413() throws Exception {
    // Goal: a body above registry.max.request.bytes is refused and nothing is registered.
    h.close();
    h = new RegistryHarness(new io.tidemark.registry.store.MemorySchemaStore(),
        io.tidemark.registry.RegistryConfig.defaults(0).withMaxRequestBytes(4096));
    String huge = "{\"type\":\"record\",\"name\":\"Big\",\"doc\":\"" + "x".repeat(8000) + "\",\"fields\":[]}";
    Reply reply = h.post("/subjects/big/versions", schemaBody(null, huge));
    assertThat(reply.status()).isEqualTo(413);
    assertThat(reply.errorCode()).isEqualTo(41301);
    byte[] chunked = schemaBody(null, huge).getBytes(java.nio.charset.StandardCharsets.UTF_8);
    java.net.http.HttpResponse<String> streamed = java.net.http.HttpClient.newHttpClient().send(
        java.net.http.HttpRequest.newBuilder(java.net.URI.create(h.baseUrl() + "/subjects/big/versions"))
            .header("Content-Type", RegistryHarness.V1)
            .POST(java.net.http.HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(chunked)))
            .build(), java.net.http.HttpResponse.BodyHandlers.ofString());
    assertThat(streamed.statusCode()).as("a chunked body without Content-Length is bounded too").isEqualTo(413);
    assertThat(h.get("/subjects").json().size()).isZero();
  }

  @Test
  void lookupFindsRegisteredVersions() {
    // Goal: POST /subjects/{s} returns subject, id, version and schema, or 40401/40403.
    h.register("users-value", null, USER_V1);
    h.register("users-value", null, USER_V2);
    Reply found = h.post("/subjects/users-value", schemaBody(null, USER_V1));
    assertThat(found.status()).isEqualTo(200);
    assertThat(found.json().get("version").asInt()).isEqualTo(1);
    assertThat(found.json().get("id").asInt()).isEqualTo(1);
    assertThat(found.json().get("schema").asText()).isEqualTo(USER_V1);
    assertThat(h.post("/subjects/nope", schemaBody(null, USER_V1)).errorCode()).isEqualTo(40401);
    assertThat(h.post("/subjects/users-value", schemaBody(null, "\"string\"")).errorCode()).isEqualTo(40403);
    assertThat(h.post("/subjects/users-value?normalize=true", schemaBody(null, USER_V2)).json().get("version").asInt())
        .isEqualTo(2);
  }

  @Test
  void incompatibleEvolutionIsRefusedWith409() {
    // Goal: under BACKWARD a new field without default is refused (409) and the subject keeps one version.
    h.register("users-value", null, USER_V1);
    Reply refused = h.post("/subjects/users-value/versions", schemaBody(null, USER_V2_NO_DEFAULT));
    assertThat(refused.status()).isEqualTo(409);
    assertThat(refused.errorCode()).isEqualTo(409);
    assertThat(refused.json().get("message").asText()).contains("READER_FIELD_MISSING_DEFAULT_VALUE");
    assertThat(h.get("/subjects/users-value/versions").json().toString()).isEqualTo("[1]");
    Reply check = h.post("/compatibility/subjects/users-value/versions/latest?verbose=true", schemaBody(null, USER_V2_NO_DEFAULT));
    assertThat(check.json().get("is_compatible").asBoolean()).isFalse();
    assertThat(check.json().get("messages").toString()).contains("email");
    Reply ok = h.post("/compatibility/subjects/users-value/versions/1", schemaBody(null, USER_V2));
    assertThat(ok.json().get("is_compatible").asBoolean()).isTrue();
    assertThat(ok.json().has("messages")).isFalse();
    assertThat(h.post("/compatibility/subjects/users-value/versions", schemaBody(null, USER_V2)).json()
        .get("is_compatible").asBoolean()).isTrue();
    assertThat(h.post("/compatibility/subjects/users-value/versions/9", schemaBody(null, USER_V2)).errorCode()).isEqualTo(40402);
    assertThat(h.post("/compatibility/subjects/nope/versions/1", schemaBody(null, USER_V2)).errorCode()).isEqualTo(40401);
    assertThat(h.post("/compatibility/subjects/nope/versions/latest", schemaBody(null, USER_V2)).json()
        .get("is_compatible").asBoolean()).isTrue();
  }

  @Test
  void compatibilityLevelsAreEnforcedPerSubjectAndTransitively() {
    // Goal: FORWARD, FULL, NONE and *_TRANSITIVE change which registrations pass; per-subject overrides global.
    assertThat(h.get("/config").json().get("compatibilityLevel").asText()).isEqualTo("BACKWARD");
    // FORWARD: the old schema must read the new one: removing a field without default in the new schema is fine,
    // adding a required field is fine too (old reader ignores it).
    assertThat(h.put("/config/fwd", "{\"compatibility\":\"FORWARD\"}").json().get("compatibility").asText()).isEqualTo("FORWARD");
    h.register("fwd", null, USER_V1);
    assertThat(h.post("/subjects/fwd/versions", schemaBody(null, USER_V2_NO_DEFAULT)).status()).isEqualTo(200);
    String noId = "{\"type\":\"record\",\"name\":\"User\",\"namespace\":\"acme\",\"fields\":[{\"name\":\"email\",\"type\":\"string\"}]}";
    assertThat(h.post("/subjects/fwd/versions", schemaBody(null, noId)).status())
        .as("old readers need 'id', which has no default").isEqualTo(409);

    // BACKWARD vs BACKWARD_TRANSITIVE: v1{id}, v2{id,email=""}, v3{email=""} without id
    // v3 reads v2 (drops id) and v1 (drops id, email default) -> both fine; use a type change instead:
    String v1 = "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"}]}";
    String v2 = "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"},{\"name\":\"b\",\"type\":\"string\",\"default\":\"\"}]}";
    String v3 = "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"b\",\"type\":\"string\"}]}";
    h.put("/config/trans", "{\"compatibility\":\"BACKWARD_TRANSITIVE\"}");
    h.register("trans", null, v1);
    h.register("trans", null, v2);
    Reply transitive = h.post("/subjects/trans/versions", schemaBody(null, v3));
    assertThat(transitive.status()).as("v3 cannot read v1 (no b)").isEqualTo(409);
    h.put("/config/trans", "{\"compatibility\":\"BACKWARD\"}");
    assertThat(h.post("/subjects/trans/versions", schemaBody(null, v3)).status()).as("v3 reads v2").isEqualTo(200);

    h.put("/config/full", "{\"compatibility\":\"FULL\"}");
    h.register("full", null, USER_V1);
    assertThat(h.post("/subjects/full/versions", schemaBody(null, USER_V2_NO_DEFAULT)).status()).isEqualTo(409);
    assertThat(h.post("/subjects/full/versions", schemaBody(null, USER_V2)).status()).isEqualTo(200);

    h.put("/config", "{\"compatibility\":\"NONE\"}");
    h.register("none", null, USER_V1);
    assertThat(h.post("/subjects/none/versions", schemaBody(null, "\"string\"")).status()).isEqualTo(200);
  }

  @Test
  void configEndpointsFollowConfluent() {
    // Goal: /config and /config/{s} get, put and delete, with 40408 and 42203.
    assertThat(h.put("/config", "{\"compatibility\":\"full_transitive\"}").json().get("compatibility").asText())
        .isEqualTo("FULL_TRANSITIVE");
    assertThat(h.get("/config").json().get("compatibilityLevel").asText()).isEqualTo("FULL_TRANSITIVE");
    Reply invalid = h.put("/config", "{\"compatibility\":\"SIDEWAYS\"}");
    assertThat(invalid.status()).isEqualTo(422);
    assertThat(invalid.errorCode()).isEqualTo(42203);
    assertThat(h.get("/config/s").errorCode()).isEqualTo(40408);
    assertThat(h.get("/config/s?defaultToGlobal=true").json().get("compatibilityLevel").asText()).isEqualTo("FULL_TRANSITIVE");
    h.put("/config/s", "{\"compatibility\":\"NONE\"}");
    assertThat(h.get("/config/s").json().get("compatibilityLevel").asText()).isEqualTo("NONE");
    assertThat(h.delete("/config/s").json().get("compatibilityLevel").asText()).isEqualTo("NONE");
    assertThat(h.get("/config/s").errorCode()).isEqualTo(40408);
    assertThat(h.delete("/config/unknown").errorCode()).isEqualTo(40401);
    assertThat(h.delete("/config").json().get("compatibilityLevel").asText()).isEqualTo("FULL_TRANSITIVE");
    assertThat(h.get("/config").json().get("compatibilityLevel").asText()).isEqualTo("BACKWARD");
  }

  @Test
  void softAndPermanentDeletesFollowConfluent() {
    // Goal: soft delete hides versions, permanent delete needs a soft delete first (40405/40407), repeats give 40404/40406.
    h.register("s", null, USER_V1);
    h.register("s", null, USER_V2);
    assertThat(h.delete("/subjects/s/versions/2?permanent=true").errorCode()).isEqualTo(40407);
    assertThat(h.delete("/subjects/s/versions/2").json().asInt()).isEqualTo(2);
    assertThat(h.delete("/subjects/s/versions/2").errorCode()).isEqualTo(40406);
    assertThat(h.get("/subjects/s/versions").json().toString()).isEqualTo("[1]");
    assertThat(h.get("/subjects/s/versions?deleted=true").json().toString()).isEqualTo("[1,2]");
    assertThat(h.get("/subjects/s/versions/2").errorCode()).isEqualTo(40402);
    assertThat(h.get("/subjects/s/versions/2?deleted=true").json().get("id").asInt()).isEqualTo(2);
    assertThat(h.get("/schemas/ids/2").status()).as("soft-deleted schemas stay readable by id").isEqualTo(200);
    assertThat(h.delete("/subjects/s/versions/2?permanent=true").json().asInt()).isEqualTo(2);
    assertThat(h.get("/schemas/ids/2").errorCode()).isEqualTo(40403);

    assertThat(h.delete("/subjects/s?permanent=true").errorCode()).isEqualTo(40405);
    assertThat(h.delete("/subjects/s").json().toString()).isEqualTo("[1]");
    assertThat(h.delete("/subjects/s").errorCode()).isEqualTo(40404);
    assertThat(h.get("/subjects").json().size()).isZero();
    assertThat(h.get("/subjects?deleted=true").json().toString()).isEqualTo("[\"s\"]");
    assertThat(h.get("/subjects/s/versions").errorCode()).isEqualTo(40401);
    assertThat(h.post("/subjects/s?deleted=true", schemaBody(null, USER_V1)).json().get("version").asInt()).isEqualTo(1);
    assertThat(h.delete("/subjects/s?permanent=true").json().toString()).isEqualTo("[1]");
    assertThat(h.get("/subjects?deleted=true").json().size()).isZero();
    assertThat(h.delete("/subjects/s").errorCode()).isEqualTo(40401);

    int reRegistered = h.register("s", null, USER_V1);
    assertThat(reRegistered).as("ids are never reused after a permanent delete").isEqualTo(3);
    assertThat(h.get("/subjects/s/versions").json().toString()).isEqualTo("[1]");
  }

  @Test
  void referencesResolveAcrossSubjectsAndBlockDeletes() {
    // Goal: a schema referencing another subject's type registers, shows in /referencedby, and blocks its delete (42206).
    String address = "{\"type\":\"record\",\"name\":\"Address\",\"namespace\":\"acme\",\"fields\":[{\"name\":\"city\",\"type\":\"string\"}]}";
    String customer = "{\"type\":\"record\",\"name\":\"Customer\",\"namespace\":\"acme\",\"fields\":[{\"name\":\"home\",\"type\":\"acme.Address\"}]}";
    int addressId = h.register("address", null, address);
    Reply unresolved = h.post("/subjects/customer/versions", schemaBody(null, customer));
    assertThat(unresolved.errorCode()).as("without the reference acme.Address is unknown").isEqualTo(42201);
    Reply missingRef = h.post("/subjects/customer/versions", schemaBody(null, customer, "acme.Address", "address", 5));
    assertThat(missingRef.errorCode()).isEqualTo(42201);
    Reply ok = h.post("/subjects/customer/versions", schemaBody(null, customer, "acme.Address", "address", 1));
    assertThat(ok.status()).isEqualTo(200);
    int customerId = ok.json().get("id").asInt();
    assertThat(customerId).isNotEqualTo(addressId);
    assertThat(h.get("/subjects/customer/versions/1").json().get("references").get(0).get("subject").asText()).isEqualTo("address");
    assertThat(h.get("/schemas/ids/" + customerId).json().get("schema").asText()).doesNotContain("city");
    assertThat(h.get("/subjects/address/versions/1/referencedby").json().toString()).isEqualTo("[" + customerId + "]");
    assertThat(h.delete("/subjects/address/versions/1").errorCode()).isEqualTo(42206);
    assertThat(h.delete("/subjects/address").errorCode()).isEqualTo(42206);
    assertThat(h.post("/subjects/customer/versions", schemaBody(null, customer, "acme.Address", "address", 1)).json()
        .get("id").asInt()).isEqualTo(customerId);
  }

  @Test
  void modesGuardWritesAndImportKeepsCallerIds() {
    // Goal: READONLY refuses writes (42205), IMPORT needs an empty subject or force and keeps caller-chosen ids and versions.
    assertThat(h.get("/mode").json().get("mode").asText()).isEqualTo("READWRITE");
    assertThat(h.put("/mode", "{\"mode\":\"SIDEWAYS\"}").errorCode()).isEqualTo(42204);
    h.register("ro", null, USER_V1);
    assertThat(h.put("/mode/ro", "{\"mode\":\"READONLY\"}").json().get("mode").asText()).isEqualTo("READONLY");
    assertThat(h.post("/subjects/ro/versions", schemaBody(null, USER_V2)).errorCode()).isEqualTo(42205);
    assertThat(h.delete("/subjects/ro").errorCode()).isEqualTo(42205);
    assertThat(h.get("/mode/ro").json().get("mode").asText()).isEqualTo("READONLY");
    assertThat(h.delete("/mode/ro").json().get("mode").asText()).isEqualTo("READONLY");
    assertThat(h.get("/mode/ro").errorCode()).isEqualTo(40409);
    assertThat(h.get("/mode/ro?defaultToGlobal=true").json().get("mode").asText()).isEqualTo("READWRITE");

    String withId = "{\"schema\":" + RegistryHarness.JSON.valueToTree(USER_V2) + ",\"id\":100,\"version\":7}";
    assertThat(h.post("/subjects/imp/versions", withId).errorCode()).as("ids only in IMPORT mode").isEqualTo(42205);
    assertThat(h.put("/mode", "{\"mode\":\"IMPORT\"}").errorCode()).as("registry not empty").isEqualTo(42205);
    assertThat(h.put("/mode/imp", "{\"mode\":\"IMPORT\"}").json().get("mode").asText()).isEqualTo("IMPORT");
    assertThat(h.post("/subjects/imp/versions", withId).json().get("id").asInt()).isEqualTo(100);
    assertThat(h.get("/subjects/imp/versions/7").json().get("id").asInt()).isEqualTo(100);
    String clash = "{\"schema\":\"\\\"string\\\"\",\"id\":100,\"version\":8}";
    assertThat(h.post("/subjects/imp/versions", clash).errorCode()).isEqualTo(42207);
    assertThat(h.put("/mode?force=true", "{\"mode\":\"IMPORT\"}").json().get("mode").asText()).isEqualTo("IMPORT");
    h.put("/mode", "{\"mode\":\"READWRITE\"}");
    h.delete("/mode/imp");
    assertThat(h.register("after-import", null, "\"bytes\"")).as("new ids continue after the largest imported id").isEqualTo(101);
  }

  @Test
  void errorBodiesAreJsonWithCodeAndMessage() {
    // Goal: an error is {"error_code":int,"message":string} in the registry content type.
    Reply reply = h.get("/subjects/none/versions");
    assertThat(reply.contentType()).startsWith(RegistryHarness.V1);
    assertThat(reply.json().get("error_code").isInt()).isTrue();
    assertThat(reply.json().get("message").asText()).isEqualTo("Subject 'none' not found.");
  }
}
