package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.broker.partition.MemoryStreamStore;
import io.tidemark.stream.config.Settings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: topics (ids, configs), data and committed offsets survive a broker restart on the same
 * stream store and data directory, and the restart bumps leader epochs.
 */
class BrokerRestartTest {

  @TempDir
  Path dir;

  private KafkaBroker start(MemoryStreamStore store) {
    Settings s = new Settings(Map.of("kafka.listener.port", "0", "kafka.listener.host", "127.0.0.1",
        "kafka.advertised.host", "127.0.0.1", "kafka.data.dir", dir.toString(), "kafka.group.initial.rebalance.delay.ms", "0"));
    KafkaBroker b = new KafkaBroker(new BrokerConfig(s), store, Time.SYSTEM);
    b.start();
    return b;
  }

  private static Admin admin(KafkaBroker b) {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, b.bootstrapServers()));
  }

  @Test
  void stateSurvivesRestart() throws Exception {
    MemoryStreamStore store = new MemoryStreamStore(1L << 30);
    TopicPartition tp = new TopicPartition("durable", 0);
    Uuid id;
    String clusterId;
    try (KafkaBroker b = start(store); Admin admin = admin(b)) {
      clusterId = b.clusterId();
      admin.createTopics(List.of(new NewTopic("durable", 2, (short) 1).configs(Map.of("retention.ms", "12345")))).all().get();
      id = admin.describeTopics(List.of("durable")).allTopicNames().get().get("durable").topicId();
      try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, b.bootstrapServers(),
          ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true), new StringSerializer(), new StringSerializer())) {
        for (int i = 0; i < 100; i++) {
          p.send(new ProducerRecord<>("durable", 0, null, "r" + i));
        }
        p.flush();
      }
      admin.alterConsumerGroupOffsets("keeper", Map.of(tp, new OffsetAndMetadata(42, "meta"))).all().get();
    }
    try (KafkaBroker b = start(store); Admin admin = admin(b)) {
      assertThat(b.clusterId()).isEqualTo(clusterId);
      var d = admin.describeTopics(List.of("durable")).allTopicNames().get().get("durable");
      assertThat(d.topicId()).isEqualTo(id);
      assertThat(d.partitions()).hasSize(2);
      var cfg = admin.describeConfigs(List.of(new org.apache.kafka.common.config.ConfigResource(
          org.apache.kafka.common.config.ConfigResource.Type.TOPIC, "durable"))).all().get().values().iterator().next();
      assertThat(cfg.get("retention.ms").value()).isEqualTo("12345");
      assertThat(admin.listConsumerGroupOffsets("keeper").partitionsToOffsetAndMetadata().get().get(tp))
          .isEqualTo(new OffsetAndMetadata(42, "meta"));
      List<ConsumerRecord<String, String>> got = new ArrayList<>();
      try (KafkaConsumer<String, String> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, b.bootstrapServers(),
          ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new StringDeserializer(), new StringDeserializer())) {
        c.assign(List.of(tp));
        c.seekToBeginning(List.of(tp));
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (got.size() < 100 && System.nanoTime() < deadline) {
          c.poll(Duration.ofMillis(200)).forEach(got::add);
        }
      }
      assertThat(got).hasSize(100);
      assertThat(got.get(99).value()).isEqualTo("r99");
      assertThat(got.get(0).leaderEpoch()).contains(0);
    }
  }
}
