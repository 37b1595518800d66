package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.server.storage.EmbeddedStorage;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node's {@code /metrics}, scraped and parsed as Prometheus text, against real Kafka clients on
 * one real node (embedded engine): the Grafana dashboard queries only meters the node exports,
 * every exported name follows the conventions, and the Kafka-level meters count exactly what the
 * clients did (bytes and records in and out per topic, consumer lag). One node for the class.
 */
class MetricsEndToEndTest {

  private static final Path DASHBOARD = Path.of("..", "packaging", "grafana", "tidemark-dashboard.json");
  private static final Pattern METRIC_NAME = Pattern.compile("\\btidemark_[a-z0-9_]+");
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @TempDir static Path dataDir;
  private static TidemarkServer server;
  private static String bootstrap;
  private static Admin admin;

  @BeforeAll
  static void startNode() {
    server = Main.start(TidemarkServerTest.withPorts("--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (64L << 20),
        "--set", "stream.upload.interval.ms=1000", "--set", "kafka.metrics.consumer.lag.interval.ms=200"),
        Map.of(), new EmbeddedStorage());
    bootstrap = "127.0.0.1:" + server.kafkaPort().orElseThrow();
    admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
  }

  @AfterAll
  static void stopNode() {
    if (admin != null) {
      admin.close();
    }
    if (server != null) {
      server.close();
    }
  }

  @Test
  void dashboardQueriesOnlyExportedMetersAndEveryNameFollowsTheConventions() throws Exception {
    // Goal: after ordinary traffic (produce, group consume and commit, a table topic, an upload), every meter
    // named in the dashboard's queries is in /metrics, and every exported name is tidemark_*, in base units.
    admin.createTopics(List.of(new NewTopic("dash-events", 2, (short) 1),
        new NewTopic("dash-table", 1, (short) 1).configs(Map.of("table.topic.enable", "true",
            "table.topic.convert.value.type", "string")))).all().get(60, TimeUnit.SECONDS);
    try (KafkaProducer<byte[], byte[]> producer = producer()) {
      for (int i = 0; i < 20; i++) {
        producer.send(new ProducerRecord<>("dash-events", i % 2, null, ("e" + i).getBytes(StandardCharsets.UTF_8))).get();
        producer.send(new ProducerRecord<>("dash-table", ("t" + i).getBytes(StandardCharsets.UTF_8))).get();
      }
    }
    consumeAndCommit("dash-group", "dash-events", 20, Map.of());
    // an error in a response: a Metadata request for a topic that does not exist (auto-creation off for admin clients)
    admin.describeTopics(List.of("dash-missing")).allTopicNames().toCompletionStage().handle((v, e) -> null)
        .toCompletableFuture().get(60, TimeUnit.SECONDS);

    Set<String> wanted = dashboardMetrics();
    assertThat(wanted).as("the dashboard's meters").hasSizeGreaterThan(30);
    await().atMost(Duration.ofSeconds(120)).untilAsserted(() ->
        assertThat(scrape().names()).as("meters the dashboard queries but the node does not export")
            .containsAll(wanted));

    Scrape scrape = scrape();
    for (String name : scrape.names()) {
      assertThat(name).as("prefix").startsWith("tidemark_");
      assertThat(name).as("base units: no milliseconds or nanoseconds").doesNotContainPattern("_(ms|ns|millis|nanos)(_|$)");
    }
    assertThat(scrape.counters()).as("counters").isNotEmpty()
        .allSatisfy(counter -> assertThat(counter).as("a counter's name").endsWith("_total"));
  }

  @Test
  void kafkaMetersCountWhatClientsProducedFetchedAndCommitted() throws Exception {
    // Goal: bytes and records in per topic grow by exactly what was produced (the stored batch sizes), records out
    // by what a group consumed, and the group's lag per partition equals produced minus committed.
    String topic = "moves";
    admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get(60, TimeUnit.SECONDS);
    Scrape before = scrape();
    int[] produced = new int[2];
    try (KafkaProducer<byte[], byte[]> producer = producer()) {
      for (int i = 0; i < 30; i++) {
        int partition = i % 3 == 0 ? 1 : 0;
        producer.send(new ProducerRecord<>(topic, partition, null, ("value-" + i).repeat(1 + i % 4)
            .getBytes(StandardCharsets.UTF_8))).get();
        produced[partition]++;
      }
    }
    long storedBytes = storedBytes(topic);
    Map<String, String> ofTopic = Map.of("topic", topic);
    Scrape after = scrape();
    assertThat(after.value("tidemark_kafka_produced_records_total", ofTopic)
        - before.valueOr("tidemark_kafka_produced_records_total", ofTopic, 0)).isEqualTo(30);
    assertThat(after.value("tidemark_kafka_produced_bytes_total", ofTopic)
        - before.valueOr("tidemark_kafka_produced_bytes_total", ofTopic, 0)).isEqualTo(storedBytes);
    assertThat(after.value("tidemark_kafka_requests_total", Map.of("api", "Produce")))
        .isGreaterThanOrEqualTo(before.valueOr("tidemark_kafka_requests_total", Map.of("api", "Produce"), 0) + 30);

    int committedOnZero = produced[0] - 7;
    consumeAndCommit("movers", topic, 30, Map.of(new TopicPartition(topic, 0), (long) committedOnZero,
        new TopicPartition(topic, 1), (long) produced[1]));
    Scrape consumed = scrape();
    assertThat(consumed.value("tidemark_kafka_fetched_records_total", ofTopic)).isEqualTo(30);
    assertThat(consumed.value("tidemark_kafka_fetched_bytes_total", ofTopic)).isEqualTo(storedBytes);

    await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
      Scrape lag = scrape();
      assertThat(lag.value("tidemark_kafka_consumer_group_lag", Map.of("group", "movers", "topic", topic, "partition", "0")))
          .isEqualTo(7);
      assertThat(lag.value("tidemark_kafka_consumer_group_lag", Map.of("group", "movers", "topic", topic, "partition", "1")))
          .isZero();
      assertThat(lag.value("tidemark_kafka_consumer_group_total_lag", Map.of("group", "movers"))).isEqualTo(7);
    });

    try (KafkaProducer<byte[], byte[]> producer = producer()) {
      producer.send(new ProducerRecord<>(topic, 1, null, "late".getBytes(StandardCharsets.UTF_8))).get();
      await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
        Scrape lag = scrape();
        assertThat(lag.value("tidemark_kafka_consumer_group_lag", Map.of("group", "movers", "topic", topic, "partition", "1")))
            .isEqualTo(1);
        assertThat(lag.value("tidemark_kafka_connections", Map.of("listener", "PLAINTEXT")))
            .as("the open producer and admin connections").isGreaterThanOrEqualTo(2);
      });
    }
    assertThat(scrape().value("tidemark_kafka_connections_opened_total", Map.of("listener", "PLAINTEXT")))
        .isGreaterThanOrEqualTo(scrape().value("tidemark_kafka_connections_closed_total", Map.of("listener", "PLAINTEXT")));
  }

  /** Subscribes {@code group} to {@code topic}, reads {@code records}, then commits {@code commits} (or what it read). */
  private static void consumeAndCommit(String group, String topic, int records, Map<TopicPartition, Long> commits) {
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
        ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false"), new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      consumer.subscribe(List.of(topic));
      List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (read.size() < records && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(500)).forEach(read::add);
      }
      assertThat(read).hasSize(records);
      if (commits.isEmpty()) {
        consumer.commitSync();
      } else {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        commits.forEach((tp, offset) -> offsets.put(tp, new OffsetAndMetadata(offset)));
        consumer.commitSync(offsets);
      }
    }
  }

  private static KafkaProducer<byte[], byte[]> producer() {
    return new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ProducerConfig.LINGER_MS_CONFIG, 0),
        new ByteArraySerializer(), new ByteArraySerializer());
  }

  /** The bytes of the record batches stored for {@code topic}, as DescribeLogDirs reports them. */
  private static long storedBytes(String topic) throws Exception {
    long bytes = 0;
    for (Map<String, LogDirDescription> dirs : admin.describeLogDirs(List.of(0)).allDescriptions().get(60, TimeUnit.SECONDS)
        .values()) {
      for (LogDirDescription dir : dirs.values()) {
        for (var e : dir.replicaInfos().entrySet()) {
          if (e.getKey().topic().equals(topic)) {
            bytes += e.getValue().size();
          }
        }
      }
    }
    assertThat(bytes).isPositive();
    return bytes;
  }

  /** Every {@code tidemark_*} name in the dashboard JSON (its queries and its variable's query). */
  private static Set<String> dashboardMetrics() throws Exception {
    Set<String> names = new TreeSet<>();
    Matcher m = METRIC_NAME.matcher(Files.readString(DASHBOARD));
    while (m.find()) {
      names.add(m.group());
    }
    return names;
  }

  private static Scrape scrape() throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.adminPort() + "/metrics"))
        .GET().build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain");
    return Scrape.parse(r.body());
  }

  /** One sample of the Prometheus text format. */
  record Sample(String name, Map<String, String> labels, double value) {}

  /** A parsed scrape: samples, and the families' types from their TYPE lines. */
  record Scrape(List<Sample> samples, Map<String, String> types) {

    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    static Scrape parse(String text) {
      List<Sample> samples = new ArrayList<>();
      Map<String, String> types = new HashMap<>();
      for (String line : text.split("\n")) {
        if (line.isBlank()) {
          continue;
        }
        if (line.startsWith("# TYPE ")) {
          String[] parts = line.split(" ");
          types.put(parts[2], parts[3]);
          continue;
        }
        if (line.startsWith("#")) {
          continue;
        }
        int brace = line.indexOf('{');
        int space = line.lastIndexOf(' ');
        String name = brace >= 0 && brace < space ? line.substring(0, brace) : line.substring(0, line.indexOf(' '));
        Map<String, String> labels = new HashMap<>();
        if (brace >= 0 && brace < space) {
          Matcher m = LABEL.matcher(line.substring(brace + 1, line.lastIndexOf('}')));
          while (m.find()) {
            labels.put(m.group(1), m.group(2));
          }
        }
        samples.add(new Sample(name, labels, Double.parseDouble(line.substring(space + 1))));
      }
      assertThat(samples).as("samples in the scrape").isNotEmpty();
      return new Scrape(samples, types);
    }

    Set<String> names() {
      Set<String> names = new TreeSet<>();
      samples.forEach(s -> names.add(s.name()));
      return names;
    }

    List<String> counters() {
      return types.entrySet().stream().filter(e -> e.getValue().equals("counter")).map(Map.Entry::getKey).toList();
    }

    /** The sum of the samples of {@code name} whose labels include {@code labels}; fails when there are none. */
    double value(String name, Map<String, String> labels) {
      List<Sample> matching = matching(name, labels);
      assertThat(matching).as(name + labels).isNotEmpty();
      return matching.stream().mapToDouble(Sample::value).sum();
    }

    double valueOr(String name, Map<String, String> labels, double absent) {
      List<Sample> matching = matching(name, labels);
      return matching.isEmpty() ? absent : matching.stream().mapToDouble(Sample::value).sum();
    }

    private List<Sample> matching(String name, Map<String, String> labels) {
      return samples.stream().filter(s -> s.name().equals(name) && s.labels().entrySet().containsAll(labels.entrySet()))
          .toList();
    }
  }
}
