package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: after kill -9 of a node with 100 partitions (10 topics × 10) holding acknowledged records
 * not yet uploaded, the restarted node acknowledges a produce (acks=all) within a generous bound,
 * and every record acknowledged before the kill is still there. The bound (60 s from the spawn of
 * the new JVM) is loose enough for a loaded two-core machine; it catches hangs and large
 * regressions (before the fix, recovery deadlocked in the controller client with more than 100
 * streams and the node never served again). The precise times are measured by
 * {@code bench/run-restart.sh}.
 */
class RestartTest {

  private static final Pattern RUNNING = Pattern.compile("broker \\d+ of cluster \\S+ started on port (\\d+)");
  private static final int TOPICS = 10;
  private static final int PARTITIONS = 10;
  private static final Duration BOUND = Duration.ofSeconds(60);
  private final List<Process> children = new ArrayList<>();
  @TempDir Path dataDir;

  @AfterEach
  void cleanUp() {
    children.forEach(Process::destroyForcibly);
  }

  @Test
  void aNodeWith100PartitionsServesAProduceSoonAfterKillNineAndKeepsWhatItAcknowledged() throws Exception {
    int kafkaPort = FreePorts.pick();
    String bootstrap = "127.0.0.1:" + kafkaPort;
    Process first = start(kafkaPort);
    ChildServer.portFrom(first, RUNNING);
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      List<NewTopic> topics = new ArrayList<>();
      for (int t = 0; t < TOPICS; t++) {
        topics.add(new NewTopic("t" + t, PARTITIONS, (short) 1));
      }
      admin.createTopics(topics).all().get(2, TimeUnit.MINUTES);
    }
    Map<TopicPartition, Long> acked = new HashMap<>();
    try (KafkaProducer<String, String> producer = ChildServer.idempotentProducer(bootstrap)) {
      Map<TopicPartition, Future<RecordMetadata>> sent = new HashMap<>();
      for (int t = 0; t < TOPICS; t++) {
        for (int p = 0; p < PARTITIONS; p++) {
          TopicPartition tp = new TopicPartition("t" + t, p);
          sent.put(tp, producer.send(new ProducerRecord<>(tp.topic(), p, null, "before the kill")));
        }
      }
      for (Map.Entry<TopicPartition, Future<RecordMetadata>> e : sent.entrySet()) {
        acked.put(e.getKey(), e.getValue().get(2, TimeUnit.MINUTES).offset() + 1);
      }
    }
    first.destroyForcibly(); // SIGKILL: the WAL holds the records, nothing was uploaded on the way out
    assertThat(first.waitFor(60, TimeUnit.SECONDS)).isTrue();

    long spawned = System.nanoTime();
    Process second = start(kafkaPort);
    ChildServer.drain(second);
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(restartProducer(bootstrap), new StringSerializer(),
        new StringSerializer())) {
      RecordMetadata after = producer.send(new ProducerRecord<>("t3", 7, null, "after the restart"))
          .get(BOUND.toSeconds() + 30, TimeUnit.SECONDS);
      Duration took = Duration.ofNanos(System.nanoTime() - spawned);
      System.out.println("RestartTest: first acknowledged produce " + took.toMillis() + " ms after the spawn");
      assertThat(took).as("first acknowledged produce after kill -9 and restart").isLessThan(BOUND);
      assertThat(after.offset()).as("the new record follows the one acknowledged before the kill")
          .isEqualTo(acked.get(new TopicPartition("t3", 7)));
    }
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      acked.keySet().forEach(tp -> latest.put(tp, OffsetSpec.latest()));
      var ends = admin.listOffsets(latest).all().get(2, TimeUnit.MINUTES);
      acked.forEach((tp, end) -> assertThat(ends.get(tp).offset()).as("end of " + tp + " covers what was acknowledged")
          .isGreaterThanOrEqualTo(end));
    }
  }

  private Process start(int kafkaPort) throws Exception {
    Process child = ChildServer.start(dataDir, kafkaPort);
    children.add(child);
    return child;
  }

  /** A producer made before the node listens: it retries connecting and sending every few tens of ms. */
  private static Properties restartProducer(String bootstrap) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.RECONNECT_BACKOFF_MS_CONFIG, 20);
    p.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 100);
    p.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 20);
    p.put(ProducerConfig.RETRY_BACKOFF_MAX_MS_CONFIG, 100);
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) BOUND.toMillis() + 30_000);
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, BOUND.toMillis() + 30_000);
    return p;
  }
}
