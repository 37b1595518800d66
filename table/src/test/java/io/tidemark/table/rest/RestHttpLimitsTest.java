package io.tidemark.table.rest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.registry.http.ErrorBodies;
import io.tidemark.registry.http.HttpLimitsContract;
import io.tidemark.stream.config.Settings;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** The shared HTTP limits hold on the Iceberg REST catalog (started with table.rest.max.request.bytes=4096). */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RestHttpLimitsTest extends HttpLimitsContract {
  private static final int LIMIT = 4096;
  private final ObjectMapper json = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();
  private final AtomicInteger names = new AtomicInteger();
  @TempDir
  static Path dir;
  private RestFixture fx;

  RestHttpLimitsTest() {
    super(LIMIT, "/v1/namespaces");
  }

  @BeforeAll
  void start() {
    fx = new RestFixture(dir, RestCatalogConfig.from(Settings.empty()
        .with(RestCatalogConfig.PORT.name(), "0")
        .with(RestCatalogConfig.MAX_REQUEST_BYTES.name(), Integer.toString(LIMIT))));
  }

  @AfterAll
  void stop() throws Exception {
    fx.close();
  }

  @Override
  protected int port() {
    return fx.server.port();
  }

  @Override
  protected byte[] validBody() {
    return ("{\"namespace\": [\"limits" + names.incrementAndGet() + "\"]}").getBytes(StandardCharsets.UTF_8);
  }

  @Override
  protected void assertErrorBody(int status, String body) throws Exception {
    assertRestError(json, status, body);
  }

  /** {@code body} is an Iceberg ErrorResponse for {@code status} and carries no internals beyond its type. */
  static void assertRestError(ObjectMapper json, int status, String body) throws Exception {
    JsonNode error = json.readTree(body).path("error");
    assertThat(error.path("code").asInt()).as("code in %s", body).isEqualTo(status);
    assertThat(error.path("type").asText()).as("type in %s", body).matches("[A-Z][A-Za-z]+");
    assertThat(error.path("message").asText()).as("message in %s", body).isNotBlank();
    ErrorBodies.assertFreeOfInternals(error.path("message").asText());
  }

  @Override
  protected void assertServes() throws Exception {
    HttpResponse<String> config = http.send(HttpRequest.newBuilder(URI.create(fx.uri() + "/v1/config")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(config.statusCode()).isEqualTo(200);
    assertThat(json.readTree(config.body()).path("endpoints").isArray()).isTrue();
  }
}
