package io.tidemark.broker.cleaner;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Produced;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: Kafka Streams 4.x word count with the default (at-least-once) guarantee runs unchanged on
 * Tidemark: its state store's changelog topic is created compacted, the counts come out exactly
 * right, and the log cleaner cleans the changelog without changing what it restores to.
 */
class StreamsWordCountTest {

  @TempDir
  Path dir;
  @TempDir
  Path state;

  @Test
  void wordCountWithACompactedChangelogCountsExactly() throws Exception {
    try (CompactedBrokerFixture fixture = new CompactedBrokerFixture(dir);
         Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, fixture.bootstrap()))) {
      admin.createTopics(List.of(new NewTopic("lines", 1, (short) 1), new NewTopic("counts", 1, (short) 1))).all().get();
      String[] words = {"alpha", "beta", "gamma", "delta"};
      Map<String, Long> expected = new HashMap<>();
      try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
          fixture.bootstrap()), new StringSerializer(), new StringSerializer())) {
        for (int i = 0; i < 400; i++) {
          String line = words[i % 4] + " " + words[(i * 7) % 4] + " " + words[(i / 3) % 4];
          Arrays.stream(line.split(" ")).forEach(w -> expected.merge(w, 1L, Long::sum));
          p.send(new ProducerRecord<>("lines", "l" + i, line));
        }
        p.flush();
      }
      StreamsBuilder builder = new StreamsBuilder();
      builder.<String, String>stream("lines")
          .flatMapValues(v -> Arrays.asList(v.split(" ")))
          .groupBy((k, w) -> w)
          .count()
          .toStream()
          .to("counts", Produced.with(Serdes.String(), Serdes.Long()));
      Properties props = new Properties();
      props.put(StreamsConfig.APPLICATION_ID_CONFIG, "wordcount");
      props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, fixture.bootstrap());
      props.put(StreamsConfig.STATE_DIR_CONFIG, state.toString());
      props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
      props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
      props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
      props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
      props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
      Map<String, Long> latest = new ConcurrentHashMap<>();
      try (KafkaStreams streams = new KafkaStreams(builder.build(), props);
           KafkaConsumer<String, Long> out = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
               fixture.bootstrap(), ConsumerConfig.GROUP_ID_CONFIG, "reader", ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
               "earliest"), new StringDeserializer(), new LongDeserializer())) {
        streams.start();
        out.subscribe(List.of("counts"));
        Awaitility.await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(10)).until(() -> {
          out.poll(Duration.ofMillis(200)).forEach(r -> latest.put(r.key(), r.value()));
          return latest.equals(expected);
        });
        streams.close(Duration.ofSeconds(30));
      }
      String changelog = "wordcount-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog";
      ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, changelog);
      assertThat(admin.describeConfigs(List.of(res)).all().get().get(res).get("cleanup.policy").value()).isEqualTo("compact");
      fixture.upload();
      LogCleaner.RunReport report = fixture.cleaner().runOnce();
      assertThat(report.failures()).isEmpty();
      assertThat(report.recordsDropped()).isPositive();
      fixture.restart();
      Map<String, Long> restored = new HashMap<>();
      org.apache.kafka.common.TopicPartition tp = new org.apache.kafka.common.TopicPartition(changelog, 0);
      long end = fixture.broker.partitionLog(tp).orElseThrow().highWatermark();
      try (KafkaConsumer<String, Long> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
          fixture.bootstrap()), new StringDeserializer(), new LongDeserializer())) {
        c.assign(List.of(tp));
        c.seekToBeginning(List.of(tp));
        Awaitility.await().atMost(Duration.ofMinutes(1)).until(() -> {
          c.poll(Duration.ofMillis(100)).forEach(r -> restored.put(r.key(), r.value()));
          return c.position(tp) >= end;
        });
      }
      assertThat(restored).isEqualTo(expected);
    }
  }
}
