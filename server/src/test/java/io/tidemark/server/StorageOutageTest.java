package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.server.storage.EmbeddedStorage;
import io.tidemark.stream.objectstore.FaultInjectingObjectStorage;
import io.tidemark.stream.objectstore.FaultInjectingObjectStorage.Fault;
import io.tidemark.stream.objectstore.FaultInjectingObjectStorage.Rule;
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
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
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
 * Goal: an object-storage outage longer than the upload retry budget, with a real idempotent Kafka
 * producer sending throughout, never fails the node: acknowledgements stop once the log cache is
 * full, {@code /ready} answers 503 while produce cannot be acknowledged and {@code /health} stays
 * 200; when the store answers again acknowledgements resume on their own, {@code /ready} is 200
 * again, and every acknowledged record is read back by a real consumer exactly once.
 */
class StorageOutageTest {

  private static final String TOPIC = "outage";
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();
  private final ScheduledExecutorService faultTimer = Executors.newSingleThreadScheduledExecutor();
  private TidemarkServer server;
  @TempDir Path dataDir;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
    faultTimer.shutdownNow();
  }

  @Test
  void acknowledgementsResumeOnTheirOwnAfterAnOutageLongerThanTheRetryBudget() throws Exception {
    long seed = System.nanoTime();
    System.out.println("StorageOutageTest seed " + seed);
    AtomicReference<FaultInjectingObjectStorage> store = new AtomicReference<>();
    List<String> args = new ArrayList<>(List.of("--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (16L << 20),
        "--set", "process.roles=controller,broker", "--set", "table.enable=false", "--set", "table.rest.enable=false",
        "--set", "stream.cache.size.bytes=" + (1L << 20), "--set", "stream.upload.threshold.bytes=" + (256L << 10),
        "--set", "stream.upload.retry.max=2", "--set", "stream.upload.retry.backoff.max.ms=200",
        "--set", "stream.append.stall.ms=1000", "--set", "stream.append.waiting.max.bytes=" + (512L << 10)));
    args.addAll(TidemarkServerTest.ephemeralPorts());
    server = Main.start(args, Map.of(), new EmbeddedStorage(objects -> {
      store.set(new FaultInjectingObjectStorage(objects, new Random(seed), faultTimer));
      return store.get();
    }));
    String bootstrap = "127.0.0.1:" + server.kafkaPort().orElseThrow();
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short) 1))).all().get(60, TimeUnit.SECONDS);
    }
    Map<String, Long> acked = new ConcurrentHashMap<>();
    AtomicInteger failed = new AtomicInteger();
    String padding = "x".repeat(1000);
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerConfig(bootstrap))) {
      int sent = send(producer, 0, 200, padding, acked, failed);
      producer.flush();
      assertThat(acked).hasSize(200);
      assertThat(status("/ready")).isEqualTo(200);

      store.get().setRules(Rule.of(null, Fault.FAIL, 1.0));
      // Far more than the cache holds: acknowledgements must stop, the node must say so and must not fail.
      sent = send(producer, sent, 3000, padding, acked, failed);
      await().atMost(Duration.ofSeconds(60)).until(() -> status("/ready") == 503);
      JsonNode ready = JSON.readTree(body("/ready"));
      assertThat(ready.get("checks").get("storage.appends.accepted").asBoolean()).isFalse();
      long budget = 2 * 2; // stream.upload.retry.max attempts of each of stream.upload.retry.max object writes
      await().atMost(Duration.ofSeconds(60)).until(() -> store.get().injected(Fault.FAIL) > 10 * budget);
      assertThat(status("/health")).as("a transient outage is not a failed component").isEqualTo(200);
      assertThat(status("/ready")).isEqualTo(503);
      int ackedDuring = acked.size();
      assertThat(ackedDuring).as("acknowledgements stopped").isLessThan(sent);

      store.get().clearRules();
      producer.flush();
      await().atMost(Duration.ofSeconds(60)).until(() -> status("/ready") == 200);
      sent = send(producer, sent, 200, padding, acked, failed);
      producer.flush();
      assertThat(failed.get()).as("no send failed: the idempotent producer retried what was refused").isZero();
      assertThat(acked).hasSize(sent);
    }
    assertThat(status("/health")).isEqualTo(200);

    Map<String, Long> read = readAll(bootstrap);
    assertThat(read).as("every acknowledged record read back exactly once").hasSize(acked.size());
    acked.forEach((value, offset) -> assertThat(read.get(value)).as(value).isEqualTo(offset));
  }

  private static int send(KafkaProducer<String, String> producer, int from, int count, String padding,
      Map<String, Long> acked, AtomicInteger failed) {
    for (int i = from; i < from + count; i++) {
      String value = i + "-" + padding;
      String key = Integer.toString(i);
      producer.send(new ProducerRecord<>(TOPIC, i % 2, key, value), (metadata, error) -> {
        if (error == null) {
          acked.put(key, metadata.offset() * 2 + metadata.partition());
        } else {
          failed.incrementAndGet();
        }
      });
    }
    return from + count;
  }

  /** An idempotent acks=all producer that waits long for deliveries and 3 s per request (the broker's bound). */
  static Properties producerConfig(String bootstrap) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 3000); // the broker answers REQUEST_TIMED_OUT after it
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 300_000);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, 16 * 1024);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    return p;
  }

  /** Every record of both partitions: key to (offset * 2 + partition). */
  private static Map<String, Long> readAll(String bootstrap) {
    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
    c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
    Map<String, Long> read = new ConcurrentHashMap<>();
    List<TopicPartition> partitions = List.of(new TopicPartition(TOPIC, 0), new TopicPartition(TOPIC, 1));
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp)) && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
          Long previous = read.put(r.key(), r.offset() * 2 + r.partition());
          assertThat(previous).as("record %s read twice", r.key()).isNull();
          assertThat(r.value()).startsWith(r.key() + "-");
        }
      }
    }
    return read;
  }

  private int status(String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.adminPort() + path)).build(),
        HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  private String body(String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.adminPort() + path)).build(),
        HttpResponse.BodyHandlers.ofString()).body();
  }
}
