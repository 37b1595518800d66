package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.server.storage.EmbeddedStorage;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: the schema registry's topic {@code _schemas} stops growing when the registry writes the
 * same keys again and again. A real node (local object storage, the automatic cleaner with Kafka's
 * default dirty ratio) takes rounds of registry writes that supersede earlier records (a subject's
 * compatibility set again and again through the REST API); after each pass the cleaner brings the
 * topic back to a few records, read from its start with a Kafka consumer, and the registry still
 * answers the latest value. The registry's topic and the table topics' control topic are created
 * compacted.
 */
class SchemasTopicCleaningTest {

  private static final int ROUNDS = 10;
  /** Records the cleaned topic may keep: the schema, the subject's and the global config, and a partly cleaned tail. */
  private static final long CLEANED_BOUND = 6;
  private static final String[] LEVELS = {"BACKWARD", "FORWARD", "FULL", "NONE"};
  private static final String JSON = "application/vnd.schemaregistry.v1+json";

  @TempDir
  Path dataDir;

  @Test
  void registryWritesThatSupersedeEarlierOnesLeaveABoundedTopic() throws Exception {
    // uploads and cleaner passes every few hundred milliseconds (30 s by default), so that passes come within the test
    TidemarkServer server = Main.start(TidemarkServerTest.withPorts("--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (32L << 20), "--set", "stream.upload.interval.ms=300",
        "--set", "kafka.log.cleaner.interval.ms=200"), Map.of(), new EmbeddedStorage());
    try {
      String bootstrap = "127.0.0.1:" + server.kafkaPort().orElseThrow();
      URI registry = URI.create("http://127.0.0.1:" + server.registryPort().orElseThrow());
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();
      assertThat(send(http, registry.resolve("/subjects/profiles-value/versions"), "POST",
          "{\"schema\": \"{\\\"type\\\": \\\"string\\\"}\"}").statusCode()).isEqualTo(200);
      String last = null;
      for (int pass = 0; pass < 2; pass++) {
        for (int round = 0; round < ROUNDS; round++) {
          last = LEVELS[(pass * ROUNDS + round) % LEVELS.length];
          String body = "{\"compatibility\": \"" + last + "\"}";
          HttpResponse<String> subject = send(http, registry.resolve("/config/profiles-value"), "PUT", body);
          assertThat(subject.statusCode()).as(subject.body()).isEqualTo(200);
          HttpResponse<String> global = send(http, registry.resolve("/config"), "PUT", body);
          assertThat(global.statusCode()).as(global.body()).isEqualTo(200);
        }
        long written = endOffset(bootstrap);
        assertThat(written).as("offsets written to _schemas").isGreaterThanOrEqualTo(1 + 2L * (pass + 1) * ROUNDS);
        int done = pass;
        await("_schemas cleaned after pass " + done).atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(500))
            .until(() -> records(bootstrap), n -> n <= CLEANED_BOUND);
        System.out.println("SchemasTopicCleaningTest: pass " + pass + ": " + written + " offsets written, " + records(bootstrap)
            + " records left");
      }
      HttpResponse<String> level = send(http, registry.resolve("/config/profiles-value"), "GET", null);
      assertThat(level.body()).contains(last);
      assertThat(send(http, registry.resolve("/subjects/profiles-value/versions/1"), "GET", null).statusCode()).isEqualTo(200);
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        await("the control topic exists").atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofMillis(200))
            .until(() -> admin.listTopics(new org.apache.kafka.clients.admin.ListTopicsOptions().listInternal(true)).names()
                .get(30, TimeUnit.SECONDS).contains(io.tidemark.table.control.ControlLog.TOPIC));
        for (String topic : List.of("_schemas", io.tidemark.table.control.ControlLog.TOPIC)) {
          ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
          assertThat(admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource).get("cleanup.policy").value())
              .as("cleanup.policy of %s", topic).isEqualTo("compact");
        }
      }
    } finally {
      server.close();
    }
  }

  private static HttpResponse<String> send(HttpClient http, URI uri, String method, String body) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(60)).header("Content-Type", JSON);
    request.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static KafkaConsumer<byte[], byte[]> reader(String bootstrap) {
    return new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
        ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 60_000), new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  private static long endOffset(String bootstrap) {
    TopicPartition tp = new TopicPartition("_schemas", 0);
    try (KafkaConsumer<byte[], byte[]> consumer = reader(bootstrap)) {
      return consumer.endOffsets(List.of(tp)).get(tp);
    }
  }

  /** Records readable in {@code _schemas} from its start up to its end now. */
  private static long records(String bootstrap) {
    TopicPartition tp = new TopicPartition("_schemas", 0);
    try (KafkaConsumer<byte[], byte[]> consumer = reader(bootstrap)) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long end = consumer.endOffsets(List.of(tp)).get(tp);
      long count = 0;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (consumer.position(tp) < end) {
        assertThat(System.nanoTime()).as("_schemas read to its end %d within 60 s", end).isLessThan(deadline);
        count += consumer.poll(Duration.ofMillis(200)).count();
      }
      return count;
    }
  }
}
