package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.server.storage.EmbeddedStorage;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The whole process as users meet it: a real Kafka client and the schema registry REST API, across a restart. */
class KafkaAndRegistryTest {

  private final List<TidemarkServer> servers = new ArrayList<>();
  @TempDir Path dataDir;

  @AfterEach
  void stop() {
    servers.forEach(TidemarkServer::close);
  }

  private TidemarkServer start() {
    TidemarkServer server = Main.start(TidemarkServerTest.withPorts("--set", "data.dir=" + dataDir,
        "--set", "admin.port=0", "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (32L << 20)),
        Map.of(), new EmbeddedStorage());
    servers.add(server);
    return server;
  }

  @Test
  void producedRecordsAndRegisteredSchemasSurviveARestart() throws Exception {
    // Goal: one Main start serves Kafka and the registry on the same engine; both keep their data across a restart.
    TidemarkServer first = start();
    String bootstrap = "127.0.0.1:" + first.kafkaPort().orElseThrow();
    Properties producerProps = new Properties();
    producerProps.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<String, String> producer =
             new KafkaProducer<>(producerProps, new StringSerializer(), new StringSerializer())) {
      for (int i = 0; i < 50; i++) {
        producer.send(new ProducerRecord<>("orders", "k" + i, "v" + i)).get();
      }
    }
    String schema = "{\"schema\": \"{\\\"type\\\": \\\"string\\\"}\"}";
    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<String> registered = http.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + first.registryPort().orElseThrow() + "/subjects/orders-value/versions"))
        .header("Content-Type", "application/vnd.schemaregistry.v1+json")
        .POST(HttpRequest.BodyPublishers.ofString(schema)).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(registered.statusCode()).as(registered.body()).isEqualTo(200);
    first.close();

    TidemarkServer second = start();
    Properties consumerProps = new Properties();
    consumerProps.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + second.kafkaPort().orElseThrow());
    consumerProps.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    consumerProps.put(ConsumerConfig.GROUP_ID_CONFIG, "restart-check");
    List<String> values = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer =
             new KafkaConsumer<>(consumerProps, new StringDeserializer(), new StringDeserializer())) {
      consumer.subscribe(List.of("orders"));
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (values.size() < 50 && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
          values.add(r.value());
        }
      }
    }
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      expected.add("v" + i);
    }
    assertThat(values).containsExactlyElementsOf(expected);
    HttpResponse<String> subjects = http.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + second.registryPort().orElseThrow() + "/subjects")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(subjects.body()).contains("orders-value");

    // The registry's log is the internal topic _schemas: a Kafka consumer sees the registration record.
    List<String> schemaRecords = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer =
             new KafkaConsumer<>(consumerProps, new StringDeserializer(), new StringDeserializer())) {
      consumer.assign(List.of(new org.apache.kafka.common.TopicPartition("_schemas", 0)));
      consumer.seekToBeginning(consumer.assignment());
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (schemaRecords.isEmpty() && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
          schemaRecords.add(r.key() + " -> " + r.value());
        }
      }
    }
    assertThat(schemaRecords).anySatisfy(r -> assertThat(r).contains("\"keytype\":\"SCHEMA\"").contains("orders-value"));
  }
}
