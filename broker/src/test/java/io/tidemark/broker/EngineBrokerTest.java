package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.stream.config.Settings;
import io.tidemark.stream.engine.StreamEngine;
import io.tidemark.stream.engine.StreamEngineConfig;
import io.tidemark.stream.metadata.MemoryStreamMetadata;
import io.tidemark.stream.metadata.StreamMetadataConfig;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.MemoryObjectStorage;
import io.tidemark.stream.wal.MemoryWriteAheadLog;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: the broker runs on the real storage engine (WAL, log cache, uploads to object storage,
 * cold reads): compressed idempotent produce, consume, and a restart of broker and engine on the
 * same WAL, object storage and metadata keeps every record and committed offset.
 */
class EngineBrokerTest {

  @TempDir
  Path dir;

  final MemoryObjectStorage storage = new MemoryObjectStorage();
  final ObjectKeys keys = ObjectKeys.defaults();
  final MemoryStreamMetadata metadata = new MemoryStreamMetadata(System::currentTimeMillis, storage, keys,
      new StreamMetadataConfig(1000, 1000, 10_000));
  final MemoryWriteAheadLog wal = new MemoryWriteAheadLog();

  private StreamEngine engine() {
    // small cache and upload threshold: most data is uploaded and read back cold
    StreamEngineConfig config = new StreamEngineConfig(256 * 1024, 64 * 1024, 200, 32 * 1024, 4096, 64 * 1024, 60_000,
        4 * 1024 * 1024, 5, 50, 8);
    StreamEngine e = StreamEngine.builder().node(metadata.registerNode(1)).wal(wal).objectStorage(storage).streamManager(metadata)
        .objectManager(metadata).objectKeys(keys).config(config).build();
    e.start().join();
    return e;
  }

  private KafkaBroker broker(StreamEngine engine) {
    Settings s = new Settings(Map.of("kafka.listener.port", "0", "kafka.listener.host", "127.0.0.1",
        "kafka.advertised.host", "127.0.0.1", "kafka.data.dir", dir.toString(), "kafka.group.initial.rebalance.delay.ms", "0"));
    KafkaBroker b = new KafkaBroker(new BrokerConfig(s), engine, Time.SYSTEM);
    b.start();
    return b;
  }

  private static List<String> readAll(String bootstrap, TopicPartition tp, int n) {
    List<String> got = new ArrayList<>();
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
        ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 16 * 1024), new StringDeserializer(), new StringDeserializer())) {
      c.assign(List.of(tp));
      c.seekToBeginning(List.of(tp));
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (got.size() < n && System.nanoTime() < deadline) {
        c.poll(Duration.ofMillis(200)).forEach(r -> got.add(r.value()));
      }
    }
    return got;
  }

  @Test
  void produceConsumeAndRestartOnTheStorageEngine() throws Exception {
    int n = 3000;
    TopicPartition tp = new TopicPartition("engine", 0);
    StreamEngine first = engine();
    try (KafkaBroker b = broker(first); Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
        b.bootstrapServers()))) {
      admin.createTopics(List.of(new NewTopic("engine", 1, (short) 1))).all().get();
      try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, b.bootstrapServers(),
          ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd", ProducerConfig.BATCH_SIZE_CONFIG, 4096,
          ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true), new StringSerializer(), new StringSerializer())) {
        for (int i = 0; i < n; i++) {
          p.send(new ProducerRecord<>("engine", 0, null, "record-" + i + "-" + "y".repeat(64)));
        }
        p.flush();
      }
      List<String> got = readAll(b.bootstrapServers(), tp, n);
      assertThat(got).hasSize(n);
      assertThat(got.get(n - 1)).startsWith("record-" + (n - 1) + "-");
      admin.alterConsumerGroupOffsets("engine-group", Map.of(tp, new OffsetAndMetadata(1234))).all().get();
    }
    first.close();

    StreamEngine second = engine();
    try (KafkaBroker b = broker(second); Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
        b.bootstrapServers()))) {
      List<String> got = readAll(b.bootstrapServers(), tp, n);
      assertThat(got).hasSize(n);
      for (int i = 0; i < n; i++) {
        assertThat(got.get(i)).startsWith("record-" + i + "-");
      }
      assertThat(admin.listConsumerGroupOffsets("engine-group").partitionsToOffsetAndMetadata().get().get(tp).offset())
          .isEqualTo(1234);
    } finally {
      second.close();
    }
  }
}
