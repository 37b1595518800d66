package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.broker.partition.MemoryStreamStore;
import io.tidemark.stream.api.FetchResult;
import io.tidemark.stream.api.Stream;
import io.tidemark.stream.api.StreamStore;
import io.tidemark.stream.config.Settings;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: a coordinator whose partition's log cannot be read when it opens (the controller or the
 * object store did not answer) keeps the partition loading and tries again; it never serves the
 * partition as if it held no groups or transactional ids. Seen in MoveChaosTest: a failed load of
 * {@code __consumer_offsets} answered OffsetFetch with no offsets, and the consumer started over
 * from the earliest offset (committed offsets went back).
 */
class CoordinatorLoadRetryTest {

  @TempDir
  Path dir;

  @Test
  void committedOffsetsAndOpenTransactionsSurviveLoadsThatFailBeforeTheyRead() throws Exception {
    FlakyReads store = new FlakyReads(new MemoryStreamStore(1L << 30), Set.of("__consumer_offsets", "__transaction_state"));
    Map<TopicPartition, OffsetAndMetadata> committed = Map.of(new TopicPartition("orders", 0), new OffsetAndMetadata(42),
        new TopicPartition("orders", 1), new OffsetAndMetadata(7));
    long producerId;
    KafkaBroker broker = start(store);
    try (Admin admin = admin(broker);
        KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            broker.bootstrapServers(), ProducerConfig.TRANSACTIONAL_ID_CONFIG, "open-txn"), new StringSerializer(),
            new StringSerializer())) {
      admin.createTopics(List.of(new NewTopic("orders", 2, (short) 1))).all().get(1, TimeUnit.MINUTES);
      admin.alterConsumerGroupOffsets("g", committed).all().get(1, TimeUnit.MINUTES);
      producer.initTransactions();
      producer.beginTransaction();
      producer.send(new ProducerRecord<>("orders", 0, "k", "v")).get(1, TimeUnit.MINUTES);
      producerId = admin.describeTransactions(List.of("open-txn")).description("open-txn").get(1, TimeUnit.MINUTES)
          .producerId();
      producer.close(java.time.Duration.ZERO); // the transaction stays open at the coordinator
    } finally {
      broker.close();
    }

    // the next three reads of the coordinators' logs fail, as when the controller is unavailable
    store.failNextReads(3);
    broker = start(store);
    try (Admin admin = admin(broker)) {
      assertThat(admin.listConsumerGroupOffsets("g").partitionsToOffsetAndMetadata().get(1, TimeUnit.MINUTES))
          .containsExactlyInAnyOrderEntriesOf(committed);
      TransactionDescription txn = admin.describeTransactions(List.of("open-txn")).description("open-txn")
          .get(1, TimeUnit.MINUTES);
      assertThat(txn.producerId()).isEqualTo(producerId);
      assertThat(txn.topicPartitions()).containsExactly(new TopicPartition("orders", 0));
      assertThat(store.failuresLeft()).as("every planned read failure happened").isZero();
    } finally {
      broker.close();
    }
  }

  /**
   * Goal: an offset commit whose write fails because the offsets partition's stream closed under it
   * (the partition moving away) is answered with a coordinator error the consumer retries, never
   * with NOT_LEADER_OR_FOLLOWER, which the consumer does not retry ("Unexpected error in commit";
   * MoveChaosTest cycle 54). The stream's append fails both ways a closing stream can fail it: by
   * throwing, and with a failed future.
   */
  @Test
  void aCommitWhoseWriteFailsAsTheOffsetsPartitionClosesGetsARetriableCoordinatorError() throws Exception {
    for (FlakyReads.AppendFailure failure : List.of(FlakyReads.AppendFailure.THROWN, FlakyReads.AppendFailure.FAILED_FUTURE)) {
      FlakyReads store = new FlakyReads(new MemoryStreamStore(1L << 30), Set.of("__consumer_offsets"));
      KafkaBroker broker = start(store, dir.resolve(failure.name()));
      try (Admin admin = admin(broker)) {
        admin.createTopics(List.of(new NewTopic("orders", 1, (short) 1))).all().get(1, TimeUnit.MINUTES);
        store.failAppends(failure);
        try (org.apache.kafka.clients.consumer.KafkaConsumer<String, String> consumer =
                 new org.apache.kafka.clients.consumer.KafkaConsumer<>(Map.of(
                     org.apache.kafka.clients.consumer.ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
                     org.apache.kafka.clients.consumer.ConsumerConfig.GROUP_ID_CONFIG, "closing"),
                     new org.apache.kafka.common.serialization.StringDeserializer(),
                     new org.apache.kafka.common.serialization.StringDeserializer())) {
          consumer.assign(List.of(new TopicPartition("orders", 0)));
          // a retriable error: commitSync keeps trying until its timeout (a non-retriable one throws KafkaException)
          org.assertj.core.api.Assertions.assertThatThrownBy(() -> consumer.commitSync(
                  Map.of(new TopicPartition("orders", 0), new OffsetAndMetadata(5)), java.time.Duration.ofSeconds(3)))
              .as("append failure %s", failure)
              .isInstanceOf(org.apache.kafka.common.errors.TimeoutException.class);
        }
      } finally {
        broker.close();
      }
    }
  }

  private KafkaBroker start(StreamStore store) {
    return start(store, dir);
  }

  private static KafkaBroker start(StreamStore store, Path dataDir) {
    Settings s = new Settings(Map.of("kafka.listener.port", "0", "kafka.listener.host", "127.0.0.1",
        "kafka.advertised.host", "127.0.0.1", "kafka.data.dir", dataDir.toString(), "kafka.group.initial.rebalance.delay.ms", "0"));
    KafkaBroker b = new KafkaBroker(new BrokerConfig(s), store, Time.SYSTEM);
    b.start();
    return b;
  }

  private static Admin admin(KafkaBroker b) {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, b.bootstrapServers(),
        AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 60_000));
  }

  /**
   * A stream store whose data-stream reads of some topics fail while planned failures are left, and
   * whose appends to them fail as a closing stream's do while {@link #failAppends} says so.
   */
  private static final class FlakyReads implements StreamStore {
    enum AppendFailure { NONE, THROWN, FAILED_FUTURE }

    private final MemoryStreamStore delegate;
    private final Set<String> topics;
    private final Set<Long> flaky = ConcurrentHashMap.newKeySet();
    private final AtomicInteger failures = new AtomicInteger();
    private volatile AppendFailure appendFailure = AppendFailure.NONE;

    void failAppends(AppendFailure how) {
      appendFailure = how;
    }

    FlakyReads(MemoryStreamStore delegate, Set<String> topics) {
      this.delegate = delegate;
      this.topics = topics;
    }

    void failNextReads(int n) {
      failures.set(n);
    }

    int failuresLeft() {
      return failures.get();
    }

    @Override
    public CompletableFuture<Long> createStream(Map<String, String> tags) {
      return delegate.createStream(tags).thenApply(id -> {
        if (topics.contains(tags.get("topic")) && "data".equals(tags.get("kind"))) {
          flaky.add(id);
        }
        return id;
      });
    }

    @Override
    public CompletableFuture<Stream> openStream(long streamId, long epoch) {
      return delegate.openStream(streamId, epoch).thenApply(this::wrap);
    }

    @Override
    public Optional<Stream> stream(long streamId) {
      return delegate.stream(streamId).map(this::wrap);
    }

    @Override
    public void close() {
      delegate.close();
    }

    private Stream wrap(Stream s) {
      if (!flaky.contains(s.streamId())) {
        return s;
      }
      return new Stream() {
        @Override
        public long streamId() {
          return s.streamId();
        }

        @Override
        public long epoch() {
          return s.epoch();
        }

        @Override
        public long startOffset() {
          return s.startOffset();
        }

        @Override
        public long nextOffset() {
          return s.nextOffset();
        }

        @Override
        public CompletableFuture<Long> append(int recordCount, ByteBuffer payload) {
          switch (appendFailure) {
            case THROWN -> throw new io.tidemark.stream.api.StreamClosedException("stream " + s.streamId() + " is closing");
            case FAILED_FUTURE -> {
              return CompletableFuture.failedFuture(
                  new io.tidemark.stream.api.StreamClosedException("stream " + s.streamId() + " is closing"));
            }
            default -> {
              return s.append(recordCount, payload);
            }
          }
        }

        @Override
        public CompletableFuture<Long> appendOwned(int recordCount, ByteBuffer payload) {
          return appendFailure == AppendFailure.NONE ? s.appendOwned(recordCount, payload) : append(recordCount, payload);
        }

        @Override
        public CompletableFuture<FetchResult> fetch(long startOffset, long endOffset, int maxBytes) {
          if (failures.getAndUpdate(n -> Math.max(n - 1, 0)) > 0) {
            return CompletableFuture.failedFuture(new IOException("planned read failure of stream " + s.streamId()));
          }
          return s.fetch(startOffset, endOffset, maxBytes);
        }

        @Override
        public CompletableFuture<Void> trim(long newStartOffset) {
          return s.trim(newStartOffset);
        }

        @Override
        public CompletableFuture<Void> close() {
          return s.close();
        }
      };
    }
  }
}
