package io.tidemark.server.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tidemark.server.admin.AdminServer;
import io.tidemark.server.admin.Health;
import io.tidemark.server.config.ServerConfig;
import io.tidemark.stream.config.Settings;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: the console's HTTP surface is read-only, bounded and behind the admin endpoint's
 * authentication: only the listed files are served (with a policy that loads nothing from elsewhere),
 * bad paging parameters get 400, a page whose source is not on the node gets 503 naming it, writes get
 * no route. An admin endpoint alone (no broker, registry or controller) is enough to check this.
 */
class ConsoleEndpointTest {

  private static final String AUTH = "Basic " + Base64.getEncoder().encodeToString("ops:s3cret".getBytes(StandardCharsets.UTF_8));
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static AdminServer server;
  @TempDir static Path dataDir;

  @BeforeAll
  static void start() {
    Settings settings = Settings.empty()
        .with(ServerConfig.ADMIN_PORT.name(), "0")
        .with(ServerConfig.ADMIN_HOST.name(), "127.0.0.1")
        .with(ServerConfig.DATA_DIR.name(), dataDir.toString())
        .with(ServerConfig.ADMIN_AUTH_BASIC_USERS.name(), "ops:s3cret");
    server = new AdminServer(ServerConfig.from(settings), new Health() {
      @Override
      public boolean live() {
        return true;
      }

      @Override
      public Map<String, Boolean> readiness() {
        return Map.of("storage.recovered", true);
      }
    }, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
    server.start();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @Test
  void theConsoleNeedsTheAdminUserAndServesOnlyItsOwnFilesUnderAStrictPolicy() throws Exception {
    assertThat(get("/", null).statusCode()).isEqualTo(401);
    assertThat(get("/api/console/cluster", null).statusCode()).isEqualTo(401);

    HttpResponse<String> index = get("/", AUTH);
    assertThat(index.statusCode()).isEqualTo(200);
    assertThat(index.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).startsWith("text/html"));
    assertThat(index.headers().firstValue("Content-Security-Policy")).hasValueSatisfying(v ->
        assertThat(v).contains("default-src 'self'").contains("script-src 'self'").doesNotContain("unsafe"));
    assertThat(index.body()).contains("/console/app.js").doesNotContain("http://").doesNotContain("https://");
    for (String file : StaticAssets.FILES.keySet()) {
      HttpResponse<String> r = get("/console/" + file, AUTH);
      assertThat(r.statusCode()).as(file).isEqualTo(200);
      assertThat(r.body()).as(file + " loads nothing from another origin")
          .doesNotContainPattern("(from|import|src=|href=|url\\()\\s*[\"'`(]?\\s*(https?:)?//")
          .doesNotContainPattern("fetch\\(\\s*[\"'`]https?:");
    }
    assertThat(get("/console/app.js", AUTH).headers().firstValue("Content-Type"))
        .hasValueSatisfying(v -> assertThat(v).startsWith("text/javascript"));
    assertThat(get("/console/secrets.txt", AUTH).statusCode()).isEqualTo(404);
    assertThat(get("/console/..%2F..%2Fpom.xml", AUTH).statusCode()).as("Jetty refuses encoded slashes").isIn(400, 404);
    assertThat(get("/console/ConsoleEndpointTest.class", AUTH).statusCode()).isEqualTo(404);
  }

  @Test
  void everyRouteIsReadOnlyAndBounded() throws Exception {
    for (String path : new String[] {"/", "/api/console/cluster", "/api/console/topics", "/api/console/groups",
        "/api/console/schemas", "/api/console/moves"}) {
      HttpResponse<String> post = send(HttpRequest.newBuilder(uri(path)).header("Authorization", AUTH)
          .POST(HttpRequest.BodyPublishers.ofString("{}")).build());
      assertThat(post.statusCode()).as("POST " + path).isIn(404, 405);
      HttpResponse<String> delete = send(HttpRequest.newBuilder(uri(path)).header("Authorization", AUTH).DELETE().build());
      assertThat(delete.statusCode()).as("DELETE " + path).isIn(404, 405);
    }
    assertThat(error(get("/api/console/topics?limit=501", AUTH), 400)).contains("limit").contains("500");
    assertThat(error(get("/api/console/topics?limit=0", AUTH), 400)).contains("limit");
    assertThat(error(get("/api/console/groups?offset=-1", AUTH), 400)).contains("offset");
    assertThat(error(get("/api/console/schemas?limit=abc", AUTH), 400)).contains("number");
    assertThat(error(get("/api/console/topics?q=" + "x".repeat(201), AUTH), 400)).contains("200 characters");
  }

  @Test
  void aPageWhoseSourceIsNotOnThisNodeSaysWhichAndTheClusterPageStillAnswers() throws Exception {
    assertThat(error(get("/api/console/topics", AUTH), 503)).contains("no broker");
    assertThat(error(get("/api/console/groups", AUTH), 503)).contains("no broker");
    assertThat(error(get("/api/console/schemas", AUTH), 503)).contains("no schema registry");
    assertThat(error(get("/api/console/tables", AUTH), 503)).contains("table topics do not run");
    HttpResponse<String> cluster = get("/api/console/cluster", AUTH);
    assertThat(cluster.statusCode()).as(cluster.body()).isEqualTo(200);
    JsonNode body = new ObjectMapper().readTree(cluster.body());
    assertThat(body.path("nodes")).hasSize(1);
    assertThat(body.path("nodes").get(0).path("self").asBoolean()).isTrue();
    assertThat(body.path("quorum").isNull()).isTrue();
    assertThat(body.path("quorumNote").asText()).contains("alone");
    assertThat(body.path("thisNode").path("ready").asBoolean()).isTrue();
  }

  private static String error(HttpResponse<String> response, int status) throws Exception {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    JsonNode body = new ObjectMapper().readTree(response.body());
    assertThat(body.path("error_code").asInt()).isEqualTo(status);
    return body.path("message").asText();
  }

  private static HttpResponse<String> get(String path, String auth) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).GET();
    if (auth != null) {
      b.header("Authorization", auth);
    }
    return send(b.build());
  }

  private static HttpResponse<String> send(HttpRequest request) throws Exception {
    return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private static URI uri(String path) {
    return URI.create("http://127.0.0.1:" + server.port() + path);
  }
}
