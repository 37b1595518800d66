package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.server.storage.EmbeddedStorage;
import io.tidemark.table.convert.KafkaColumns;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.data.Record;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: table.topic.* configs set through the Kafka Admin API turn a topic into an Iceberg table
 * kept in sync by the server, with validation at CreateTopics/IncrementalAlterConfigs, status on
 * /v1/tables, Prometheus meters, pause on a bad record under errors.tolerance=none and resume on a
 * config change, and stop when disabled.
 */
class TableTopicsServerTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();
  private final List<TidemarkServer> servers = new ArrayList<>();
  @TempDir Path dataDir;

  @AfterEach
  void tearDown() {
    servers.forEach(TidemarkServer::close);
  }

  private TidemarkServer start() {
    TidemarkServer server = Main.start(TidemarkServerTest.withPorts("--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (64L << 20)), Map.of(), new EmbeddedStorage());
    servers.add(server);
    return server;
  }

  private JsonNode getJson(TidemarkServer server, String path) throws Exception {
    HttpResponse<String> r = get(server, path);
    assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
    return JSON.readTree(r.body());
  }

  private HttpResponse<String> get(TidemarkServer server, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.adminPort() + path)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static Map<Long, String> valuesByOffset(Path dataDir, String table) {
    Map<Long, String> out = new TreeMap<>();
    for (Record r : TableFiles.rows(dataDir, table)) {
      Object v = r.getField(KafkaColumns.VALUE);
      String previous = out.put((Long) r.getField(KafkaColumns.OFFSET), v == null ? null : v.toString());
      assertThat(previous).as("offset written twice").isNull();
    }
    return out;
  }

  @Test
  void tableTopicConfigsAreValidatedSyncedReportedPausedResumedAndStopped() throws Exception {
    TidemarkServer server = start();
    String bootstrap = "127.0.0.1:" + server.kafkaPort().orElseThrow();
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
        KafkaProducer<byte[], byte[]> producer = producer(bootstrap)) {
      // bad table configs are refused with the reason, and nothing is created
      assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("clicks", 1, (short) 1).configs(Map.of(
          "table.topic.enable", "true", "table.topic.commit.interval.ms", "5")))).all().get(60, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(InvalidConfigurationException.class)
          .hasMessageContaining("table.topic.commit.interval.ms");
      assertThat(admin.listTopics().names().get(60, TimeUnit.SECONDS)).doesNotContain("clicks");

      admin.createTopics(List.of(new NewTopic("clicks", 1, (short) 1).configs(Map.of("table.topic.enable", "true",
          "automq.table.topic.commit.interval.ms", "1000", "table.topic.convert.value.type", "string",
          "table.topic.errors.tolerance", "none")))).all().get(60, TimeUnit.SECONDS);
      ConfigResource clicks = new ConfigResource(ConfigResource.Type.TOPIC, "clicks");
      assertThatThrownBy(() -> admin.incrementalAlterConfigs(Map.of(clicks, List.of(new AlterConfigOp(
          new ConfigEntry("table.topic.errors.tolerance", "sometimes"), AlterConfigOp.OpType.SET)))).all()
          .get(60, TimeUnit.SECONDS)).hasCauseInstanceOf(InvalidConfigurationException.class)
          .hasMessageContaining("table.topic.errors.tolerance");

      send(producer, "clicks", "a".getBytes(StandardCharsets.UTF_8));
      send(producer, "clicks", "b".getBytes(StandardCharsets.UTF_8));
      await().atMost(Duration.ofSeconds(90)).until(() -> valuesByOffset(dataDir, "clicks").size() == 2);
      assertThat(valuesByOffset(dataDir, "clicks")).containsExactlyInAnyOrderEntriesOf(Map.of(0L, "a", 1L, "b"));

      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        JsonNode status = getJson(server, "/v1/tables/clicks");
        assertThat(status.path("state").asText()).isEqualTo("RUNNING");
        assertThat(status.path("commits").asLong()).isPositive();
        assertThat(status.path("rowsWritten").asLong()).isEqualTo(2);
        assertThat(status.path("lastCommitMs").asLong()).isPositive();
        assertThat(status.path("partitions").get(0).path("lagRecords").asLong()).isZero();
        assertThat(status.path("partitions").get(0).path("backfill").path("done").asBoolean()).isTrue();
      });
      assertThat(getJson(server, "/v1/tables").path("tables").get(0).path("topic").asText()).isEqualTo("clicks");
      assertThat(get(server, "/v1/tables/nope").statusCode()).isEqualTo(404);
      String metrics = get(server, "/metrics").body();
      assertThat(metrics).contains("tidemark_table_rows_written_total{topic=\"clicks\"} 2.0")
          .contains("tidemark_table_commit_lag_records{partition=\"0\",topic=\"clicks\"} 0.0");

      // a record that is not UTF-8 pauses the table under errors.tolerance=none; later records wait
      send(producer, "clicks", new byte[] {(byte) 0xff, (byte) 0xfe});
      send(producer, "clicks", "c".getBytes(StandardCharsets.UTF_8));
      await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
        JsonNode status = getJson(server, "/v1/tables/clicks");
        assertThat(status.path("state").asText()).isEqualTo("PAUSED");
        assertThat(status.path("partitions").get(0).path("pauseReason").asText()).contains("offset 2").contains("UTF-8");
        assertThat(status.path("partitions").get(0).path("lagRecords").asLong()).isEqualTo(2);
      });
      assertThat(get(server, "/metrics").body()).contains("tidemark_table_paused{topic=\"clicks\"} 1.0");

      // a config change resumes it: the bad record is skipped, counted and dead-lettered, the next one lands
      admin.incrementalAlterConfigs(Map.of(clicks, List.of(new AlterConfigOp(
          new ConfigEntry("table.topic.errors.tolerance", "invalid_data"), AlterConfigOp.OpType.SET),
          new AlterConfigOp(new ConfigEntry("table.topic.errors.dlq.enable", "true"), AlterConfigOp.OpType.SET))))
          .all().get(60, TimeUnit.SECONDS);
      await().atMost(Duration.ofSeconds(90)).until(() -> valuesByOffset(dataDir, "clicks").containsKey(3L));
      assertThat(valuesByOffset(dataDir, "clicks")).containsExactlyInAnyOrderEntriesOf(Map.of(0L, "a", 1L, "b", 3L, "c"));
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        JsonNode status = getJson(server, "/v1/tables/clicks");
        assertThat(status.path("state").asText()).isEqualTo("RUNNING");
        assertThat(status.path("badRecords").asLong()).isEqualTo(1);
      });

      // dead letters go back through conversion on request; this one is still not UTF-8, so it stays
      await().atMost(Duration.ofSeconds(30)).until(() -> TableFiles.rows(dataDir, "clicks_dlq").size() == 1);
      HttpResponse<String> reprocessed = post(server, "/v1/tables/clicks/dead-letters/reprocess?maxRows=100");
      assertThat(reprocessed.statusCode()).as(reprocessed.body()).isEqualTo(200);
      JsonNode result = JSON.readTree(reprocessed.body());
      assertThat(result.path("reprocessed").asLong()).isZero();
      assertThat(result.path("stillFailing").asLong()).isEqualTo(1);
      assertThat(TableFiles.rows(dataDir, "clicks_dlq")).hasSize(1);
      assertThat(post(server, "/v1/tables/clicks/dead-letters/reprocess?maxRows=0").statusCode()).isEqualTo(400);
      assertThat(post(server, "/v1/tables/nope/dead-letters/reprocess").statusCode()).isEqualTo(404);

      // disabled: the node stops following the topic
      admin.incrementalAlterConfigs(Map.of(clicks, List.of(new AlterConfigOp(
          new ConfigEntry("table.topic.enable", "false"), AlterConfigOp.OpType.SET)))).all().get(60, TimeUnit.SECONDS);
      await().atMost(Duration.ofSeconds(30)).until(() -> get(server, "/v1/tables/clicks").statusCode() == 404);
      assertThat(get(server, "/metrics").body()).doesNotContain("tidemark_table_rows_written_total{topic=\"clicks\"}");
    }
  }

  @Test
  void aTransactionalTopicLandsOnlyCommittedRecordsAndNothingBeyondAnOpenTransaction() throws Exception {
    // Goal: a table topic over a topic written by Kafka transactional producers (transactions V2) lands the
    // committed records, never an aborted one, and nothing past the last stable offset while a transaction is open
    TidemarkServer server = start();
    String bootstrap = "127.0.0.1:" + server.kafkaPort().orElseThrow();
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
        KafkaProducer<byte[], byte[]> plain = producer(bootstrap);
        KafkaProducer<byte[], byte[]> txn = transactionalProducer(bootstrap, "orders-writer")) {
      admin.createTopics(List.of(new NewTopic("orders", 1, (short) 1).configs(Map.of("table.topic.enable", "true",
          "table.topic.commit.interval.ms", "1000", "table.topic.convert.value.type", "string")))).all()
          .get(60, TimeUnit.SECONDS);
      txn.initTransactions();
      txn.beginTransaction();
      long c1 = txn.send(record("orders", "c1")).get(60, TimeUnit.SECONDS).offset();
      long c2 = txn.send(record("orders", "c2")).get(60, TimeUnit.SECONDS).offset();
      txn.commitTransaction();
      txn.beginTransaction();
      txn.send(record("orders", "a1")).get(60, TimeUnit.SECONDS);
      txn.abortTransaction();
      txn.beginTransaction();
      long open = txn.send(record("orders", "o1")).get(60, TimeUnit.SECONDS).offset();
      // written after the open transaction's record: above the last stable offset until that transaction ends
      long after = plain.send(record("orders", "p1")).get(60, TimeUnit.SECONDS).offset();

      await().atMost(Duration.ofSeconds(90)).until(() -> valuesByOffset(dataDir, "orders").size() >= 2);
      assertThat(valuesByOffset(dataDir, "orders")).as("committed records only, nothing past the open transaction")
          .containsExactlyInAnyOrderEntriesOf(Map.of(c1, "c1", c2, "c2"));

      txn.commitTransaction();
      await().atMost(Duration.ofSeconds(90)).until(() -> valuesByOffset(dataDir, "orders").size() >= 4);
      assertThat(valuesByOffset(dataDir, "orders")).as("the aborted record never lands")
          .containsExactlyInAnyOrderEntriesOf(Map.of(c1, "c1", c2, "c2", open, "o1", after, "p1"));
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
          assertThat(getJson(server, "/v1/tables/orders").path("partitions").get(0).path("lagRecords").asLong()).isZero());
      assertThat(valuesByOffset(dataDir, "orders")).hasSize(4);
    }
  }

  private static ProducerRecord<byte[], byte[]> record(String topic, String value) {
    return new ProducerRecord<>(topic, 0, null, value.getBytes(StandardCharsets.UTF_8));
  }

  private static KafkaProducer<byte[], byte[]> transactionalProducer(String bootstrap, String transactionalId) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
  }

  private HttpResponse<String> post(TidemarkServer server, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.adminPort() + path))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static void send(KafkaProducer<byte[], byte[]> producer, String topic, byte[] value) throws Exception {
    producer.send(new ProducerRecord<>(topic, 0, null, value)).get(60, TimeUnit.SECONDS);
  }

  private static KafkaProducer<byte[], byte[]> producer(String bootstrap) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
  }
}
