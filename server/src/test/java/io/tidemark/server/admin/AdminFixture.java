package io.tidemark.server.admin;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tidemark.server.config.ServerConfig;
import io.tidemark.server.storage.MemoryStorage;
import io.tidemark.server.storage.StorageNode;
import io.tidemark.stream.config.Settings;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;

/** An {@link AdminServer} on an ephemeral port over in-memory streams, and a client of it. Test helper. */
final class AdminFixture implements AutoCloseable {
  final AdminServer server;
  private final StorageNode storage;
  private final HttpClient http = HttpClient.newHttpClient();

  AdminFixture(Path dataDir, int maxRequestBytes) {
    Settings settings = Settings.empty()
        .with(ServerConfig.ADMIN_PORT.name(), "0")
        .with(ServerConfig.ADMIN_HOST.name(), "127.0.0.1")
        .with(ServerConfig.DATA_DIR.name(), dataDir.toString())
        .with(ServerConfig.ADMIN_STREAMS_API_ENABLED.name(), "true")
        .with(ServerConfig.ADMIN_MAX_REQUEST_BYTES.name(), Integer.toString(maxRequestBytes));
    ServerConfig config = ServerConfig.from(settings);
    PrometheusMeterRegistry meters = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    server = new AdminServer(config, new Health() {
      @Override
      public boolean live() {
        return true;
      }

      @Override
      public Map<String, Boolean> readiness() {
        return Map.of("storage.recovered", true);
      }
    }, meters);
    storage = new MemoryStorage().open(config, settings, meters);
    server.start();
    server.attach(storage);
  }

  int port() {
    return server.port();
  }

  HttpResponse<String> get(String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Override
  public void close() throws Exception {
    server.close();
    storage.close();
  }
}
