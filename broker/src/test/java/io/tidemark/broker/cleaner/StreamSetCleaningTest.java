package io.tidemark.broker.cleaner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.broker.partition.LogSettings;
import io.tidemark.broker.partition.PartitionLocation;
import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.partition.Partitions;
import io.tidemark.broker.record.KeyValue;
import io.tidemark.broker.record.RecordBatches;
import io.tidemark.stream.compaction.CompactionConfig;
import io.tidemark.stream.compaction.CompactionReport;
import io.tidemark.stream.compaction.StreamSetObjectCompactor;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.engine.StreamEngine;
import io.tidemark.stream.engine.StreamEngineConfig;
import io.tidemark.stream.metadata.MemoryStreamMetadata;
import io.tidemark.stream.metadata.ObjectMetadata;
import io.tidemark.stream.metadata.StreamMetadataConfig;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.MemoryObjectStorage;
import io.tidemark.stream.wal.MemoryWriteAheadLog;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: a compacted partition is cleaned soon after its data is uploaded although small partitions'
 * uploads land in stream-set objects shared with other partitions, whichever node wrote those
 * objects; the other partitions' data in them stays whole and stream-set compaction goes on.
 */
class StreamSetCleaningTest {

  private static final long DELETE_RETENTION_MS = 3_600_000;
  private static final int KEYS = 30;

  @TempDir
  Path dir;

  /** One record as written: key and value (null for a tombstone). */
  record Written(String key, String value) {}

  @Test
  void compactedTopicInStreamSetObjectsIsCleanedWithinSeconds() throws Exception {
    // uploads split nothing out (64 MiB split bound): every upload is one shared stream-set object
    try (CompactedBrokerFixture fixture = new CompactedBrokerFixture(dir, 64L << 20, 200)) {
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, fixture.bootstrap()))) {
        admin.createTopics(List.of(
            new NewTopic("profiles", 2, (short) 1).configs(Map.of("cleanup.policy", "compact",
                "delete.retention.ms", Long.toString(DELETE_RETENTION_MS))),
            new NewTopic("events", 1, (short) 1))).all().get();
      }
      Map<TopicPartition, Map<Long, Written>> written = new HashMap<>();
      try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
          fixture.bootstrap(), ProducerConfig.LINGER_MS_CONFIG, 5), new StringSerializer(), new StringSerializer())) {
        for (int round = 0; round < 3; round++) {
          List<Future<RecordMetadata>> sent = new ArrayList<>();
          List<Written> what = new ArrayList<>();
          for (int k = 0; k < KEYS; k++) {
            String key = "k" + k;
            // round 1 deletes the first five keys; round 2 writes three of them again
            String value = round == 1 && k < 5 ? null : "v" + round + "-" + k;
            if (round == 2 && k < 5 && k >= 3) {
              continue;
            }
            for (String topic : List.of("profiles", "events")) {
              int partition = topic.equals("events") ? 0 : k % 2;
              sent.add(p.send(new ProducerRecord<>(topic, partition, key, value)));
              what.add(new Written(key, value));
            }
          }
          p.flush();
          for (int i = 0; i < sent.size(); i++) {
            RecordMetadata m = sent.get(i).get();
            written.computeIfAbsent(new TopicPartition(m.topic(), m.partition()), tp -> new TreeMap<>())
                .put(m.offset(), what.get(i));
          }
          fixture.upload();
        }
      }
      TopicPartition events = new TopicPartition("events", 0);
      long eventsStream = fixture.broker.partitionLog(events).orElseThrow().location().dataStreamId();
      assertThat(fixture.metadata.getStreamObjects(eventsStream).join()).as("events never left stream-set objects")
          .isEmpty();

      long uploaded = System.nanoTime();
      for (int partition = 0; partition < 2; partition++) {
        TopicPartition tp = new TopicPartition("profiles", partition);
        Map<Long, Written> expected = latestPerKey(written.get(tp));
        long end = fixture.broker.partitionLog(tp).orElseThrow().highWatermark();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(300)).untilAsserted(() ->
            assertThat(read(fixture, tp, end)).as("%s cleaned, read with a consumer", tp).isEqualTo(expected));
      }
      System.out.printf("StreamSetCleaningTest: profiles cleaned and read %d ms after the last upload%n",
          (System.nanoTime() - uploaded) / 1_000_000);
      assertThat(read(fixture, events, fixture.broker.partitionLog(events).orElseThrow().highWatermark()))
          .as("the partition sharing the stream-set objects is whole").isEqualTo(written.get(events));
      assertThat(fixture.metadata.getObjects(eventsStream, 0, Long.MAX_VALUE, 100).join())
          .as("the stream-set objects stay for the events partition").isNotEmpty()
          .allSatisfy(o -> assertThat(o.kind()).isEqualTo(ObjectMetadata.ObjectKind.STREAM_SET));
      for (int partition = 0; partition < 2; partition++) {
        long stream = fixture.broker.partitionLog(new TopicPartition("profiles", partition)).orElseThrow().location()
            .dataStreamId();
        assertThat(fixture.metadata.getObjects(stream, 0, Long.MAX_VALUE, 100).join())
            .as("profiles-%d is in the cleaner's stream objects only", partition)
            .allSatisfy(o -> assertThat(o.kind()).isEqualTo(ObjectMetadata.ObjectKind.STREAM));
      }

      fixture.restart();
      for (int partition = 0; partition < 2; partition++) {
        TopicPartition tp = new TopicPartition("profiles", partition);
        long end = fixture.broker.partitionLog(tp).orElseThrow().highWatermark();
        assertThat(read(fixture, tp, end)).as("%s after a restart", tp).isEqualTo(latestPerKey(written.get(tp)));
      }
    }
  }

  @Test
  void cleansStreamSetObjectsOfANodeThatIsGone() throws Exception {
    MemoryObjectStorage storage = new MemoryObjectStorage();
    ObjectKeys keys = ObjectKeys.defaults();
    MemoryStreamMetadata metadata = new MemoryStreamMetadata(System::currentTimeMillis, storage, keys,
        new StreamMetadataConfig(1000, 1000, 10_000));
    LogSettings settings = new LogSettings(1 << 20, false, io.tidemark.broker.record.TopicCompression.PRODUCER, true);
    StreamEngineConfig config = new StreamEngineConfig(4L * 1024 * 1024, 256 * 1024, 100, 64L << 20, 4096, 1024 * 1024,
        60_000, 8L * 1024 * 1024, 5, 50, 8);
    List<StreamEngine> engines = new ArrayList<>();
    try {
      StreamEngine first = engine(1, metadata, storage, keys, config, engines);
      PartitionLocation compacted = new PartitionLocation(new TopicPartition("compacted", 0), Uuid.randomUuid(),
          first.createStream(Map.of()).join(), first.createStream(Map.of()).join());
      PartitionLocation plain = new PartitionLocation(new TopicPartition("plain", 0), Uuid.randomUuid(),
          first.createStream(Map.of()).join(), first.createStream(Map.of()).join());
      PartitionLog c1 = PartitionLog.open(first, compacted, 1, settings, Time.SYSTEM, p -> {}).join();
      PartitionLog p1 = PartitionLog.open(first, plain, 1, settings, Time.SYSTEM, p -> {}).join();
      Map<Long, Written> writtenCompacted = new TreeMap<>();
      Map<Long, Written> writtenPlain = new TreeMap<>();
      for (int round = 0; round < 2; round++) {
        for (int k = 0; k < KEYS; k++) {
          String value = round == 1 && k % 7 == 0 ? null : "v" + round + "-" + k;
          append(c1, "k" + k, value, writtenCompacted);
          append(p1, "k" + k, value, writtenPlain);
        }
        first.flush().get(60, TimeUnit.SECONDS);
      }
      int sets = metadata.getStreamSetObjects(1).join().size();
      assertThat(sets).isGreaterThanOrEqualTo(2);
      // node 1 is gone: its stream-set objects stay, written by it and compacted by nobody
      c1.close().get(60, TimeUnit.SECONDS);
      p1.close().get(60, TimeUnit.SECONDS);
      first.close();

      StreamEngine second = engine(2, metadata, storage, keys, config, engines);
      PartitionLog c2 = PartitionLog.open(second, compacted, 2, settings, Time.SYSTEM, p -> {}).join();
      PartitionLog p2 = PartitionLog.open(second, plain, 2, settings, Time.SYSTEM, p -> {}).join();
      Partitions partitions = new Partitions();
      partitions.put(c2);
      LogCleaner cleaner = new LogCleaner(partitions, tp -> new CleanerPolicy(true, DELETE_RETENTION_MS, 0,
          Long.MAX_VALUE, 0.5), second.rewriter().orElseThrow(), Time.SYSTEM, new LogCleaner.Limits(1 << 20, 1 << 20, 1L << 30));
      LogCleaner.RunReport report = cleaner.runOnce();
      assertThat(report.failures()).isEmpty();
      assertThat(report.partitionsCleaned()).isEqualTo(1);
      assertThat(c2.cleanedOffset()).isEqualTo(c2.highWatermark());
      assertThat(records(c2)).isEqualTo(latestPerKey(writtenCompacted));
      assertThat(records(p2)).isEqualTo(writtenPlain);

      // node 1 back: compacting its stream-set objects, which no longer list the cleaned stream, still works
      CompactionConfig forceSplit = CompactionConfig.from(new Settings(Map.of("stream.compaction.force.split.age.ms", "1")));
      StreamSetObjectCompactor compactor = new StreamSetObjectCompactor(metadata.registerNode(1), metadata, metadata,
          storage, keys, forceSplit, System::currentTimeMillis);
      List<Long> left = metadata.getStreamSetObjects(1).join().stream().map(ObjectMetadata::objectId).toList();
      CompactionReport compaction = compactor.runOnce().get(60, TimeUnit.SECONDS);
      assertThat(compaction.compactedObjectIds()).containsExactlyInAnyOrderElementsOf(left);
      assertThat(metadata.getStreamSetObjects(1).join()).isEmpty();
      assertThat(records(p2)).isEqualTo(writtenPlain);
      assertThat(records(c2)).isEqualTo(latestPerKey(writtenCompacted));
      c2.close().get(60, TimeUnit.SECONDS);
      p2.close().get(60, TimeUnit.SECONDS);
    } finally {
      engines.forEach(StreamEngine::close);
    }
  }

  private static StreamEngine engine(int node, MemoryStreamMetadata metadata, MemoryObjectStorage storage, ObjectKeys keys,
      StreamEngineConfig config, List<StreamEngine> engines) {
    StreamEngine e = StreamEngine.builder().node(metadata.registerNode(node)).wal(new MemoryWriteAheadLog())
        .objectStorage(storage).streamManager(metadata).objectManager(metadata).objectKeys(keys).config(config).build();
    e.start().join();
    engines.add(e);
    return e;
  }

  private static void append(PartitionLog log, String key, String value, Map<Long, Written> written) throws Exception {
    byte[][] record = {key.getBytes(StandardCharsets.UTF_8), value == null ? null : value.getBytes(StandardCharsets.UTF_8)};
    long offset = log.append(RecordBatches.internalBatch(System.currentTimeMillis(), List.<byte[][]>of(record)))
        .get(60, TimeUnit.SECONDS).baseOffset();
    written.put(offset, new Written(key, value));
  }

  /** For every key its latest record at its offset (tombstones within {@code delete.retention.ms} stay). */
  private static Map<Long, Written> latestPerKey(Map<Long, Written> written) {
    Map<String, Long> latest = new HashMap<>();
    written.forEach((offset, w) -> latest.put(w.key(), offset));
    Map<Long, Written> expected = new LinkedHashMap<>();
    written.forEach((offset, w) -> {
      if (latest.get(w.key()).equals(offset)) {
        expected.put(offset, w);
      }
    });
    return expected;
  }

  private static Map<Long, Written> read(CompactedBrokerFixture fixture, TopicPartition tp, long end) {
    Map<Long, Written> got = new LinkedHashMap<>();
    for (ConsumerRecord<String, String> r : CompactedBrokerFixture.readAll(fixture.bootstrap(), tp, () -> end)) {
      got.put(r.offset(), new Written(r.key(), r.value()));
    }
    return got;
  }

  private static Map<Long, Written> records(PartitionLog log) throws Exception {
    Map<Long, Written> got = new LinkedHashMap<>();
    long offset = log.logStartOffset();
    while (offset < log.highWatermark()) {
      PartitionLog.RecordPage page = log.readRecords(offset, 4096).get(60, TimeUnit.SECONDS);
      for (KeyValue kv : page.records()) {
        got.put(kv.offset(), new Written(new String(kv.key(), StandardCharsets.UTF_8),
            kv.value() == null ? null : new String(kv.value(), StandardCharsets.UTF_8)));
      }
      offset = page.nextOffset();
    }
    return got;
  }
}
