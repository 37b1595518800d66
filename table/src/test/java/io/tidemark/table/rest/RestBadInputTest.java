package io.tidemark.table.rest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import org.apache.iceberg.catalog.Namespace;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: bad input the fuzzer found gets a 400 and changes nothing: null property values once poisoned a
 * namespace; a 300-byte table name failed in the FileIO with a 500; ".." would leave the namespace's directory.
 */
class RestBadInputTest {
  private static final String SCHEMA =
      "{\"type\": \"struct\", \"schema-id\": 0, \"fields\": [{\"id\": 1, \"name\": \"id\", \"required\": true, \"type\": \"long\"}]}";

  @TempDir
  Path dir;
  private final HttpClient http = HttpClient.newHttpClient();
  private final ObjectMapper json = new ObjectMapper();

  private HttpResponse<String> send(RestFixture fx, String method, String path, String body) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(fx.uri() + path)).header("Content-Type", "application/json")
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
        .build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void nullsInRequestsAreRefusedAndChangeNothing() throws Exception {
    try (RestFixture fx = new RestFixture(dir)) {
      fx.client().createNamespace(Namespace.of("n"));
      String[][] bad = {
          {"POST", "/v1/namespaces/n/properties", "{\"updates\": {\"y\": null}}"},
          {"POST", "/v1/namespaces/n/properties", "{\"removals\": [null]}"},
          {"POST", "/v1/namespaces", "{\"namespace\": [\"m\"], \"properties\": {\"a\": null}}"},
          {"POST", "/v1/namespaces", "{\"namespace\": [\"m\", null]}"},
          {"POST", "/v1/namespaces", "{\"namespace\": [\"..\"]}"},
          {"POST", "/v1/namespaces/n/tables", "{\"name\": \"" + "x".repeat(300) + "\", \"schema\": " + SCHEMA + "}"},
          {"POST", "/v1/namespaces/n/tables", "{\"name\": \"../escape\", \"schema\": " + SCHEMA + "}"},
      };
      for (String[] request : bad) {
        HttpResponse<String> response = send(fx, request[0], request[1], request[2]);
        assertThat(response.statusCode()).as("%s -> %s", request[2], response.body()).isEqualTo(400);
        RestHttpLimitsTest.assertRestError(json, 400, response.body());
      }
      assertThat(send(fx, "GET", "/v1/namespaces/n", null).statusCode()).isEqualTo(200);
      assertThat(fx.client().listNamespaces()).containsExactly(Namespace.of("n"));
      assertThat(fx.client().listTables(Namespace.of("n"))).isEmpty();
    }
  }
}
