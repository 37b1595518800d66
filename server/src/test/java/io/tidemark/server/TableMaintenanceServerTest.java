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
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: on a node, an upsert table topic fed many small commits (updates and tombstones over three
 * partitions) is compacted by the built-in maintenance of its coordinator, which reports it on
 * /v1/tables and in the Prometheus meters, and the table read afterwards by the plain Iceberg JVM
 * ({@code server/iceberg-reader}, nothing of Tidemark on its class path) through the REST catalog
 * holds exactly the latest record of every live key.
 */
class TableMaintenanceServerTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int PARTITIONS = 3;
  private final HttpClient http = HttpClient.newHttpClient();
  @TempDir Path dataDir;
  private TidemarkServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void anUpsertTableIsCompactedAndReadsTheLatestRecordPerKeyFromAPlainIcebergJvm() throws Exception {
    String classpath = IcebergStandardReaderTest.readerClasspath();
    server = Main.start(TidemarkServerTest.withPorts("--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (64L << 20),
        "--set", "table.maintenance.interval.ms=1000", "--set", "table.maintenance.min.input.files=2"),
        Map.of(), new EmbeddedStorage());
    String bootstrap = "127.0.0.1:" + server.kafkaPort().orElseThrow();
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin.createTopics(List.of(new NewTopic("orders", PARTITIONS, (short) 1).configs(Map.of("table.topic.enable", "true",
          "table.topic.commit.interval.ms", "1000", "table.topic.convert.value.type", "string",
          "table.topic.upsert.enable", "true", "table.topic.compaction.target.file.bytes", "1048576"))))
          .all().get(60, TimeUnit.SECONDS);
    }
    // key -> "partition \t offset \t key \t value" of its latest record (absent after a tombstone)
    Map<String, String> latest = new TreeMap<>();
    Random random = new Random(42);
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
        bootstrap, ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.LINGER_MS_CONFIG, "0"), new StringSerializer(),
        new StringSerializer())) {
      for (int batch = 0; batch < 6; batch++) {
        long commitsBefore = status().path("commits").asLong();
        for (int i = 0; i < 20; i++) {
          String key = "k" + random.nextInt(25);
          String value = random.nextInt(6) == 0 ? null : "v" + batch + "-" + i;
          RecordMetadata m = producer.send(new ProducerRecord<>("orders", key, value)).get(60, TimeUnit.SECONDS);
          if (value == null) {
            latest.remove(key);
          } else {
            latest.put(key, m.partition() + "\t" + m.offset() + "\t" + key + "\t" + value);
          }
        }
        // one commit per batch at least, so the table gets many small files and delete files
        await().atMost(Duration.ofSeconds(90)).until(() -> status().path("commits").asLong() > commitsBefore);
      }
    }
    // everything landed, then a maintenance run after the last commit compacted it
    await().atMost(Duration.ofSeconds(90)).untilAsserted(() -> {
      JsonNode s = status();
      for (JsonNode p : s.path("partitions")) {
        assertThat(p.path("lagRecords").asLong()).isZero();
      }
      JsonNode m = s.path("maintenance");
      assertThat(m.path("dataFilesRewritten").asLong()).isPositive();
      assertThat(m.path("lastRunMs").asLong()).isGreaterThan(s.path("lastCommitMs").asLong());
      assertThat(m.path("lastError").asText()).isEmpty();
    });
    JsonNode maintenance = status().path("maintenance");
    System.out.println("[maintenance] " + maintenance);
    assertThat(maintenance.path("liveDataFiles").asLong()).as("after compaction").isLessThanOrEqualTo(PARTITIONS);
    assertThat(get("/metrics").body()).containsPattern("tidemark_table_maintenance_runs_total\\{topic=\"orders\"} [1-9]")
        .containsPattern("tidemark_table_maintenance_data_files_rewritten_total\\{topic=\"orders\"} [1-9]")
        .contains("tidemark_table_data_files{topic=\"orders\"}");

    List<String> out = IcebergStandardReaderTest.read(classpath, "default.orders",
        Map.of("type", "rest", "uri", "http://127.0.0.1:" + server.tableRestPort().orElseThrow()));
    assertThat(out).contains("tidemark-classes absent");
    List<String> rows = out.stream().filter(l -> l.startsWith("row\t")).map(l -> l.substring(4)).toList();
    assertThat(new TreeSet<>(rows)).as("one row per live key, its latest record").hasSize(rows.size())
        .isEqualTo(new TreeSet<>(latest.values()));
  }

  private JsonNode status() throws Exception {
    HttpResponse<String> r = get("/v1/tables/orders");
    if (r.statusCode() != 200) {
      return JSON.createObjectNode();
    }
    return JSON.readTree(r.body());
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.adminPort() + path)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
