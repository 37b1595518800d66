package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tidemark.broker.partition.MemoryStreamStore;
import io.tidemark.stream.api.Stream;
import io.tidemark.stream.api.StreamStore;
import io.tidemark.stream.config.Settings;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: a produce for a partition that is still opening on this broker (a restart) waits for the
 * open, up to {@code kafka.produce.opening.wait.ms}, instead of answering NOT_LEADER_OR_FOLLOWER; so do the
 * other requests for a partition (the broker's OpeningGate).
 */
class OpeningPartitionProduceTest {
  private static final String TOPIC = "opening";

  @TempDir
  Path dir;

  /** The memory store, whose stream opens wait until {@link #release}. */
  private static final class GatedStore implements StreamStore {
    private final MemoryStreamStore inner;
    private final CompletableFuture<Void> gate = new CompletableFuture<>();

    GatedStore(MemoryStreamStore inner) {
      this.inner = inner;
    }

    void release() {
      gate.complete(null);
    }

    @Override
    public CompletableFuture<Long> createStream(Map<String, String> tags) {
      return inner.createStream(tags);
    }

    @Override
    public CompletableFuture<Stream> openStream(long streamId, long epoch) {
      return gate.thenCompose(v -> inner.openStream(streamId, epoch));
    }

    @Override
    public Optional<Stream> stream(long streamId) {
      return inner.stream(streamId);
    }

    @Override
    public void close() {
      inner.close();
    }
  }

  private BrokerConfig config(String openingWaitMs) {
    Map<String, String> m = new HashMap<>(Map.of("kafka.listener.port", "0", "kafka.listener.host", "127.0.0.1",
        "kafka.advertised.host", "127.0.0.1", "kafka.data.dir", dir.toString()));
    m.put(BrokerConfig.PRODUCE_OPENING_WAIT_MS.name(), openingWaitMs);
    return new BrokerConfig(new Settings(m));
  }

  private static void await(BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("waiting for " + what).isLessThan(deadline);
      Thread.onSpinWait();
      Thread.yield();
    }
  }

  /**
   * Restarts a broker that has the topic on a store whose opens wait, and sends one record while they
   * wait: with the wait on, Metadata names this broker as the leader and the produce waits in the
   * broker's purgatory until the test lets the open go on; without it, the partition is reported
   * LEADER_NOT_AVAILABLE while it opens (checked with the admin client) and the producer waits for metadata.
   */
  private RecordMetadata produceWhileOpening(MemoryStreamStore store, String openingWaitMs) throws Exception {
    GatedStore gated = new GatedStore(store);
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    KafkaBroker b = new KafkaBroker(config(openingWaitMs), gated, Time.SYSTEM, meters);
    CompletableFuture<Void> started = CompletableFuture.runAsync(b::start);
    try {
      await(() -> started.isDone() || b.port() > 0, "the listener");
      String bootstrap = "127.0.0.1:" + b.port();
      boolean waits = !openingWaitMs.equals("0");
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        var leader = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(60, TimeUnit.SECONDS).get(TOPIC)
            .partitions().get(0).leader();
        assertThat(leader == null ? -1 : leader.id()).as("the leader reported while the partition opens")
            .isEqualTo(waits ? b.nodeId() : -1);
      }
      try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
          bootstrap, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false, ProducerConfig.RETRIES_CONFIG, 0,
          ProducerConfig.ACKS_CONFIG, "all"), new StringSerializer(), new StringSerializer())) {
        Future<RecordMetadata> sent = p.send(new ProducerRecord<>(TOPIC, 0, null, "while opening"));
        if (waits) {
          await(() -> meters.find("tidemark.kafka.purgatory.requests").tag("purgatory", "produce").gauge().value() >= 1,
              "the produce waiting for its partition");
          assertThat(sent).isNotDone();
        }
        gated.release();
        RecordMetadata acked = sent.get(60, TimeUnit.SECONDS);
        started.get(60, TimeUnit.SECONDS);
        return acked;
      }
    } finally {
      gated.release();
      started.handle((v, e) -> null).get(60, TimeUnit.SECONDS);
      b.close();
    }
  }

  @Test
  void aProduceWaitsForItsOpeningPartitionInsteadOfBeingSentAway() throws Exception {
    MemoryStreamStore store = new MemoryStreamStore(1L << 30);
    try (KafkaBroker b = new KafkaBroker(config("500"), store, Time.SYSTEM)) {
      b.start();
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, b.bootstrapServers()))) {
        admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
      }
    }
    // a long wait: the test lets the open go on once the produce waits for it; retries=0, so this ack is its first try
    assertThat(produceWhileOpening(store, "30000").offset()).isZero();
    // without the wait: the partition is not announced until it is open; the producer waits for metadata instead
    assertThat(produceWhileOpening(store, "0").offset()).isEqualTo(1);
  }

  /**
   * Goal: Metadata names this broker while the partition opens, so every request for the partition waits for the
   * open like a produce (ListOffsets, DescribeProducers, Fetch by topic id, OffsetForLeaderEpoch), and none is
   * answered NOT_LEADER_OR_FOLLOWER (DescribeProducers right after a topic's creation was, in CI).
   */
  @Test
  void everyPartitionRequestWaitsForItsOpeningPartition() throws Exception {
    MemoryStreamStore store = new MemoryStreamStore(1L << 30);
    org.apache.kafka.common.Uuid topicId;
    try (KafkaBroker b = new KafkaBroker(config("500"), store, Time.SYSTEM)) {
      b.start();
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, b.bootstrapServers()))) {
        admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
      }
      topicId = b.topics().stream().filter(t -> t.name().equals(TOPIC)).findFirst().orElseThrow().id();
    }
    GatedStore gated = new GatedStore(store);
    KafkaBroker b = new KafkaBroker(config("30000"), gated, Time.SYSTEM);
    CompletableFuture<Void> started = CompletableFuture.runAsync(b::start);
    org.apache.kafka.common.TopicPartition tp = new org.apache.kafka.common.TopicPartition(TOPIC, 0);
    try {
      await(() -> started.isDone() || b.port() > 0, "the listener");
      await(() -> started.isDone() || b.partitions().servedOrOpening(tp), "the partition opening");
      var listOffsets = new org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsTopic().setName(TOPIC)
          .setPartitions(List.of(new org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsPartition()
              .setPartitionIndex(0).setTimestamp(-1)));
      var producers = new org.apache.kafka.common.message.DescribeProducersRequestData.TopicRequestCollection();
      producers.add(new org.apache.kafka.common.message.DescribeProducersRequestData.TopicRequest().setName(TOPIC)
          .setPartitionIndexes(List.of(0)));
      var epochs = new org.apache.kafka.common.message.OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection();
      epochs.add(new org.apache.kafka.common.message.OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic(TOPIC)
          .setPartitions(List.of(new org.apache.kafka.common.message.OffsetForLeaderEpochRequestData.OffsetForLeaderPartition()
              .setPartition(0).setLeaderEpoch(0))));
      List<org.apache.kafka.common.requests.AbstractRequest.Builder<?>> requests = List.of(
          org.apache.kafka.common.requests.ListOffsetsRequest.Builder.forConsumer(false,
              org.apache.kafka.common.IsolationLevel.READ_UNCOMMITTED).setTargetTimes(List.of(listOffsets)),
          new org.apache.kafka.common.requests.DescribeProducersRequest.Builder(
              new org.apache.kafka.common.message.DescribeProducersRequestData().setTopics(producers)),
          org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest.Builder.forConsumer(epochs),
          org.apache.kafka.common.requests.FetchRequest.Builder.forConsumer((short) 13, 0, 1, Map.of(tp,
              new org.apache.kafka.common.requests.FetchRequest.PartitionData(topicId, 0, -1, 1 << 20, Optional.empty()))));
      List<org.apache.kafka.common.protocol.ApiKeys> keys = List.of(org.apache.kafka.common.protocol.ApiKeys.LIST_OFFSETS,
          org.apache.kafka.common.protocol.ApiKeys.DESCRIBE_PRODUCERS, org.apache.kafka.common.protocol.ApiKeys.OFFSET_FOR_LEADER_EPOCH,
          org.apache.kafka.common.protocol.ApiKeys.FETCH);
      short[] versions = {7, 0, 4, 13};
      List<RawConnection> connections = new java.util.ArrayList<>();
      List<CompletableFuture<org.apache.kafka.common.requests.AbstractResponse>> answers = new java.util.ArrayList<>();
      try {
        for (int i = 0; i < requests.size(); i++) {
          RawConnection c = new RawConnection(b.port());
          connections.add(c);
          int id = c.send(requests.get(i), versions[i]);
          var key = keys.get(i);
          short v = versions[i];
          answers.add(CompletableFuture.supplyAsync(() -> {
            try {
              return c.receive(key, v, id);
            } catch (java.io.IOException e) {
              throw new java.io.UncheckedIOException(e);
            }
          }));
        }
        await(() -> b.partitions().waitingFor(tp) >= requests.size(), "every request waiting for the open");
        assertThat(answers).noneMatch(CompletableFuture::isDone);
        gated.release();
        for (int i = 0; i < answers.size(); i++) {
          assertThat(answers.get(i).get(60, TimeUnit.SECONDS).errorCounts()).as("%s after the open", keys.get(i))
              .containsOnlyKeys(org.apache.kafka.common.protocol.Errors.NONE);
        }
      } finally {
        for (RawConnection c : connections) {
          c.close();
        }
      }
      started.get(60, TimeUnit.SECONDS);
    } finally {
      gated.release();
      started.handle((v, e) -> null).get(60, TimeUnit.SECONDS);
      b.close();
    }
  }
}
