package io.tidemark.broker.cleaner;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Goal: a compacted topic read back through a real consumer after the cleaner ran equals a reference
 * model, for random sequences of keyed values and tombstones written in two rounds with
 * {@code delete.retention.ms} passing between the two cleanings: every key at its latest record and
 * original offset, nothing superseded, round-one tombstones gone, round-two tombstones still there.
 * The node restarts before the read, so the records come from the cleaned objects (the log cache
 * would serve the older, uncleaned view, which is valid too) and the cleaner's work survives it.
 * 4 tries (raise {@code tries} for a longer hunt; jqwik prints the seed of a failing try).
 */
class CompactionPropertyTest {

  private static final long DELETE_RETENTION_MS = 60_000;
  private static final AtomicInteger TOPICS = new AtomicInteger();
  private static CompactedBrokerFixture fixture;
  private static Path dir;

  /** One write: a key and a value, null for a tombstone. */
  record Op(String key, String value) {}

  @BeforeContainer
  static void startBroker() throws Exception {
    dir = Files.createTempDirectory("compaction-property");
    fixture = new CompactedBrokerFixture(dir);
  }

  @AfterContainer
  static void stopBroker() {
    fixture.close();
  }

  @Provide
  Arbitrary<List<Op>> ops() {
    Arbitrary<String> keys = Arbitraries.integers().between(0, 24).map(i -> "k" + i);
    Arbitrary<String> values = Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(4, Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(40)),
        net.jqwik.api.Tuple.of(1, Arbitraries.just(null)));
    return Combinators.combine(keys, values).as(Op::new).list().ofMinSize(1).ofMaxSize(300);
  }

  @Property(tries = 4)
  void compactedLogMatchesTheModel(@ForAll("ops") List<Op> first, @ForAll("ops") List<Op> second,
      @ForAll("batchSizes") int batchSize) throws Exception {
    String topic = "compacted-" + TOPICS.incrementAndGet();
    TopicPartition tp = new TopicPartition(topic, 0);
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, fixture.bootstrap()))) {
      admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of("cleanup.policy", "compact",
          "delete.retention.ms", Long.toString(DELETE_RETENTION_MS), "min.cleanable.dirty.ratio", "0")))).all().get();
    }
    Map<Long, Op> written = new TreeMap<>();
    produce(topic, first, batchSize, written);
    long firstRoundEnd = written.isEmpty() ? 0 : ((TreeMap<Long, Op>) written).lastKey() + 1;
    fixture.upload();
    fixture.cleaner().runOnce();
    fixture.time.skewMs.addAndGet(DELETE_RETENTION_MS + 1000);
    produce(topic, second, batchSize, written);
    fixture.upload();
    LogCleaner.RunReport report = fixture.cleaner().runOnce();
    long checkpoint = fixture.broker.partitionLog(tp).orElseThrow().cleanedOffset();
    assertThat(checkpoint).as("cleaner checkpoint after two passes").isEqualTo(written.size() == 0 ? 0 : end(written));
    // the log cache still holds the uncleaned batches (a valid, older view of the log); a restart reads the objects
    fixture.restart();
    assertThat(fixture.broker.partitionLog(tp).orElseThrow().cleanedOffset()).as("checkpoint after a restart")
        .isEqualTo(checkpoint);
    assertThat(report.failures()).isEmpty();

    Map<String, Long> latest = new HashMap<>();
    written.forEach((offset, op) -> latest.put(op.key(), offset));
    Map<Long, Op> expected = new LinkedHashMap<>();
    for (Map.Entry<Long, Op> e : written.entrySet()) {
      Op op = e.getValue();
      boolean isLatest = latest.get(op.key()).equals(e.getKey());
      boolean expiredTombstone = op.value() == null && e.getKey() < firstRoundEnd;
      if (isLatest && !expiredTombstone) {
        expected.put(e.getKey(), op);
      }
    }
    long end = fixture.broker.partitionLog(tp).orElseThrow().highWatermark();
    List<ConsumerRecord<String, String>> got = CompactedBrokerFixture.readAll(fixture.bootstrap(), tp, () -> end);
    Map<Long, Op> actual = new LinkedHashMap<>();
    for (ConsumerRecord<String, String> r : got) {
      actual.put(r.offset(), new Op(r.key(), r.value()));
    }
    assertThat(actual).as("compacted log of %s (first round ends at %d)", topic, firstRoundEnd).isEqualTo(expected);
  }

  private static long end(Map<Long, Op> written) {
    return ((TreeMap<Long, Op>) written).lastKey() + 1;
  }

  @Provide
  Arbitrary<Integer> batchSizes() {
    return Arbitraries.of(1, 3, 50);
  }

  /** Sends the ops in batches of {@code batchSize} records (one linger-free flush each) and records their offsets. */
  private static void produce(String topic, List<Op> ops, int batchSize, Map<Long, Op> written) throws Exception {
    try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
        fixture.bootstrap(), ProducerConfig.LINGER_MS_CONFIG, 1000, ProducerConfig.BATCH_SIZE_CONFIG, 1 << 20),
        new StringSerializer(), new StringSerializer())) {
      for (int i = 0; i < ops.size(); i += batchSize) {
        List<java.util.concurrent.Future<org.apache.kafka.clients.producer.RecordMetadata>> sent = new ArrayList<>();
        List<Op> chunk = ops.subList(i, Math.min(ops.size(), i + batchSize));
        for (Op op : chunk) {
          sent.add(p.send(new ProducerRecord<>(topic, 0, op.key(), op.value())));
        }
        p.flush();
        for (int j = 0; j < chunk.size(); j++) {
          written.put(sent.get(j).get().offset(), chunk.get(j));
        }
      }
    }
  }
}
