package io.tidemark.table.rest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.registry.http.HttpFuzzer;
import io.tidemark.stream.config.Settings;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Goal: random and mutated requests never break the Iceberg REST catalog or leak internals (seeded, see HttpFuzzer). */
class RestFuzzTest {
  private static final int LIMIT = 16 * 1024;
  private static final String CREATE_TABLE = """
      {"name": "t", "schema": {"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "required": true, "type": "long"},
        {"id": 2, "name": "tags", "required": false, "type": {"type": "list", "element-id": 3, "element": "string",
          "element-required": false}}]},
       "partition-spec": {"spec-id": 0, "fields": []}, "properties": {"k": "v"}}""";
  private static final String COMMIT = """
      {"identifier": {"namespace": ["fz"], "name": "base"}, "requirements": [{"type": "assert-table-uuid", "uuid": "x"}],
       "updates": [{"action": "set-properties", "updates": {"a": "b"}}]}""";

  @TempDir
  Path dir;

  @Test
  void restCatalogKeepsServingAndNeverLeaksInternals() throws Exception {
    ObjectMapper json = new ObjectMapper();
    HttpClient http = HttpClient.newHttpClient();
    try (RestFixture fx = new RestFixture(dir, RestCatalogConfig.from(Settings.empty()
        .with(RestCatalogConfig.PORT.name(), "0")
        .with(RestCatalogConfig.MAX_REQUEST_BYTES.name(), Integer.toString(LIMIT))))) {
      var client = fx.client();
      client.createNamespace(Namespace.of("probe"));
      client.createNamespace(Namespace.of("fz"));
      client.createTable(TableIdentifier.of("probe", "p"), new Schema(Types.NestedField.required(1, "id", Types.LongType.get())));
      client.createTable(TableIdentifier.of("fz", "base"), new Schema(Types.NestedField.required(1, "id", Types.LongType.get())));
      List<HttpFuzzer.Seed> seeds = List.of(
          HttpFuzzer.Seed.get("/v1/config"),
          HttpFuzzer.Seed.get("/v1/namespaces?pageSize=2"),
          HttpFuzzer.Seed.get("/v1/namespaces/fz"),
          HttpFuzzer.Seed.get("/v1/namespaces/fz/tables"),
          HttpFuzzer.Seed.get("/v1/namespaces/fz/tables/base?snapshots=all"),
          new HttpFuzzer.Seed("HEAD", "/v1/namespaces/fz/tables/base", null),
          new HttpFuzzer.Seed("POST", "/v1/namespaces", "{\"namespace\": [\"fz2\"], \"properties\": {\"owner\": \"me\"}}"),
          new HttpFuzzer.Seed("POST", "/v1/namespaces/fz/properties", "{\"removals\": [\"x\"], \"updates\": {\"y\": \"z\"}}"),
          new HttpFuzzer.Seed("POST", "/v1/namespaces/fz/tables", CREATE_TABLE),
          new HttpFuzzer.Seed("POST", "/v1/namespaces/fz/tables/base", COMMIT),
          new HttpFuzzer.Seed("POST", "/v1/tables/rename",
              "{\"source\": {\"namespace\": [\"fz\"], \"name\": \"t\"}, \"destination\": {\"namespace\": [\"fz\"], \"name\": \"u\"}}"),
          new HttpFuzzer.Seed("POST", "/v1/transactions/commit", "{\"table-changes\": [" + COMMIT + "]}"),
          new HttpFuzzer.Seed("POST", "/v1/namespaces/fz/register",
              "{\"name\": \"r\", \"metadata-location\": \"tidemark-objects://warehouse/none.json\"}"),
          new HttpFuzzer.Seed("DELETE", "/v1/namespaces/fz/tables/t", null));
      HttpFuzzer.Result result = HttpFuzzer.run(new HttpFuzzer.Api() {
        @Override
        public String name() {
          return "iceberg-rest";
        }

        @Override
        public int port() {
          return fx.server.port();
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
          RestHttpLimitsTest.assertRestError(json, status, body);
        }

        @Override
        public void checkServes() throws Exception {
          HttpResponse<String> table = http.send(HttpRequest.newBuilder(
              URI.create(fx.uri() + "/v1/namespaces/probe/tables/p")).build(), HttpResponse.BodyHandlers.ofString());
          assertThat(table.statusCode()).as(table.body()).isEqualTo(200);
          JsonNode metadata = json.readTree(table.body()).path("metadata");
          assertThat(metadata.path("schemas").get(0).path("fields").get(0).path("name").asText()).isEqualTo("id");
        }
      });
      assertThat(result.inputs()).isEqualTo(HttpFuzzer.inputs());
    }
  }
}
