package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.server.storage.EmbeddedStorage;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The real process (a child JVM running Main start on the embedded storage) stopped by SIGTERM and by SIGKILL. */
class ProcessLifecycleTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern LISTENING = Pattern.compile("admin endpoint listening on http://127\\.0\\.0\\.1:(\\d+)");
  private final HttpClient http = HttpClient.newHttpClient();
  private final List<Process> children = new ArrayList<>();
  private final List<TidemarkServer> servers = new ArrayList<>();
  @TempDir Path dataDir;
  private long streamId = -1;

  @AfterEach
  void cleanUp() {
    children.forEach(Process::destroyForcibly);
    servers.forEach(TidemarkServer::close);
  }

  @Test
  void sigtermUploadsEverythingAndARestartReadsItBack() throws Exception {
    // Goal: graceful shutdown on SIGTERM uploads what the WAL holds; the next start reads every batch back unchanged.
    Process child = startChild();
    int port = portOf(child);
    List<byte[]> sent = appendBatches(port, 30);
    child.destroy(); // SIGTERM
    assertThat(child.waitFor(120, TimeUnit.SECONDS)).as("child exited after SIGTERM").isTrue();
    try (Stream<Path> objects = Files.walk(dataDir.resolve("objects"))) {
      assertThat(objects.filter(Files::isRegularFile).count()).as("objects uploaded on shutdown").isPositive();
    }
    assertThat(readBackInProcess()).containsExactlyElementsOf(sent);
  }

  @Test
  void sigkillLosesNoAcknowledgedBatch() throws Exception {
    // Goal: after kill -9 the WAL is recovered at the next start and every acknowledged batch reads back unchanged.
    Process child = startChild();
    int port = portOf(child);
    List<byte[]> sent = appendBatches(port, 30);
    child.destroyForcibly(); // SIGKILL
    assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(readBackInProcess()).containsExactlyElementsOf(sent);
  }

  private Process startChild() throws Exception {
    Process child = ChildServer.start(dataDir);
    children.add(child);
    return child;
  }

  /** The child's admin port, once it is ready. */
  private static int portOf(Process child) {
    int port = ChildServer.portFrom(child, LISTENING);
    HttpClient client = HttpClient.newHttpClient();
    URI ready = URI.create("http://127.0.0.1:" + port + "/ready");
    await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(100)).until(() ->
        client.send(HttpRequest.newBuilder(ready).build(), HttpResponse.BodyHandlers.discarding()).statusCode() == 200);
    return port;
  }

  private List<byte[]> appendBatches(int port, int count) throws Exception {
    long id = JSON.readTree(send(port, "POST", "/v1/streams", new byte[0], 201)).get("streamId").asLong();
    streamId = id;
    SplittableRandom random = new SplittableRandom(7);
    List<byte[]> sent = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      byte[] batch = new byte[1 + random.nextInt(8192)];
      random.nextBytes(batch);
      send(port, "POST", "/v1/streams/" + id + "/records", batch, 200);
      sent.add(batch);
    }
    return sent;
  }

  private List<byte[]> readBackInProcess() throws Exception {
    TidemarkServer server = Main.start(TidemarkServerTest.withPorts("--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1", "--set", "admin.streams.api.enabled=true", "--set", "wal.capacity.bytes=" + (64L << 20)),
        Map.of(), new EmbeddedStorage());
    servers.add(server);
    List<byte[]> read = new ArrayList<>();
    long offset = 0;
    while (true) {
      JsonNode result = JSON.readTree(send(server.adminPort(), "GET", "/v1/streams/" + streamId + "/records?offset=" + offset, null, 200));
      if (result.get("batches").isEmpty()) {
        return read;
      }
      for (JsonNode batch : result.get("batches")) {
        read.add(Base64.getDecoder().decode(batch.get("payload").asText()));
      }
      offset = result.get("nextOffset").asLong();
    }
  }

  private String send(int port, String method, String path, byte[] body, int expectedStatus) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
    request = body == null ? request.GET() : request.method(method, HttpRequest.BodyPublishers.ofByteArray(body));
    HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(expectedStatus);
    return response.body();
  }
}
