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
 * open, up to {@code kafka.produce.opening.wait.ms}, instead of answering NOT_LEADER_OR_FOLLOWER.
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
}
