package io.tidemark.broker.cleaner;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.broker.partition.PartitionLog;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: the log cleaner keeps a transactional producer's semantics on a compacted topic, with
 * Kafka's rules, read with a real read_committed consumer after every pass: an aborted
 * transaction's records are removed and never shadow a committed value of the same key; nothing
 * at or above the last stable offset (an open transaction) is cleaned; a marker stays while its
 * transaction has data left, then gets a delete horizon, and goes only once
 * {@code delete.retention.ms} has passed; the aborted-transaction index entry of a transaction
 * whose data is gone is dropped, and everything holds after a restart.
 */
class TransactionalCompactionTest {

  private static final String TOPIC = "txn-compacted";
  private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
  private static final long DELETE_RETENTION_MS = 60_000;

  @TempDir
  Path dir;

  @Test
  void abortedDataGoesMarkersStayUntilSafeAndNothingPastTheStableOffsetIsCleaned() throws Exception {
    try (CompactedBrokerFixture fixture = new CompactedBrokerFixture(dir);
         Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, fixture.bootstrap()))) {
      admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1).configs(Map.of("cleanup.policy", "compact",
          "delete.retention.ms", Long.toString(DELETE_RETENTION_MS), "min.cleanable.dirty.ratio", "0.01"))))
          .all().get(30, TimeUnit.SECONDS);
      Map<String, String> expected = new LinkedHashMap<>();
      send(fixture, null, false, expected, "k1", "v1", "k2", "v2");
      send(fixture, "txn-a", true, expected, "k1", "a1", "k3", "a3");
      send(fixture, "txn-b", false, expected, "k1", "aborted", "k2", "aborted", "k4", "aborted");
      send(fixture, "txn-c", true, expected, "k3", "c3");
      fixture.upload();
      // an open transaction: the last stable offset stops at its first record, and the cleaner must too
      KafkaProducer<String, String> open = producer(fixture, "txn-d");
      open.initTransactions();
      open.beginTransaction();
      open.send(new ProducerRecord<>(TOPIC, 0, "k5", "open")).get();
      open.send(new ProducerRecord<>(TOPIC, 0, "k2", "open")).get();
      open.flush();
      open.close(Duration.ZERO); // forced: a graceful close would abort it; its transaction stays open
      fixture.upload();
      PartitionLog log = fixture.broker.partitionLog(TP).orElseThrow();
      long stable = log.lastStableOffset();
      assertThat(stable).isLessThan(log.highWatermark());
      long abortedB = producerIdOf(fixture, "txn-b");

      // pass 1: aborted records gone, committed ones cleaned by key, markers kept (their transactions still have data)
      runPass(fixture);
      log = fixture.broker.partitionLog(TP).orElseThrow();
      assertThat(log.cleanedOffset()).isLessThanOrEqualTo(stable);
      assertThat(valuesOf(fixture)).noneMatch(v -> v.equals("aborted")).contains("open", "v2", "a1", "c3")
          .doesNotContain("v1", "a3");
      assertThat(readCommitted(fixture)).isEqualTo(expected);
      assertThat(markers(fixture)).hasSize(3);
      assertThat(log.abortedTransactions(0, log.highWatermark())).extracting(a -> a[0]).contains(abortedB);

      assertThat(log.lastStableOffset()).as("the open transaction survived the restart").isEqualTo(stable);
      // the open transaction ends: a new producer with its id fences it and the coordinator aborts it
      try (KafkaProducer<String, String> fencer = producer(fixture, "txn-d")) {
        fencer.initTransactions();
      }
      // k1's committed value of transaction A is superseded
      send(fixture, null, false, expected, "k1", "z1");
      fixture.upload();
      // pass 2: A's batch is emptied (its marker stays this pass); B has no data left: its index entry goes
      runPass(fixture);
      log = fixture.broker.partitionLog(TP).orElseThrow();
      assertThat(log.abortedTransactions(0, log.highWatermark())).extracting(a -> a[0]).doesNotContain(abortedB);
      assertThat(valuesOf(fixture)).doesNotContain("open", "a1");
      assertThat(readCommitted(fixture)).isEqualTo(expected);

      send(fixture, null, false, expected, "k6", "x6");
      fixture.upload();
      // pass 3: every marker of a transaction without data has a delete horizon, none has passed
      runPass(fixture);
      Map<Long, Boolean> horizons = markers(fixture);
      assertThat(horizons).containsEntry(abortedB, true).containsEntry(producerIdOf(fixture, "txn-a"), true)
          .containsEntry(producerIdOf(fixture, "txn-d"), true)
          .containsEntry(producerIdOf(fixture, "txn-c"), false); // C's k3=c3 is still the latest value of k3
      assertThat(readCommitted(fixture)).isEqualTo(expected);

      // the restarted broker has the cleaned log's state
      log = fixture.broker.partitionLog(TP).orElseThrow();
      assertThat(log.lastStableOffset()).isEqualTo(log.highWatermark());
      assertThat(log.abortedTransactions(0, log.highWatermark())).extracting(a -> a[0]).doesNotContain(abortedB);
      assertThat(readCommitted(fixture)).isEqualTo(expected);

      // pass 4, after delete.retention.ms: the empty markers are gone; C's marker stays with its data
      fixture.time.skewMs.addAndGet(2 * DELETE_RETENTION_MS);
      send(fixture, null, false, expected, "k7", "x7");
      fixture.upload();
      runPass(fixture);
      assertThat(markers(fixture)).containsOnlyKeys(producerIdOf(fixture, "txn-c"));
      assertThat(readCommitted(fixture)).isEqualTo(expected);
    }
  }

  /**
   * One cleaner pass, then a restart: reads right after a pass may still be served from the log
   * cache in their uncleaned form (an equally valid view), the restarted broker reads the objects.
   */
  private static void runPass(CompactedBrokerFixture fixture) {
    LogCleaner.RunReport report = fixture.cleaner().runOnce();
    assertThat(report.failures()).isEmpty();
    assertThat(report.partitionsCleaned()).as("a pass over " + TP + " ran").isPositive();
    fixture.restart();
  }

  private static KafkaProducer<String, String> producer(CompactedBrokerFixture fixture, String transactionalId) {
    Map<String, Object> p = new HashMap<>();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, fixture.bootstrap());
    if (transactionalId != null) {
      p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    }
    return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
  }

  /** Sends key/value pairs: without a transactional id plainly, else in one transaction committed or aborted. */
  private static void send(CompactedBrokerFixture fixture, String transactionalId, boolean commit, Map<String, String> expected,
      String... keyValues) throws Exception {
    try (KafkaProducer<String, String> p = producer(fixture, transactionalId)) {
      if (transactionalId != null) {
        p.initTransactions();
        p.beginTransaction();
      }
      for (int i = 0; i < keyValues.length; i += 2) {
        p.send(new ProducerRecord<>(TOPIC, 0, keyValues[i], keyValues[i + 1]));
      }
      p.flush();
      if (transactionalId == null) {
        // plain records
      } else if (commit) {
        p.commitTransaction();
      } else {
        p.abortTransaction();
      }
    }
    if (transactionalId == null || commit) {
      for (int i = 0; i < keyValues.length; i += 2) {
        expected.put(keyValues[i], keyValues[i + 1]);
      }
    }
  }

  private static long producerIdOf(CompactedBrokerFixture fixture, String transactionalId) throws Exception {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, fixture.bootstrap()))) {
      return admin.describeTransactions(List.of(transactionalId)).description(transactionalId).get(30, TimeUnit.SECONDS)
          .producerId();
    }
  }

  /** Each key's latest value as a read_committed consumer reads the partition from its start. */
  private static Map<String, String> readCommitted(CompactedBrokerFixture fixture) {
    Map<String, String> latest = new LinkedHashMap<>();
    Map<String, Object> props = new HashMap<>();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, fixture.bootstrap());
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
      c.assign(List.of(TP));
      c.seekToBeginning(List.of(TP));
      long end = c.endOffsets(List.of(TP)).get(TP);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (c.position(TP) < end) {
        assertThat(System.nanoTime()).as("read_committed reaches " + end).isLessThan(deadline);
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
          assertThat(r.value()).isNotEqualTo("aborted");
          latest.put(r.key(), r.value());
        }
      }
    }
    return latest;
  }

  /** Every stored batch of the partition, in offset order. */
  private static List<MutableRecordBatch> batches(CompactedBrokerFixture fixture) throws Exception {
    PartitionLog log = fixture.broker.partitionLog(TP).orElseThrow();
    List<MutableRecordBatch> out = new ArrayList<>();
    long offset = log.logStartOffset();
    while (offset < log.highWatermark()) {
      List<ByteBuffer> read = log.read(offset, 1 << 20).get(30, TimeUnit.SECONDS).batches();
      assertThat(read).isNotEmpty();
      for (ByteBuffer b : read) {
        for (MutableRecordBatch batch : MemoryRecords.readableRecords(b.duplicate()).batches()) {
          if (batch.lastOffset() >= offset) {
            out.add(batch);
            offset = batch.lastOffset() + 1;
          }
        }
      }
    }
    return out;
  }

  /** Values of every record stored (read_uncommitted, markers left out). */
  private static List<String> valuesOf(CompactedBrokerFixture fixture) throws Exception {
    List<String> values = new ArrayList<>();
    for (MutableRecordBatch b : batches(fixture)) {
      if (!b.isControlBatch()) {
        for (Record r : b) {
          values.add(r.hasValue() ? StandardCharsets.UTF_8.decode(r.value()).toString() : null);
        }
      }
    }
    return values;
  }

  /** The stored transaction markers: producer id → whether the marker has a delete horizon. */
  private static Map<Long, Boolean> markers(CompactedBrokerFixture fixture) throws Exception {
    Map<Long, Boolean> out = new LinkedHashMap<>();
    for (MutableRecordBatch b : batches(fixture)) {
      if (b.isControlBatch()) {
        out.put(b.producerId(), b.deleteHorizonMs().isPresent());
      }
    }
    return out;
  }
}
