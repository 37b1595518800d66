package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.broker.partition.PartitionLog;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.internals.Exit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Client quotas with Kafka's tools and clients: {@code kafka-configs --entity-type clients/users}
 * sets, describes and removes byte-rate quotas (stored through AlterClientQuotas), and a real
 * producer offering far more than its {@code producer_byte_rate} is held to it: the bytes the
 * partition stores per second (measured on the server, so a starved client cannot make it look
 * throttled) stay within 10% of the quota over the measured window (10 s, 30 s with
 * {@code -Dtidemark.test.scale=full}), the producer sees throttle times, and a client without a
 * quota on the same broker is not held back.
 */
class QuotaTest {
  private static final int QUOTA = 256 * 1024;
  private static TestBroker broker;

  @BeforeAll
  static void start() {
    broker = new TestBroker(Map.of("kafka.quota.window.num", "3", "kafka.quota.window.size.seconds", "1"));
    Exit.setExitProcedure((code, message) -> {
      throw new IllegalStateException("kafka-configs exited " + code + ": " + message);
    });
  }

  @AfterAll
  static void stop() {
    Exit.resetExitProcedure();
    broker.close();
  }

  private static String configs(String... args) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream old = System.out;
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    try {
      String[] all = new String[args.length + 2];
      all[0] = "--bootstrap-server";
      all[1] = broker.bootstrap();
      System.arraycopy(args, 0, all, 2, args.length);
      org.apache.kafka.tools.ConfigCommand.main(all);
    } finally {
      System.setOut(old);
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  @Test
  void kafkaConfigsSetsDescribesAndRemovesClientAndUserQuotas() throws Exception {
    // Goal: the stock kafka-configs tool manages quotas of clients, users and their defaults.
    configs("--alter", "--entity-type", "clients", "--entity-name", "cli-a", "--add-config",
        "producer_byte_rate=1024,consumer_byte_rate=2048");
    configs("--alter", "--entity-type", "users", "--entity-name", "alice", "--add-config", "producer_byte_rate=4096");
    configs("--alter", "--entity-type", "users", "--entity-default", "--add-config", "consumer_byte_rate=8192");
    assertThat(configs("--describe", "--entity-type", "clients", "--entity-name", "cli-a"))
        .contains("producer_byte_rate=1024.0", "consumer_byte_rate=2048.0");
    assertThat(configs("--describe", "--entity-type", "users", "--entity-name", "alice")).contains("producer_byte_rate=4096.0");
    assertThat(configs("--describe", "--entity-type", "users", "--entity-default")).contains("consumer_byte_rate=8192.0");
    configs("--alter", "--entity-type", "clients", "--entity-name", "cli-a", "--delete-config", "producer_byte_rate");
    assertThat(configs("--describe", "--entity-type", "clients", "--entity-name", "cli-a"))
        .contains("consumer_byte_rate=2048.0").doesNotContain("producer_byte_rate");
  }

  @Test
  void aProducerAboveItsByteRateIsHeldToItOnTheServer() throws Exception {
    // Goal: server-side stored bytes per second of a throttled producer stay within 10% of its quota.
    configs("--alter", "--entity-type", "clients", "--entity-name", "throttled", "--add-config",
        "producer_byte_rate=" + QUOTA);
    try (Admin admin = broker.admin()) {
      admin.createTopics(List.of(new NewTopic("quota-t", 1, (short) 1), new NewTopic("free-t", 1, (short) 1))).all()
          .get(30, TimeUnit.SECONDS);
    }
    boolean full = "full".equals(System.getProperty("tidemark.test.scale"));
    long measureMs = full ? 30_000 : 10_000;
    byte[] value = new byte[1000];
    AtomicBoolean running = new AtomicBoolean(true);
    try (KafkaProducer<String, String> producer = broker.producer(Map.of(ProducerConfig.CLIENT_ID_CONFIG, "throttled",
        ProducerConfig.MAX_BLOCK_MS_CONFIG, 120_000, ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 300_000,
        ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 120_000, ProducerConfig.BUFFER_MEMORY_CONFIG, 4L << 20))) {
      Thread sender = new Thread(() -> {
        String v = new String(value, StandardCharsets.ISO_8859_1);
        while (running.get()) {
          producer.send(new ProducerRecord<>("quota-t", v));
        }
      }, "quota-sender");
      sender.start();
      PartitionLog log = broker.broker.partitionLog(new TopicPartition("quota-t", 0)).orElseThrow();
      Thread.sleep(4_000); // past the first window, whose burst the rate measurement allows (window.num=3)
      long bytes0 = log.sizeBytes();
      long t0 = System.nanoTime();
      Thread.sleep(measureMs);
      long bytes1 = log.sizeBytes();
      long t1 = System.nanoTime();
      running.set(false);
      sender.join(30_000);
      double rate = (bytes1 - bytes0) * 1e9 / (t1 - t0);
      System.out.printf("throttled producer: %.0f bytes/s stored over %d ms against a quota of %d bytes/s (%.1f%%)%n",
          rate, (t1 - t0) / 1_000_000, QUOTA, 100 * rate / QUOTA);
      assertThat(rate).isBetween(0.9 * QUOTA, 1.1 * QUOTA);
      double maxThrottle = producer.metrics().entrySet().stream().filter(e -> e.getKey().name().equals("produce-throttle-time-max"))
          .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).max().orElse(0);
      assertThat(maxThrottle).isPositive();
    }
    // a client without a quota on the same broker is not held back: 4 MB in well under the throttled time
    try (KafkaProducer<String, String> free = broker.producer(Map.of(ProducerConfig.CLIENT_ID_CONFIG, "free"))) {
      String v = new String(value, StandardCharsets.ISO_8859_1);
      long start = System.nanoTime();
      for (int i = 0; i < 4000; i++) {
        free.send(new ProducerRecord<>("free-t", v));
      }
      free.flush();
      double seconds = (System.nanoTime() - start) / 1e9;
      assertThat(seconds).isLessThan(4_000_000.0 / QUOTA / 2);
    }
  }
}
