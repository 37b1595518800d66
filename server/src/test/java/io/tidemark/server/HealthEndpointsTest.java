package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.server.cluster.ControllerLink;
import io.tidemark.server.storage.MemoryStorage;
import io.tidemark.server.storage.StorageNode;
import io.tidemark.stream.api.StreamStore;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.StreamManager;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: {@code /ready} is 503 while a readiness check fails (the node cannot acknowledge produce)
 * and 200 again once it passes; {@code /health} is 503 naming the component while one failed for
 * good, 200 otherwise; both bodies name their checks.
 */
class HealthEndpointsTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();
  private final AtomicBoolean accepting = new AtomicBoolean(true);
  private final AtomicBoolean engineLive = new AtomicBoolean(true);
  private TidemarkServer server;
  @TempDir Path dataDir;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void readyAndHealthFollowTheComponentsBothWays() throws Exception {
    MemoryStorage memory = new MemoryStorage();
    List<String> args = new ArrayList<>(List.of("--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1"));
    args.addAll(TidemarkServerTest.ephemeralPorts());
    server = Main.start(args, Map.of(), (config, settings, meters) -> new Observed(memory.open(config, settings, meters)));
    assertThat(get("/ready").statusCode()).isEqualTo(200);
    assertThat(get("/health").statusCode()).isEqualTo(200);

    accepting.set(false);
    HttpResponse<String> ready = get("/ready");
    assertThat(ready.statusCode()).isEqualTo(503);
    assertThat(JSON.readTree(ready.body()).get("checks").get("storage.appends.accepted").asBoolean()).isFalse();
    assertThat(get("/health").statusCode()).as("not accepting is not a failed component").isEqualTo(200);
    accepting.set(true);
    assertThat(get("/ready").statusCode()).isEqualTo(200);

    engineLive.set(false);
    HttpResponse<String> health = get("/health");
    assertThat(health.statusCode()).isEqualTo(503);
    JsonNode body = JSON.readTree(health.body());
    assertThat(body.get("status").asText()).isEqualTo("DOWN");
    assertThat(body.get("checks").get("storage.engine").asBoolean()).isFalse();
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.adminPort() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** The memory node with switchable checks. */
  private final class Observed implements StorageNode {
    private final StorageNode delegate;

    Observed(StorageNode delegate) {
      this.delegate = delegate;
    }

    @Override public NodeRef node() { return delegate.node(); }
    @Override public StreamStore streamStore() { return delegate.streamStore(); }
    @Override public StreamManager streamManager() { return delegate.streamManager(); }
    @Override public Optional<ObjectStorage> objectStorage() { return delegate.objectStorage(); }
    @Override public Optional<ControllerLink> controller() { return delegate.controller(); }
    @Override public void close() { delegate.close(); }

    @Override
    public Map<String, Boolean> readiness() {
      Map<String, Boolean> checks = new java.util.LinkedHashMap<>(delegate.readiness());
      checks.put("storage.appends.accepted", accepting.get());
      return checks;
    }

    @Override
    public Map<String, Boolean> liveness() {
      return Map.of("storage.engine", engineLive.get());
    }
  }
}
