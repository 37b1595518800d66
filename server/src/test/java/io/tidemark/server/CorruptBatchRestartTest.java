package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.server.storage.EmbeddedStorage;
import io.tidemark.server.storage.StorageFactory;
import io.tidemark.server.storage.StorageNode;
import io.tidemark.stream.api.Stream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad bytes in a partition's data stream (written through the storage engine, around the broker)
 * never stop a node: it restarts, fetching the damaged range gets CORRUPT_MESSAGE, everything else
 * serves, the group coordinator, the registry and the table control reader load past the damage.
 */
class CorruptBatchRestartTest {

  private static final TopicPartition ORDERS = new TopicPartition("orders", 0);
  private static final TopicPartition OTHER = new TopicPartition("other", 0);
  private final HttpClient http = HttpClient.newHttpClient();
  @TempDir Path dataDir;

  @Test
  void aNodeWithDamagedPartitionsRestartsAndServesAroundTheDamage() throws Exception {
    // Goal: damaged batches in a topic, __consumer_offsets, _schemas and __table_control leave the node startable;
    // only the damaged range of orders answers CORRUPT_MESSAGE, the rest (and every loader) serves.
    String voters = FreePorts.singleVoter();
    AtomicReference<StorageNode> storage = new AtomicReference<>();
    StorageFactory capturing = (server, settings, meters) -> {
      StorageNode node = new EmbeddedStorage().open(server, settings, meters);
      storage.set(node);
      return node;
    };
    int offsetPartitions;
    try (TidemarkServer first = start(voters, capturing)) {
      String bootstrap = bootstrap(first);
      try (KafkaProducer<String, String> producer = producer(bootstrap)) {
        for (int i = 0; i < 10; i++) {
          producer.send(new ProducerRecord<>(ORDERS.topic(), 0, "k" + i, "v" + i)).get(30, TimeUnit.SECONDS);
          producer.send(new ProducerRecord<>(OTHER.topic(), 0, "k" + i, "o" + i)).get(30, TimeUnit.SECONDS);
        }
      }
      try (Admin admin = admin(bootstrap)) {
        admin.alterConsumerGroupOffsets("g", Map.of(ORDERS, new OffsetAndMetadata(7))).all().get(30, TimeUnit.SECONDS);
      }
      assertThat(registerSchema(first).statusCode()).isEqualTo(200);

      Random random = new Random(42);
      inject(first, storage.get(), ORDERS, 3, new byte[] {0x42});
      offsetPartitions = 0;
      for (int p = 0; p < 64; p++) {
        TopicPartition tp = new TopicPartition("__consumer_offsets", p);
        if (first.broker().orElseThrow().partitionLog(tp).isPresent()) {
          inject(first, storage.get(), tp, Integer.MAX_VALUE, new byte[] {1}); // the count the old admin API accepted
          offsetPartitions++;
        }
      }
      inject(first, storage.get(), new TopicPartition("_schemas", 0), 1, randomBytes(random, 100));
      inject(first, storage.get(), new TopicPartition("__table_control", 0), 1, randomBytes(random, 100));
    }

    try (TidemarkServer second = start(voters, new EmbeddedStorage())) {
      String bootstrap = bootstrap(second);
      try (KafkaProducer<String, String> producer = producer(bootstrap)) {
        for (int i = 10; i < 15; i++) {
          assertThat(producer.send(new ProducerRecord<>(ORDERS.topic(), 0, "k" + i, "v" + i)).get(30, TimeUnit.SECONDS)
              .offset()).isEqualTo(i + 3); // after the damaged range 10..12
        }
      }
      try (KafkaConsumer<String, String> consumer = consumer(bootstrap)) {
        consumer.assign(List.of(ORDERS));
        consumer.seek(ORDERS, 0);
        List<String> before = new ArrayList<>();
        assertThatThrownBy(() -> {
          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
          while (System.nanoTime() < deadline) {
            consumer.poll(Duration.ofMillis(500)).forEach(r -> before.add(r.value()));
          }
        }).isInstanceOf(KafkaException.class).hasMessageContaining("corrupt message when fetching offset 10");
        assertThat(before).containsExactly("v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9");
        consumer.seek(ORDERS, 13);
        assertThat(poll(consumer, 5)).extracting(ConsumerRecord::value).containsExactly("v10", "v11", "v12", "v13", "v14");
        consumer.assign(List.of(OTHER));
        consumer.seek(OTHER, 0);
        assertThat(poll(consumer, 10)).hasSize(10);
      }
      try (Admin admin = admin(bootstrap)) {
        assertThat(admin.listConsumerGroupOffsets("g").partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS).get(ORDERS)
            .offset()).as("committed offset loaded past the damaged __consumer_offsets batches").isEqualTo(7);
      }
      HttpResponse<String> schema = http.send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + second.registryPort().orElseThrow() + "/subjects/orders-value/versions/1")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(schema.statusCode()).as(schema.body()).isEqualTo(200);
      assertThat(registerSchema(second).statusCode()).as("the registry still writes").isEqualTo(200);
      assertThat(second.broker().orElseThrow().partitionLog(ORDERS).orElseThrow().damagedRanges())
          .containsExactly(new long[] {10, 13});
      int expectedRanges = 1 + offsetPartitions + 2;
      assertThat(second.meters().get("tidemark.partition.damaged.ranges").gauge().value()).isEqualTo(expectedRanges);
      HttpResponse<String> metrics = http.send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + second.adminPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(metrics.body()).contains("tidemark_partition_damaged_ranges " + (double) expectedRanges);
    }
  }

  /** Appends {@code bytes} as a batch of {@code records} records to the partition's data stream, through the broker's own handle. */
  private static void inject(TidemarkServer server, StorageNode storage, TopicPartition tp, int records, byte[] bytes)
      throws Exception {
    PartitionLog log = server.broker().orElseThrow().partitionLog(tp).orElseThrow();
    Stream data = storage.streamStore().stream(log.location().dataStreamId()).orElseThrow();
    data.append(records, ByteBuffer.wrap(bytes)).get(30, TimeUnit.SECONDS);
  }

  private TidemarkServer start(String voters, StorageFactory storage) {
    return Main.start(List.of("--set", "data.dir=" + dataDir, "--set", "admin.port=0", "--set", "kafka.listener.host=127.0.0.1",
        "--set", "kafka.listener.port=0", "--set", "registry.host=127.0.0.1", "--set", "registry.port=0",
        "--set", "table.rest.host=127.0.0.1", "--set", "table.rest.port=0", "--set", "controller.voters=" + voters,
        "--set", "wal.capacity.bytes=" + (32L << 20)), Map.of(), storage);
  }

  private HttpResponse<String> registerSchema(TidemarkServer server) throws Exception {
    return http.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + server.registryPort().orElseThrow() + "/subjects/orders-value/versions"))
        .header("Content-Type", "application/vnd.schemaregistry.v1+json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"schema\": \"{\\\"type\\\": \\\"string\\\"}\"}")).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static byte[] randomBytes(Random random, int n) {
    byte[] b = new byte[n];
    random.nextBytes(b);
    return b;
  }

  private static String bootstrap(TidemarkServer server) {
    return "127.0.0.1:" + server.kafkaPort().orElseThrow();
  }

  private static Admin admin(String bootstrap) {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
  }

  private static KafkaProducer<String, String> producer(String bootstrap) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
  }

  private static KafkaConsumer<String, String> consumer(String bootstrap) {
    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    return new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer());
  }

  private static List<ConsumerRecord<String, String>> poll(KafkaConsumer<String, String> consumer, int count) {
    List<ConsumerRecord<String, String>> out = new ArrayList<>();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (out.size() < count && System.nanoTime() < deadline) {
      consumer.poll(Duration.ofMillis(500)).forEach(out::add);
    }
    return out;
  }
}
