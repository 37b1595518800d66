package io.tidemark.registry.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.tidemark.registry.RegistryConfig;
import io.tidemark.registry.store.MemorySchemaStore;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Goal: random and mutated requests never break the schema registry or leak internals (seeded, see HttpFuzzer). */
class RegistryFuzzTest {
  private static final int LIMIT = 16 * 1024;
  private static final String AVRO = "{\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"}]}";
  private static final String PROTO = "syntax = \"proto3\";\nmessage Order {\n  int64 id = 1;\n  repeated string tags = 2;\n}\n";
  private static final String JSON_SCHEMA = "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"}}}";

  @Test
  void registryKeepsServingAndNeverLeaksInternals() throws Exception {
    try (RegistryHarness h = new RegistryHarness(new MemorySchemaStore(),
        RegistryConfig.defaults(0).withMaxRequestBytes(LIMIT))) {
      int probeId = h.register("probe-subject-q7", null, AVRO);
      h.register("fz", null, AVRO);
      List<HttpFuzzer.Seed> seeds = List.of(
          new HttpFuzzer.Seed("POST", "/subjects/fz/versions", RegistryHarness.schemaBody(null, AVRO)),
          new HttpFuzzer.Seed("POST", "/subjects/fz-proto/versions", RegistryHarness.schemaBody("PROTOBUF", PROTO)),
          new HttpFuzzer.Seed("POST", "/subjects/fz-json/versions", RegistryHarness.schemaBody("JSON", JSON_SCHEMA)),
          new HttpFuzzer.Seed("POST", "/subjects/fz-ref/versions",
              RegistryHarness.schemaBody(null, "\"User\"", "User", "fz", 1)),
          new HttpFuzzer.Seed("POST", "/subjects/fz", RegistryHarness.schemaBody(null, AVRO)),
          new HttpFuzzer.Seed("POST", "/compatibility/subjects/fz/versions/latest?verbose=true",
              RegistryHarness.schemaBody(null, AVRO)),
          new HttpFuzzer.Seed("PUT", "/config/fz", "{\"compatibility\":\"FULL\"}"),
          new HttpFuzzer.Seed("PUT", "/mode/fz", "{\"mode\":\"READWRITE\"}"),
          HttpFuzzer.Seed.get("/subjects/fz/versions/1"),
          HttpFuzzer.Seed.get("/subjects/fz/versions/latest/schema"),
          HttpFuzzer.Seed.get("/subjects?deleted=true"),
          HttpFuzzer.Seed.get("/schemas?subjectPrefix=fz&limit=5&offset=0"),
          HttpFuzzer.Seed.get("/schemas/ids/1/versions"),
          new HttpFuzzer.Seed("DELETE", "/subjects/fz-proto/versions/1", null),
          HttpFuzzer.Seed.get("/config/fz?defaultToGlobal=true"));
      HttpFuzzer.Result result = HttpFuzzer.run(new HttpFuzzer.Api() {
        @Override
        public String name() {
          return "registry";
        }

        @Override
        public int port() {
          return h.server.port();
        }

        @Override
        public int maxBodyBytes() {
          return LIMIT;
        }

        @Override
        public List<HttpFuzzer.Seed> seeds() {
          return seeds;
        }

        @Override
        public void checkError(int status, String body) throws Exception {
          JsonNode error = HttpFuzzer.jsonObject(body);
          int code = error.path("error_code").asInt();
          assertThat(code == status || code / 100 == status).as("error_code %d for status %d", code, status).isTrue();
          assertThat(error.path("message").asText()).isNotBlank();
          ErrorBodies.assertFreeOfInternals(body);
        }

        @Override
        public void checkServes() {
          RegistryHarness.Reply reply = h.get("/schemas/ids/" + probeId);
          assertThat(reply.status()).as("%s", reply).isEqualTo(200);
          assertThat(reply.json().path("schema").asText()).contains("\"User\"");
        }
      });
      assertThat(result.inputs()).isEqualTo(HttpFuzzer.inputs());
    }
  }
}
