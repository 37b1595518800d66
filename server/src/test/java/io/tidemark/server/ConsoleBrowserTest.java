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
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: the web console, opened in a real browser (Debian's headless Chromium driven by
 * playwright-core from {@code src/test/js/console-check.mjs}), shows the real state of one node: its
 * topics with partitions and end offsets, a consumer group with its live member and its lag per
 * partition, a table topic with its rows, a schema subject with a diff between its two versions, and
 * no moves; and its pages update by themselves when a topic is created and more records arrive, with
 * no error in the browser's console. In CI a missing browser or npm install fails the test; elsewhere
 * it is skipped.
 */
class ConsoleBrowserTest {

  private static final int PARTITIONS = 3;
  private static final int PER_PARTITION = 40;
  private static final int COMMITTED = 20;
  private static final int MORE = 30;
  private static final int TABLE_ROWS = 25;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http = HttpClient.newHttpClient();
  private final List<AutoCloseable> open = new ArrayList<>();
  @TempDir Path dataDir;

  @AfterEach
  void stop() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
  }

  @Test
  void theConsoleShowsTheClustersRealStateAndUpdatesItself() throws Exception {
    String node = ConsoleBrowser.requireBrowser();
    TidemarkServer server = Main.start(TidemarkServerTest.withPorts("--set", "data.dir=" + dataDir,
        "--set", "admin.port=0", "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (32L << 20),
        "--set", "kafka.group.initial.rebalance.delay.ms=0"),
        Map.of(), new EmbeddedStorage());
    open.add(server);
    String bootstrap = "127.0.0.1:" + server.kafkaPort().orElseThrow();
    Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    open.add(admin);
    admin.createTopics(List.of(new NewTopic("orders", PARTITIONS, (short) 1),
        new NewTopic("clicks", 1, (short) 1).configs(Map.of("table.topic.enable", "true",
            "table.topic.commit.interval.ms", "1000", "table.topic.convert.value.type", "string"))))
        .all().get(60, TimeUnit.SECONDS);
    KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
        ProducerConfig.LINGER_MS_CONFIG, 5), new StringSerializer(), new StringSerializer());
    open.add(producer);
    for (int p = 0; p < PARTITIONS; p++) {
      for (int i = 0; i < PER_PARTITION; i++) {
        producer.send(new ProducerRecord<>("orders", p, "k" + i, "order-" + p + "-" + i));
      }
    }
    for (int i = 0; i < TABLE_ROWS; i++) {
      producer.send(new ProducerRecord<>("clicks", "click-" + i));
    }
    producer.flush();

    LiveMember member = new LiveMember(bootstrap, "billing", "orders", PARTITIONS * PER_PARTITION, COMMITTED);
    open.add(member);

    int registry = server.registryPort().orElseThrow();
    register(registry, "orders-value", "{\"type\":\"record\",\"name\":\"Order\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"}]}");
    register(registry, "orders-value", "{\"type\":\"record\",\"name\":\"Order\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"},"
        + "{\"name\":\"coupon\",\"type\":[\"null\",\"string\"],\"default\":null}]}");
    AtomicReference<String> tableName = new AtomicReference<>();
    await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
      JsonNode status = getJson(server, "/v1/tables/clicks");
      assertThat(status.path("rowsWritten").asLong()).isEqualTo(TABLE_ROWS);
      assertThat(status.path("commits").asLong()).isPositive();
      tableName.set(status.path("table").asText());
    });
    assertThat(member.joined.await(60, TimeUnit.SECONDS)).as("the member read and committed").isTrue();
    assertThat(member.failure.get()).isNull();

    Map<String, Object> want = new HashMap<>();
    want.put("nodeId", server.config().nodeId());
    want.put("kafkaEndpoint", bootstrap);
    want.put("topic", "orders");
    want.put("partitions", PARTITIONS);
    want.put("records", PARTITIONS * PER_PARTITION);
    want.put("group", "billing");
    want.put("lag", PARTITIONS * (PER_PARTITION - COMMITTED));
    want.put("lagPerPartition", PER_PARTITION - COMMITTED);
    want.put("lagAfter", PARTITIONS * (PER_PARTITION - COMMITTED) + MORE);
    want.put("table", "clicks");
    want.put("tableName", tableName.get());
    want.put("tableRows", TABLE_ROWS);
    want.put("subject", "orders-value");
    want.put("addedField", "coupon");
    want.put("newTopic", "late-arrival");

    long started = System.nanoTime();
    JsonNode timings = ConsoleBrowser.run(node, "console-check.mjs", server.adminPort(), want, (line, stdin) -> {
      if (line.equals("READY")) {
        // The pages are open and checked: now the cluster changes under them.
        admin.createTopics(List.of(new NewTopic("late-arrival", 1, (short) 1))).all().get(60, TimeUnit.SECONDS);
        for (int i = 0; i < MORE; i++) {
          producer.send(new ProducerRecord<>("orders", 0, "k", "more-" + i));
        }
        producer.flush();
        stdin.write("GO\n".getBytes(StandardCharsets.UTF_8));
        stdin.flush();
      }
    });
    System.out.println("console browser check took " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)
        + " ms: " + timings);
    assertThat(member.failure.get()).isNull();
  }

  /** A consumer group member that reads everything, commits {@code committed} per partition and stays in the group. */
  private static final class LiveMember implements AutoCloseable {
    final CountDownLatch joined = new CountDownLatch(1);
    final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final Thread thread;

    LiveMember(String bootstrap, String group, String topic, int records, long committed) {
      Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
          ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
          ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false, ConsumerConfig.CLIENT_ID_CONFIG, "console-test-member");
      thread = Thread.ofPlatform().name("console-test-member").start(() -> {
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
          consumer.subscribe(List.of(topic));
          int seen = 0;
          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
          while (seen < records && System.nanoTime() < deadline) {
            seen += consumer.poll(Duration.ofMillis(200)).count();
          }
          if (seen != records) {
            throw new AssertionError("the member read " + seen + " of " + records + " records");
          }
          Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
          for (TopicPartition tp : consumer.assignment()) {
            offsets.put(tp, new OffsetAndMetadata(committed));
          }
          consumer.commitSync(offsets);
          joined.countDown();
          while (running.get()) {
            consumer.poll(Duration.ofMillis(200));
          }
        } catch (Throwable t) {
          failure.set(t);
          joined.countDown();
        }
      });
    }

    @Override
    public void close() throws InterruptedException {
      running.set(false);
      thread.join(30_000);
    }
  }

  private void register(int port, String subject, String avro) throws Exception {
    String body = JSON.writeValueAsString(Map.of("schema", avro));
    HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/subjects/"
        + subject + "/versions")).header("Content-Type", "application/vnd.schemaregistry.v1+json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
  }

  private JsonNode getJson(TidemarkServer server, String path) throws Exception {
    HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.adminPort() + path))
        .GET().build(), HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return JSON.readTree(response.body());
  }
}
