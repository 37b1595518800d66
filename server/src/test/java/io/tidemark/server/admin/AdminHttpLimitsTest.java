package io.tidemark.server.admin;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.registry.http.ErrorBodies;
import io.tidemark.registry.http.HttpLimitsContract;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** The shared HTTP limits hold on the admin endpoint (started with admin.max.request.bytes=4096). */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdminHttpLimitsTest extends HttpLimitsContract {
  private static final int LIMIT = 4096;
  private final ObjectMapper json = new ObjectMapper();
  @TempDir
  static Path dir;
  private AdminFixture fx;

  AdminHttpLimitsTest() {
    super(LIMIT, "/v1/streams");
  }

  @BeforeAll
  void start() {
    fx = new AdminFixture(dir, LIMIT);
  }

  @AfterAll
  void stop() throws Exception {
    fx.close();
  }

  @Override
  protected int port() {
    return fx.port();
  }

  @Override
  protected byte[] validBody() {
    return "{\"tags\": {\"owner\": \"limits\"}}".getBytes(StandardCharsets.UTF_8);
  }

  @Override
  protected void assertErrorBody(int status, String body) throws Exception {
    assertAdminError(json, status, body);
  }

  /** {@code body} is the admin API's error body for {@code status}, free of internals. */
  static void assertAdminError(ObjectMapper json, int status, String body) throws Exception {
    JsonNode error = json.readTree(body);
    assertThat(error.path("error_code").asInt()).as("error_code in %s", body).isEqualTo(status);
    assertThat(error.path("message").asText()).as("message in %s", body).isNotBlank();
    ErrorBodies.assertFreeOfInternals(body);
  }

  @Override
  protected void assertServes() throws Exception {
    var health = fx.get("/health");
    assertThat(health.statusCode()).isEqualTo(200);
    assertThat(health.body()).contains("UP");
  }
}
