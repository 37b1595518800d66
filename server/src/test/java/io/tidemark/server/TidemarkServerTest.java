package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.server.config.InvalidConfigurationException;
import io.tidemark.server.storage.EmbeddedStorage;
import io.tidemark.server.storage.MemoryStorage;
import io.tidemark.server.storage.StorageFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TidemarkServerTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  /** The Kafka listener and the schema registry on free loopback ports (never the product defaults). */
  static List<String> ephemeralPorts() {
    return List.of("--set", "kafka.listener.host=127.0.0.1", "--set", "kafka.listener.port=0", "--set",
        "registry.host=127.0.0.1", "--set", "registry.port=0", "--set", "table.rest.host=127.0.0.1", "--set",
        "table.rest.port=0", "--set", "controller.voters=" + FreePorts.singleVoter());
  }

  private final HttpClient http = HttpClient.newHttpClient();
  private final List<TidemarkServer> servers = new ArrayList<>();
  @TempDir Path dataDir;

  @AfterEach
  void stopAll() {
    servers.forEach(TidemarkServer::close);
  }

  private TidemarkServer start(StorageFactory storage, String... extra) {
    List<String> args = new ArrayList<>(List.of("--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1", "--set", "admin.streams.api.enabled=true"));
    args.addAll(ephemeralPorts());
    args.addAll(List.of(extra));
    TidemarkServer server = Main.start(args, Map.of(), storage);
    servers.add(server);
    return server;
  }

  @Test
  void appendedBatchesReadBackByteIdenticalAfterRestart() throws Exception {
    // Goal: create + append through the admin API, restart the process, read every batch back unchanged.
    MemoryStorage storage = new MemoryStorage();
    TidemarkServer first = start(storage);
    long id = json(post(first, "/v1/streams", "{\"tags\":{\"name\":\"orders\"}}".getBytes()), 201).get("streamId").asLong();
    SplittableRandom random = new SplittableRandom(42);
    List<byte[]> sent = new ArrayList<>();
    long expectedOffset = 0;
    for (int i = 0; i < 20; i++) {
      byte[] batch = new byte[1 + random.nextInt(4096)];
      random.nextBytes(batch);
      sent.add(batch);
      JsonNode appended = json(post(first, "/v1/streams/" + id + "/records?records=3", batch), 200);
      assertThat(appended.get("baseOffset").asLong()).isEqualTo(expectedOffset);
      expectedOffset += 3;
    }
    first.close();
    assertThat(first.state()).isEqualTo(TidemarkServer.State.STOPPED);

    TidemarkServer second = start(storage);
    List<byte[]> read = new ArrayList<>();
    long offset = 0;
    while (offset < expectedOffset) {
      JsonNode result = json(get(second, "/v1/streams/" + id + "/records?offset=" + offset + "&maxBytes=10000"), 200);
      for (JsonNode batch : result.get("batches")) {
        read.add(Base64.getDecoder().decode(batch.get("payload").asText()));
      }
      assertThat(result.get("nextOffset").asLong()).isGreaterThan(offset);
      offset = result.get("nextOffset").asLong();
    }
    assertThat(read).containsExactlyElementsOf(sent);
    JsonNode list = json(get(second, "/v1/streams"), 200).get("streams");
    assertThat(list).hasSize(1);
    assertThat(list.get(0).get("streamId").asLong()).isEqualTo(id);
    assertThat(list.get(0).get("endOffset").asLong()).isEqualTo(60);
    assertThat(list.get(0).get("tags").get("name").asText()).isEqualTo("orders");
  }

  @Test
  void realEngineKeepsAppendsAcrossARestartAndReportsItsMeters() throws Exception {
    // Goal: on the embedded engine (block WAL, local objects, journaled metadata) appends survive a restart byte-identical.
    String wal = "wal.capacity.bytes=" + (32L << 20);
    TidemarkServer first = start(new EmbeddedStorage(), "--set", wal);
    JsonNode ready = json(get(first, "/ready"), 200);
    assertThat(ready.get("checks").get("wal.open").asBoolean()).isTrue();
    long id = json(post(first, "/v1/streams", new byte[0]), 201).get("streamId").asLong();
    SplittableRandom random = new SplittableRandom(3);
    List<byte[]> sent = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      byte[] batch = new byte[1 + random.nextInt(16_384)];
      random.nextBytes(batch);
      sent.add(batch);
      assertThat(json(post(first, "/v1/streams/" + id + "/records?records=2", batch), 200).get("baseOffset").asLong())
          .isEqualTo(2L * i);
    }
    String metrics = get(first, "/metrics").body();
    java.util.regex.Matcher walAppends = java.util.regex.Pattern.compile("(?m)^tidemark_wal_append_seconds_count (\\S+)$")
        .matcher(metrics);
    assertThat(walAppends.find()).as(metrics).isTrue();
    assertThat(Double.parseDouble(walAppends.group(1))).isGreaterThanOrEqualTo(25); // ours, plus any broker/registry appends
    assertThat(metrics).contains("tidemark_stream_unuploaded_bytes").contains("tidemark_objectstore_bytes_total");
    first.close();
    assertThat(dataDir.resolve("wal").resolve("wal.log")).exists();
    assertThat(dataDir.resolve("controller")).isDirectory();

    TidemarkServer second = start(new EmbeddedStorage(), "--set", wal);
    List<byte[]> read = new ArrayList<>();
    long offset = 0;
    while (offset < 50) {
      JsonNode result = json(get(second, "/v1/streams/" + id + "/records?offset=" + offset + "&maxBytes=20000"), 200);
      for (JsonNode batch : result.get("batches")) {
        read.add(Base64.getDecoder().decode(batch.get("payload").asText()));
      }
      offset = result.get("nextOffset").asLong();
    }
    assertThat(read).containsExactlyElementsOf(sent);
    assertThat(json(get(second, "/v1/streams"), 200).get("streams").get(0).get("endOffset").asLong()).isEqualTo(50);
  }

  @Test
  void healthReadyAndMetricsAnswer() throws Exception {
    // Goal: liveness and readiness are up with their checks, and /metrics has JVM and admin meters.
    TidemarkServer server = start(new MemoryStorage());
    assertThat(json(get(server, "/health"), 200).get("status").asText()).isEqualTo("UP");
    JsonNode ready = json(get(server, "/ready"), 200);
    assertThat(ready.get("checks").get("storage.recovered").asBoolean()).isTrue();
    assertThat(ready.get("checks").get("wal.open").asBoolean()).isTrue();
    long id = json(post(server, "/v1/streams", new byte[0]), 201).get("streamId").asLong();
    json(post(server, "/v1/streams/" + id + "/records", new byte[] {1, 2, 3}), 200);
    HttpResponse<String> metrics = get(server, "/metrics");
    assertThat(metrics.statusCode()).isEqualTo(200);
    assertThat(metrics.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).startsWith("text/plain"));
    assertThat(metrics.body()).contains("tidemark_jvm_memory_used_bytes").contains("tidemark_admin_appended_bytes_total 3.0");
  }

  @Test
  void duringRecoveryTheProcessIsLiveButNotReady() throws Exception {
    // Goal: while storage recovers, /health is UP, /ready is 503 naming storage.recovered, the stream API is 503.
    int port;
    try (java.net.ServerSocket probe = new java.net.ServerSocket(0)) {
      port = probe.getLocalPort();
    }
    java.util.concurrent.CountDownLatch recovering = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch finish = new java.util.concurrent.CountDownLatch(1);
    MemoryStorage memory = new MemoryStorage();
    StorageFactory slow = (config, settings, meters) -> {
      recovering.countDown();
      try {
        finish.await();
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
      return memory.open(config, settings, meters);
    };
    java.util.concurrent.CompletableFuture<TidemarkServer> starting = java.util.concurrent.CompletableFuture.supplyAsync(
        () -> Main.start(withPorts("--set", "data.dir=" + dataDir, "--set", "admin.port=" + port,
            "--set", "admin.host=127.0.0.1", "--set", "admin.streams.api.enabled=true"), Map.of(), slow));
    try {
      assertThat(recovering.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      URI base = URI.create("http://127.0.0.1:" + port);
      // the endpoint starts beside the storage: it answers while the recovery still runs
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(60)).ignoreExceptions().until(() -> http.send(
          HttpRequest.newBuilder(base.resolve("/health")).build(), HttpResponse.BodyHandlers.ofString()).statusCode() == 200);
      HttpResponse<String> ready = http.send(HttpRequest.newBuilder(base.resolve("/ready")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(ready.statusCode()).isEqualTo(503);
      assertThat(JSON.readTree(ready.body()).get("checks").get("storage.recovered").asBoolean()).isFalse();
      assertThat(http.send(HttpRequest.newBuilder(base.resolve("/v1/streams")).build(), HttpResponse.BodyHandlers.ofString())
          .statusCode()).isEqualTo(503);
    } finally {
      finish.countDown();
    }
    TidemarkServer server = starting.get(30, java.util.concurrent.TimeUnit.SECONDS);
    servers.add(server);
    assertThat(json(get(server, "/ready"), 200).get("status").asText()).isEqualTo("READY");
  }

  @Test
  void badRequestsGetClearErrorsAndChangeNothing() throws Exception {
    // Goal: unknown stream 404, bad parameters 400, offsets past the end 416; the stream is unchanged.
    TidemarkServer server = start(new MemoryStorage());
    long id = json(post(server, "/v1/streams", new byte[0]), 201).get("streamId").asLong();
    json(post(server, "/v1/streams/" + id + "/records", new byte[] {9}), 200);
    assertThat(json(post(server, "/v1/streams/999/records", new byte[] {1}), 404).get("message").asText()).contains("999");
    assertThat(json(post(server, "/v1/streams/abc/records", new byte[] {1}), 400).get("message").asText()).contains("abc");
    assertThat(json(post(server, "/v1/streams/" + id + "/records?records=0", new byte[] {1}), 400).get("message").asText())
        .contains("records");
    assertThat(json(post(server, "/v1/streams/" + id + "/records", new byte[0]), 400).get("message").asText()).contains("empty");
    json(get(server, "/v1/streams/" + id + "/records?offset=5"), 416);
    json(get(server, "/v1/streams/" + id + "/records?maxBytes=-1"), 400);
    assertThat(json(get(server, "/v1/streams"), 200).get("streams").get(0).get("endOffset").asLong()).isEqualTo(1);
  }

  @Test
  void oversizedBodyIsRejected() throws Exception {
    // Goal: the request-size bound holds; a larger batch is refused and not appended.
    TidemarkServer server = start(new MemoryStorage(), "--set", "admin.max.request.bytes=2048");
    long id = json(post(server, "/v1/streams", new byte[0]), 201).get("streamId").asLong();
    assertThat(post(server, "/v1/streams/" + id + "/records", new byte[4096]).statusCode()).isEqualTo(413);
    assertThat(json(get(server, "/v1/streams"), 200).get("streams").get(0).get("endOffset").asLong()).isZero();
  }

  @Test
  void invalidSettingFailsBeforeAnythingStartsNamingTheKey() {
    // Goal: a bad value stops start-up with the key in the message, and storage is never opened.
    AtomicBoolean opened = new AtomicBoolean();
    StorageFactory storage = (s, settings, meters) -> {
      opened.set(true);
      throw new AssertionError("must not be reached");
    };
    assertThatThrownBy(() -> Main.start(List.of("--set", "admin.port=-5"), Map.of(), storage))
        .isInstanceOf(InvalidConfigurationException.class)
        .hasMessageContaining("admin.port")
        .hasMessageContaining("-5");
    assertThat(opened).isFalse();
  }

  @Test
  void failingComponentLeavesNoPortBound() throws Exception {
    // Goal: when storage fails to open, start-up fails with its message and the admin port is released again.
    int port;
    try (java.net.ServerSocket probe = new java.net.ServerSocket(0)) {
      port = probe.getLocalPort();
    }
    StorageFactory storage = (s, settings, meters) -> {
      throw new IllegalStateException("bucket tidemark-missing does not exist (s3.bucket)");
    };
    assertThatThrownBy(() -> Main.start(withPorts("--set", "data.dir=" + dataDir, "--set", "admin.port=" + port,
        "--set", "admin.host=127.0.0.1"), Map.of(), storage)).hasMessageContaining("s3.bucket");
    try (java.net.ServerSocket rebind = new java.net.ServerSocket()) {
      rebind.setReuseAddress(true);
      rebind.bind(new java.net.InetSocketAddress("127.0.0.1", port));
      assertThat(rebind.isBound()).isTrue();
    }
  }

  static List<String> withPorts(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.addAll(ephemeralPorts());
    return all;
  }

  private HttpResponse<String> get(TidemarkServer server, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(uri(server, path)).GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> post(TidemarkServer server, String path, byte[] body) throws Exception {
    return http.send(HttpRequest.newBuilder(uri(server, path)).POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static URI uri(TidemarkServer server, String path) {
    return URI.create("http://127.0.0.1:" + server.adminPort() + path);
  }

  private static JsonNode json(HttpResponse<String> response, int expectedStatus) throws Exception {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(expectedStatus);
    return JSON.readTree(response.body());
  }
}
