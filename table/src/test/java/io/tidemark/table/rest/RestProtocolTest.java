package io.tidemark.table.rest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.stream.config.Settings;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Goal: the wire protocol itself: status codes and ErrorResponse bodies, limits, auth, unsupported endpoints. */
class RestProtocolTest {

  private static final String TRANSACTION_OF_TWO = """
      {"table-changes": [
        {"identifier": {"namespace": ["n"], "name": "a"}, "requirements": [], "updates": []},
        {"identifier": {"namespace": ["n"], "name": "b"}, "requirements": [], "updates": []}]}""";

  @TempDir
  Path dir;
  private final HttpClient http = HttpClient.newHttpClient();
  private final ObjectMapper json = new ObjectMapper();

  @Test
  void errorsAreIcebergErrorResponses() throws Exception {
    // goal: each failure has the spec's status and an {"error": {code, type, message}} body
    try (RestFixture fx = new RestFixture(dir)) {
      fx.client().createNamespace(Namespace.of("n"));
      JsonNode config = json.readTree(send(fx, "GET", "/v1/config", null).body());
      assertThat(config.path("overrides").has("io-impl")).as("plain file: locations need no FileIO of ours").isFalse();
      assertThat(config.get("endpoints").toString()).contains("POST /v1/{prefix}/transactions/commit");

      assertError(send(fx, "GET", "/v1/namespaces/n/tables/missing", null), 404, "NoSuchTableException");
      assertError(send(fx, "GET", "/v1/namespaces/nope", null), 404, "NoSuchNamespaceException");
      assertError(send(fx, "POST", "/v1/namespaces", "{\"namespace\": [\"n\"]}"), 409, "AlreadyExistsException");
      assertError(send(fx, "POST", "/v1/namespaces", "{not json"), 400, "BadRequestException");
      assertError(send(fx, "POST", "/v1/namespaces/n/tables", "{\"name\": \"t\"}"), 400, "BadRequestException");
      assertError(send(fx, "POST", "/v1/transactions/commit", TRANSACTION_OF_TWO), 501, "UnsupportedOperationException");
      assertError(send(fx, "POST", "/v1/namespaces/n/tables/t/metrics", "{}"), 501, "UnsupportedOperationException");
      assertError(send(fx, "GET", "/v1/no/such/path", null), 404, "NotFoundException");

      HttpResponse<String> head = send(fx, "HEAD", "/v1/namespaces/nope", null);
      assertThat(head.statusCode()).isEqualTo(404);
      assertThat(send(fx, "HEAD", "/v1/namespaces/n", null).statusCode()).isEqualTo(204);
      // nothing above changed the catalog
      assertThat(fx.client().listNamespaces()).containsExactly(Namespace.of("n"));
      assertThat(fx.client().listTables(Namespace.of("n"))).isEmpty();
    }
  }

  @Test
  void oversizedBodiesAreRefusedAndBasicAuthIsEnforced() throws Exception {
    // goal: a body over table.rest.max.request.bytes gets 413; with users configured, only authenticated clients pass
    RestCatalogConfig config = RestCatalogConfig.from(Settings.empty()
        .with(RestCatalogConfig.PORT.name(), "0")
        .with(RestCatalogConfig.MAX_REQUEST_BYTES.name(), "1024")
        .with(RestCatalogConfig.BASIC_AUTH_USERS.name(), "spark:s3cret"));
    try (RestFixture fx = new RestFixture(dir, config)) {
      assertError(send(fx, "GET", "/v1/config", null), 401, "NotAuthorizedException");
      RESTCatalog client = fx.client(Map.of("rest.auth.type", "basic",
          "rest.auth.basic.username", "spark", "rest.auth.basic.password", "s3cret"));
      client.createNamespace(Namespace.of("n"));
      assertThat(client.namespaceExists(Namespace.of("n"))).isTrue();

      String big = "{\"namespace\": [\"big\"], \"properties\": {\"k\": \"" + "x".repeat(4096) + "\"}}";
      HttpRequest request = HttpRequest.newBuilder(URI.create(fx.uri() + "/v1/namespaces"))
          .header("Authorization", "Basic " + java.util.Base64.getEncoder().encodeToString("spark:s3cret".getBytes()))
          .POST(HttpRequest.BodyPublishers.ofString(big)).build();
      assertError(http.send(request, HttpResponse.BodyHandlers.ofString()), 413, "RequestTooLargeException");
      assertThat(client.namespaceExists(Namespace.of("big"))).isFalse();
    }
  }

  private HttpResponse<String> send(RestFixture fx, String method, String path, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(fx.uri() + path))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (body != null) {
      b.header("Content-Type", "application/json");
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private void assertError(HttpResponse<String> response, int status, String type) throws Exception {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    JsonNode error = json.readTree(response.body()).get("error");
    assertThat(error.get("code").asInt()).isEqualTo(status);
    assertThat(error.get("type").asText()).isEqualTo(type);
    assertThat(error.get("message").asText()).isNotBlank();
  }
}
