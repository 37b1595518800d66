package io.tidemark.registry.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.tidemark.registry.RegistryConfig;
import io.tidemark.registry.store.MemorySchemaStore;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/** The shared HTTP limits hold on the schema registry (started with registry.max.request.bytes=4096). */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RegistryHttpLimitsTest extends HttpLimitsContract {
  private static final int LIMIT = 4096;
  private final AtomicInteger subjects = new AtomicInteger();
  private RegistryHarness h;

  RegistryHttpLimitsTest() {
    super(LIMIT, "/subjects/limits/versions");
  }

  @BeforeAll
  void start() {
    h = new RegistryHarness(new MemorySchemaStore(), RegistryConfig.defaults(0).withMaxRequestBytes(LIMIT));
  }

  @AfterAll
  void stop() {
    h.close();
  }

  @Override
  protected int port() {
    return h.server.port();
  }

  @Override
  protected byte[] validBody() {
    String schema = "{\"type\":\"record\",\"name\":\"R" + subjects.incrementAndGet() + "\",\"fields\":[]}";
    return RegistryHarness.schemaBody(null, schema).getBytes(StandardCharsets.UTF_8);
  }

  @Override
  protected void assertErrorBody(int status, String body) throws Exception {
    JsonNode json = RegistryHarness.JSON.readTree(body);
    assertThat(json.path("error_code").isInt()).as("error_code in %s", body).isTrue();
    assertThat(json.path("error_code").asInt() / (json.path("error_code").asInt() >= 1000 ? 100 : 1)).isEqualTo(status);
    assertThat(json.path("message").asText()).isNotBlank();
    ErrorBodies.assertFreeOfInternals(body);
  }

  @Override
  protected void assertServes() {
    assertThat(h.get("/schemas/types").text()).contains("AVRO");
  }
}
