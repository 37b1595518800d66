package io.tidemark.server.admin;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.registry.http.HttpFuzzer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Goal: random and mutated requests never break the admin endpoint or leak internals (seeded, see HttpFuzzer). */
class AdminFuzzTest {
  private static final int LIMIT = 16 * 1024;

  @TempDir
  Path dir;

  @Test
  void adminKeepsServingAndNeverLeaksInternals() throws Exception {
    ObjectMapper json = new ObjectMapper();
    HttpClient http = HttpClient.newHttpClient();
    try (AdminFixture fx = new AdminFixture(dir, LIMIT)) {
      String base = "http://127.0.0.1:" + fx.port();
      HttpResponse<String> created = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/streams"))
          .POST(HttpRequest.BodyPublishers.ofString("{\"tags\": {\"probe\": \"yes\"}}")).build(),
          HttpResponse.BodyHandlers.ofString());
      long probe = json.readTree(created.body()).path("streamId").asLong();
      HttpResponse<String> appended = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/streams/" + probe
          + "/records?records=1")).POST(HttpRequest.BodyPublishers.ofString("probe-batch")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(appended.statusCode()).as(appended.body()).isEqualTo(200);
      List<HttpFuzzer.Seed> seeds = List.of(
          HttpFuzzer.Seed.get("/health"),
          HttpFuzzer.Seed.get("/ready"),
          HttpFuzzer.Seed.get("/metrics"),
          HttpFuzzer.Seed.get("/v1/streams?limit=10"),
          new HttpFuzzer.Seed("POST", "/v1/streams", "{\"tags\": {\"team\": \"fz\"}}"),
          new HttpFuzzer.Seed("POST", "/v1/streams/" + (probe + 1) + "/records?records=2", "{\"k\": \"opaque batch\"}"),
          HttpFuzzer.Seed.get("/v1/streams/" + (probe + 1) + "/records?offset=0&maxBytes=1024"),
          HttpFuzzer.Seed.get("/v1/tables"),
          HttpFuzzer.Seed.get("/v1/tables/orders"),
          HttpFuzzer.Seed.get("/"),
          HttpFuzzer.Seed.get("/console/app.js"),
          HttpFuzzer.Seed.get("/api/console/cluster"),
          HttpFuzzer.Seed.get("/api/console/topics?offset=0&limit=5&q=ord&internal=true"),
          HttpFuzzer.Seed.get("/api/console/schemas/orders-value/diff?from=1&to=2"));
      http.send(HttpRequest.newBuilder(URI.create(base + "/v1/streams"))
          .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
      HttpFuzzer.Result result = HttpFuzzer.run(new HttpFuzzer.Api() {
        @Override
        public String name() {
          return "admin";
        }

        @Override
        public int port() {
          return fx.port();
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
          AdminHttpLimitsTest.assertAdminError(json, status, body);
        }

        @Override
        public void checkServes() throws Exception {
          HttpResponse<String> read = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/streams/" + probe
              + "/records?offset=0")).build(), HttpResponse.BodyHandlers.ofString());
          assertThat(read.statusCode()).as(read.body()).isEqualTo(200);
          assertThat(json.readTree(read.body()).path("batches").get(0).path("payload").asText())
              .isEqualTo(java.util.Base64.getEncoder().encodeToString("probe-batch".getBytes()));
          assertThat(fx.get("/health").body()).contains("UP");
        }
      });
      assertThat(result.inputs()).isEqualTo(HttpFuzzer.inputs());
    }
  }
}
