package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Goal: real kafka-clients 4.4 producers (every codec, every acks) and consumers round-trip records through the broker. */
class ProduceConsumeTest {

  static TestBroker broker;

  @BeforeAll
  static void start() {
    broker = new TestBroker();
  }

  @AfterAll
  static void stop() {
    broker.close();
  }

  @ParameterizedTest(name = "compression={0} acks={1} idempotent={2}")
  @CsvSource({
      "none,all,true", "gzip,all,true", "snappy,all,true", "lz4,all,true", "zstd,all,true",
      "none,1,false", "zstd,1,false", "none,0,false", "lz4,0,false"})
  void producedRecordsAreConsumedInOrder(String compression, String acks, boolean idempotent) throws Exception {
    String topic = "t-" + compression + "-" + acks.replace("-", "m") + "-" + idempotent;
    int n = 500;
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    try (KafkaProducer<String, String> producer = broker.producer(Map.of(
        ProducerConfig.COMPRESSION_TYPE_CONFIG, compression,
        ProducerConfig.ACKS_CONFIG, acks,
        ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, idempotent))) {
      for (int i = 0; i < n; i++) {
        sent.add(producer.send(new ProducerRecord<>(topic, 0, "k" + i, "value-" + i + "-" + "x".repeat(i % 50))));
      }
      producer.flush();
      for (int i = 0; i < n; i++) {
        RecordMetadata md = sent.get(i).get();
        if (!acks.equals("0")) {
          assertThat(md.offset()).isEqualTo(i);
        }
      }
    }
    List<ConsumerRecord<String, String>> got = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = broker.consumer(Map.of())) {
      TopicPartition tp = new TopicPartition(topic, 0);
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (got.size() < n && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(got::add);
      }
    }
    assertThat(got).hasSize(n);
    for (int i = 0; i < n; i++) {
      assertThat(got.get(i).offset()).isEqualTo(i);
      assertThat(got.get(i).key()).isEqualTo("k" + i);
      assertThat(got.get(i).value()).isEqualTo("value-" + i + "-" + "x".repeat(i % 50));
    }
  }
}
