package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.server.storage.EmbeddedStorage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: kill -9 of a single-node Tidemark process (child JVM, real storage engine) while an
 * idempotent Java producer sends with acks=all, many times over the same data directory; afterwards
 * every acknowledged record is readable exactly once at the offset it was acknowledged with, and
 * the partition's offsets are dense. 10 kills with -Pfull (tidemark.test.scale=full), 2 by default.
 * The seed is printed.
 */
class BrokerKillTest {

  private static final Pattern KAFKA_PORT = Pattern.compile("broker \\d+ of cluster \\S+ started on port (\\d+)");
  private static final String TOPIC = "kill-test";
  private final List<Process> children = new ArrayList<>();
  private final List<TidemarkServer> servers = new ArrayList<>();
  @TempDir Path dataDir;

  @AfterEach
  void cleanUp() {
    children.forEach(Process::destroyForcibly);
    servers.forEach(TidemarkServer::close);
  }

  @Test
  void everyAcknowledgedRecordSurvivesKillNineExactlyOnce() throws Exception {
    int cycles = "full".equals(System.getProperty("tidemark.test.scale")) ? 10 : 2;
    long seed = System.nanoTime();
    System.out.println("BrokerKillTest seed " + seed + ", " + cycles + " kills");
    SplittableRandom random = new SplittableRandom(seed);
    Map<String, Long> acked = new ConcurrentHashMap<>();
    for (int cycle = 0; cycle < cycles; cycle++) {
      Process child = startChild();
      String bootstrap = "127.0.0.1:" + ChildServer.portFrom(child, KAFKA_PORT);
      if (cycle == 0) {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
          admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get(60, TimeUnit.SECONDS);
        }
      }
      KafkaProducer<String, String> producer = ChildServer.idempotentProducer(bootstrap);
      long killAfterMs = 300 + random.nextInt(1500);
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(killAfterMs);
      int sent = 0;
      while (System.nanoTime() < deadline) {
        String value = "c" + cycle + "-" + sent++;
        producer.send(new ProducerRecord<>(TOPIC, 0, null, value), (metadata, error) -> {
          if (error == null) {
            acked.put(value, metadata.offset());
          }
        });
        if (sent % 200 == 0) {
          producer.flush(); // keep the in-flight window small so kills land between and within batches
        }
      }
      child.destroyForcibly(); // SIGKILL while the producer still sends
      assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
      producer.close(Duration.ZERO);
    }
    assertThat(acked).as("acknowledged records").isNotEmpty();

    TidemarkServer server = Main.start(TidemarkServerTest.withPorts("--set", "data.dir=" + dataDir,
        "--set", "admin.port=0", "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (64L << 20)),
        Map.of(), new EmbeddedStorage());
    servers.add(server);
    Map<String, Long> read = new HashMap<>();
    long expectedOffset = 0;
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.kafkaPort().orElseThrow());
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
      TopicPartition tp = new TopicPartition(TOPIC, 0);
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long end = consumer.endOffsets(List.of(tp)).get(tp);
      long stop = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (expectedOffset < end && System.nanoTime() < stop) {
        for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
          assertThat(record.offset()).as("offsets dense (seed " + seed + ")").isEqualTo(expectedOffset);
          expectedOffset++;
          Long previous = read.put(record.value(), record.offset());
          assertThat(previous).as("record " + record.value() + " read twice (seed " + seed + ")").isNull();
        }
      }
      assertThat(expectedOffset).as("read up to the end offset").isEqualTo(end);
    }
    System.out.println("BrokerKillTest: " + acked.size() + " acknowledged, " + read.size() + " records read after "
        + cycles + " kills");
    acked.forEach((value, offset) -> assertThat(read.get(value))
        .as("acknowledged record " + value + " at its acknowledged offset (seed " + seed + ")").isEqualTo(offset));
  }


  private Process startChild() throws Exception {
    Process child = ChildServer.start(dataDir);
    children.add(child);
    return child;
  }
}
