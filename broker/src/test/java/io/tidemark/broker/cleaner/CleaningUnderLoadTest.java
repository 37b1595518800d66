package io.tidemark.broker.cleaner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: cleaning never blocks nor breaks concurrent produce and consume (and, first, a compacted
 * topic describes Kafka's cleaner defaults and refuses a keyless record with INVALID_RECORD). A producer writes keyed
 * records while the cleaner runs again and again over uploaded data and a consumer tails the topic
 * from the start: every produce is acknowledged, the consumer's offsets only go up and it reaches
 * the end, and after a last cleaning and a restart the log holds exactly the latest acknowledged
 * record of every key at its offset.
 */
class CleaningUnderLoadTest {

  @TempDir
  Path dir;

  @Test
  void produceAndConsumeWhileTheCleanerRuns() throws Exception {
    int records = "full".equals(System.getProperty("tidemark.test.scale")) ? 50_000 : 2_500;
    try (CompactedBrokerFixture fixture = new CompactedBrokerFixture(dir)) {
      TopicPartition tp = new TopicPartition("busy", 0);
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, fixture.bootstrap()))) {
        admin.createTopics(List.of(new NewTopic("busy", 1, (short) 1).configs(Map.of("cleanup.policy", "compact",
            "min.cleanable.dirty.ratio", "0")))).all().get();
        ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, "busy");
        var config = admin.describeConfigs(List.of(res)).all().get().get(res);
        assertThat(config.get("cleanup.policy").value()).isEqualTo("compact");
        assertThat(config.get("delete.retention.ms").value()).isEqualTo("86400000");
        assertThat(config.get("min.compaction.lag.ms").value()).isEqualTo("0");
        assertThat(config.get("max.compaction.lag.ms").value()).isEqualTo(Long.toString(Long.MAX_VALUE));
        assertThat(config.get("min.cleanable.dirty.ratio").value()).isEqualTo("0");
      }
      // as Kafka: a record without a key is refused with INVALID_RECORD and nothing is written
      try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
          fixture.bootstrap(), ProducerConfig.RETRIES_CONFIG, 0), new StringSerializer(), new StringSerializer())) {
        assertThatThrownBy(() -> p.send(new ProducerRecord<>("busy", 0, null, "no key")).get())
            .hasCauseInstanceOf(InvalidRecordException.class);
      }
      assertThat(fixture.broker.partitionLog(tp).orElseThrow().highWatermark()).isZero();
      Map<String, long[]> acked = new ConcurrentHashMap<>();
      Map<String, String> ackedValue = new ConcurrentHashMap<>();
      AtomicBoolean producing = new AtomicBoolean(true);
      CompletableFuture<Void> producer = CompletableFuture.runAsync(() -> {
        try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            fixture.bootstrap(), ProducerConfig.LINGER_MS_CONFIG, 2), new StringSerializer(), new StringSerializer())) {
          for (int i = 0; i < records; i++) {
            String key = "k" + (i % 97);
            String value = "v" + i;
            p.send(new ProducerRecord<>("busy", 0, key, value), (md, e) -> {
              if (e == null) {
                acked.merge(key, new long[] {md.offset()}, (a, b) -> a[0] > b[0] ? a : b);
                ackedValue.compute(key, (k, old) -> acked.get(key)[0] == md.offset() ? value : old);
              }
            });
            if (i % 200 == 0) {
              p.flush();
            }
          }
          p.flush();
        } finally {
          producing.set(false);
        }
      });
      AtomicLong consumed = new AtomicLong(-1);
      List<String> problems = new ArrayList<>();
      CompletableFuture<Void> consumer = CompletableFuture.runAsync(() -> {
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
            fixture.bootstrap(), ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 8192), new StringDeserializer(),
            new StringDeserializer())) {
          c.assign(List.of(tp));
          c.seekToBeginning(List.of(tp));
          long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
          while ((producing.get() || c.position(tp) < fixture.broker.partitionLog(tp).orElseThrow().highWatermark())
              && System.nanoTime() < deadline) {
            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(50))) {
              if (r.offset() <= consumed.get()) {
                problems.add("offset " + r.offset() + " after " + consumed.get());
              }
              consumed.set(r.offset());
            }
          }
        }
      });
      int passes = 0;
      while (!producer.isDone()) {
        fixture.upload();
        LogCleaner.RunReport report = fixture.cleaner().runOnce();
        assertThat(report.failures()).isEmpty();
        passes += report.partitionsCleaned();
      }
      producer.get(3, TimeUnit.MINUTES);
      consumer.get(4, TimeUnit.MINUTES);
      assertThat(problems).isEmpty();
      long end = fixture.broker.partitionLog(tp).orElseThrow().highWatermark();
      assertThat(end).isEqualTo(records);
      assertThat(consumed.get()).isEqualTo(end - 1);
      assertThat(passes).as("passes while producing").isPositive();

      fixture.upload();
      fixture.cleaner().runOnce();
      fixture.restart();
      Map<String, Long> offsets = new HashMap<>();
      Map<String, String> values = new HashMap<>();
      for (ConsumerRecord<String, String> r : CompactedBrokerFixture.readAll(fixture.bootstrap(), tp, () -> end)) {
        assertThat(offsets).as("key %s once", r.key()).doesNotContainKey(r.key());
        offsets.put(r.key(), r.offset());
        values.put(r.key(), r.value());
      }
      assertThat(offsets).hasSize(acked.size());
      acked.forEach((k, o) -> assertThat(offsets.get(k)).as("offset of %s", k).isEqualTo(o[0]));
      assertThat(values).isEqualTo(ackedValue);
    }
  }
}
