package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.server.storage.EmbeddedStorage;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.DecoderFactory;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: third-party JavaScript clients work end to end against one Tidemark process: the
 * {@code @kafkajs/confluent-schema-registry} client registers an Avro schema in the built-in
 * registry, kafkajs produces records in the Confluent wire format and consumes them back decoded;
 * then the Java Kafka consumer reads the same bytes and plain Avro decodes them with the schema
 * fetched by id. The node packages are installed by .ci/run ({@code npm ci} in src/test/js); in CI
 * a missing install fails the test, elsewhere it is skipped.
 */
class KafkajsSchemaRegistryTest {

  private static final Path JS_DIR = Path.of("src", "test", "js");
  private static final int COUNT = 100;

  private final List<TidemarkServer> servers = new ArrayList<>();
  @TempDir Path dataDir;

  @AfterEach
  void stop() {
    servers.forEach(TidemarkServer::close);
  }

  @Test
  void kafkajsWithTheConfluentRegistryClientRoundTripsAvroRecords() throws Exception {
    String node = findNode();
    boolean installed = Files.isDirectory(JS_DIR.resolve("node_modules").resolve("kafkajs"));
    if (node == null || !installed) {
      if (System.getenv("CI") != null) {
        throw new AssertionError("node or the npm packages in " + JS_DIR + " are missing; .ci/run installs them");
      }
      Assumptions.abort("node or npm packages missing (run: npm ci --prefix server/src/test/js)");
    }
    TidemarkServer server = Main.start(TidemarkServerTest.withPorts("--set", "data.dir=" + dataDir,
        "--set", "admin.port=0", "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (32L << 20)),
        Map.of(), new EmbeddedStorage());
    servers.add(server);
    String bootstrap = "127.0.0.1:" + server.kafkaPort().orElseThrow();
    String registry = "http://127.0.0.1:" + server.registryPort().orElseThrow();
    String topic = "clicks";

    Process process = new ProcessBuilder(node, "avro-roundtrip.js", bootstrap, registry, topic, String.valueOf(COUNT))
        .directory(JS_DIR.toFile()).redirectErrorStream(false).start();
    byte[] stdout = process.getInputStream().readAllBytes();
    byte[] stderr = process.getErrorStream().readAllBytes();
    assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("node finished").isTrue();
    assertThat(process.exitValue()).as(new String(stderr, StandardCharsets.UTF_8)).isZero();
    String lastLine = new String(stdout, StandardCharsets.UTF_8).strip().lines().reduce((a, b) -> b).orElseThrow();
    JsonNode result = new ObjectMapper().readTree(lastLine);
    int schemaId = result.get("id").asInt();
    JsonNode decoded = result.get("decoded");
    assertThat(decoded).hasSize(COUNT);
    for (int i = 0; i < COUNT; i++) {
      assertThat(decoded.get(i).get("user").asText()).isEqualTo("u" + i);
      assertThat(decoded.get(i).get("page").asText()).isEqualTo("/p/" + i);
      assertThat(decoded.get(i).get("seq").asInt()).isEqualTo(i);
    }

    // The same bytes, read by the Java consumer and decoded with plain Avro from the wire format.
    HttpResponse<String> fetched = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create(registry + "/schemas/ids/" + schemaId)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(fetched.statusCode()).as(fetched.body()).isEqualTo(200);
    Schema schema = new Schema.Parser().parse(new ObjectMapper().readTree(fetched.body()).get("schema").asText());
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.GROUP_ID_CONFIG, "java-avro-check");
    List<GenericRecord> records = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
             new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      consumer.subscribe(List.of(topic));
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      GenericDatumReader<GenericRecord> reader = new GenericDatumReader<>(schema);
      while (records.size() < COUNT && System.nanoTime() < deadline) {
        for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(500))) {
          ByteBuffer value = ByteBuffer.wrap(record.value());
          assertThat(value.get()).as("magic byte").isEqualTo((byte) 0);
          assertThat(value.getInt()).as("schema id").isEqualTo(schemaId);
          records.add(reader.read(null, DecoderFactory.get().binaryDecoder(
              record.value(), value.position(), value.remaining(), null)));
        }
      }
    }
    assertThat(records).hasSize(COUNT);
    for (int i = 0; i < COUNT; i++) {
      assertThat(records.get(i).get("user").toString()).isEqualTo("u" + i);
      assertThat(records.get(i).get("seq")).isEqualTo(i);
    }
  }

  /** The {@code node} executable on the PATH, or null. */
  static String findNode() {
    for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
      File f = new File(dir, "node");
      if (f.canExecute()) {
        return f.getPath();
      }
    }
    return null;
  }
}
