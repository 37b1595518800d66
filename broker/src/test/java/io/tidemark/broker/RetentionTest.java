package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Goal: retention.ms and retention.bytes move the log start forward; newer data and unlimited topics stay. */
class RetentionTest {

  static TestBroker broker;
  static Admin admin;

  @BeforeAll
  static void start() {
    broker = new TestBroker(Map.of("kafka.retention.check.interval.ms", "100"));
    admin = broker.admin();
  }

  @AfterAll
  static void stop() {
    admin.close();
    broker.close();
  }

  private static long earliest(TopicPartition tp) throws Exception {
    return admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).all().get().get(tp).offset();
  }

  @Test
  void expiredRecordsAreDeletedByTime() throws Exception {
    admin.createTopics(List.of(new NewTopic("by-time", 1, (short) 1).configs(Map.of("retention.ms", "60000")),
        new NewTopic("forever", 1, (short) 1).configs(Map.of("retention.ms", "-1")))).all().get();
    long now = System.currentTimeMillis();
    try (KafkaProducer<String, String> p = broker.producer(Map.of("linger.ms", 0))) {
      for (int i = 0; i < 5; i++) {
        p.send(new ProducerRecord<>("by-time", 0, now - 3_600_000L, "k", "old" + i)).get();
        p.send(new ProducerRecord<>("forever", 0, now - 3_600_000L, "k", "old" + i)).get();
      }
      p.send(new ProducerRecord<>("by-time", 0, now, "k", "new")).get();
    }
    TopicPartition tp = new TopicPartition("by-time", 0);
    await().atMost(Duration.ofSeconds(30)).until(() -> earliest(tp) == 5);
    assertThat(earliest(new TopicPartition("forever", 0))).isZero();
  }

  @Test
  void oldestRecordsAreDeletedBySize() throws Exception {
    admin.createTopics(List.of(new NewTopic("by-size", 1, (short) 1).configs(Map.of("retention.bytes", "2000")))).all().get();
    try (KafkaProducer<String, String> p = broker.producer(Map.of("linger.ms", 0))) {
      for (int i = 0; i < 40; i++) {
        p.send(new ProducerRecord<>("by-size", 0, "k", "x".repeat(200))).get();
      }
    }
    TopicPartition tp = new TopicPartition("by-size", 0);
    await().atMost(Duration.ofSeconds(30)).until(() -> earliest(tp) > 20);
    assertThat(earliest(tp)).isLessThan(40);
  }
}
