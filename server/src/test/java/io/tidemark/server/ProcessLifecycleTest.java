package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.server.storage.EmbeddedStorage;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
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
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder builder = new ProcessBuilder(java, "-Xmx512m", "-cp", System.getProperty("java.class.path"),
        Main.class.getName(), "start", "--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (64L << 20),
        "--set", "kafka.listener.host=127.0.0.1", "--set", "kafka.listener.port=0", "--set", "registry.host=127.0.0.1", "--set", "registry.port=0");
    builder.redirectErrorStream(true);
    Process child = builder.start();
    children.add(child);
    return child;
  }

  /** Reads the child's log until it says which port it bound (and keeps draining it). */
  private static int portOf(Process child) {
    AtomicInteger port = new AtomicInteger();
    StringBuffer log = new StringBuffer();
    Thread.ofPlatform().daemon().start(() -> {
      try (BufferedReader reader = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line = reader.readLine(); line != null; line = reader.readLine()) {
          log.append(line).append('\n');
          Matcher m = LISTENING.matcher(line);
          if (m.find()) {
            port.set(Integer.parseInt(m.group(1)));
          }
        }
      } catch (Exception ignored) {
        // the child ended
      }
    });
    await().atMost(Duration.ofSeconds(120)).until(() -> port.get() > 0 || !child.isAlive());
    assertThat(port.get()).as("child started; its log:\n" + log).isPositive();
    HttpClient client = HttpClient.newHttpClient();
    URI ready = URI.create("http://127.0.0.1:" + port.get() + "/ready");
    await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(100)).until(() ->
        client.send(HttpRequest.newBuilder(ready).build(), HttpResponse.BodyHandlers.discarding()).statusCode() == 200);
    return port.get();
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
        "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (64L << 20)), Map.of(), new EmbeddedStorage());
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
