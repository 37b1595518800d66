package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.server.TableFiles.Position;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The load of the cluster tests that move partitions and lose brokers: one idempotent acks=all
 * producer writing {@code <topic>-<n>} round-robin over every partition of the given topics (at
 * most 1000 records in flight, paced to about a thousand records a second), and optionally a
 * consumer group over some of them that commits after every poll.
 *
 * <p>It remembers where each acknowledged record is, where each was consumed, and the group's
 * committed offsets; any failed send, any record consumed at two positions, any committed offset
 * that went back is a failure. {@link #mark} and {@link #againAt} time how soon each partition
 * acknowledges again after a move or a loss. {@link #checkLog} reads a topic back: dense offsets,
 * every record once, every acknowledged record at its acknowledged offset.
 */
final class ClusterLoad implements AutoCloseable {

  final Map<String, Position> acked = new ConcurrentHashMap<>();
  final Map<String, Position> consumed = new ConcurrentHashMap<>();
  final Map<TopicPartition, Long> committed = new ConcurrentHashMap<>();
  final List<String> failures = new CopyOnWriteArrayList<>();
  /** Per partition: when a record sent after {@link #mark} was first acknowledged. */
  final Map<TopicPartition, Long> againAt = new ConcurrentHashMap<>();
  private final Map<String, Object> clientConfigs;
  private final List<TopicPartition> partitions = new ArrayList<>();
  private final List<String> consumedTopics;
  private final String group;
  private final Semaphore inFlight = new Semaphore(1000);
  private volatile long markNanos = Long.MAX_VALUE;
  private volatile boolean producing = true;
  private volatile boolean consuming = true;
  private final Thread producer;
  private final Thread consumer;
  private boolean closed;

  /**
   * Starts producing to {@code topics} (name to partition count) and, when {@code group} is not
   * null, consuming {@code consumedTopics} in that group.
   */
  ClusterLoad(String bootstrap, Map<String, Integer> topics, String group, List<String> consumedTopics) {
    this(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap), topics, group, consumedTopics);
  }

  /** As above, with the clients' whole config (bootstrap servers and, for a secured cluster, its security properties). */
  ClusterLoad(Map<String, Object> clientConfigs, Map<String, Integer> topics, String group, List<String> consumedTopics) {
    this.clientConfigs = Map.copyOf(clientConfigs);
    topics.forEach((topic, count) -> {
      for (int p = 0; p < count; p++) {
        partitions.add(new TopicPartition(topic, p));
      }
    });
    partitions.sort(java.util.Comparator.comparing(TopicPartition::toString));
    this.group = group;
    this.consumedTopics = consumedTopics;
    this.producer = Thread.ofPlatform().daemon().name("cluster-load-producer").start(this::produce);
    this.consumer = group == null ? null : Thread.ofPlatform().daemon().name("cluster-load-consumer").start(this::consume);
  }

  /** Only a producer. */
  ClusterLoad(String bootstrap, String topic, int partitionCount) {
    this(bootstrap, Map.of(topic, partitionCount), null, List.of());
  }

  private void produce() {
    Properties p = new Properties();
    p.putAll(clientConfigs);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    p.put(ProducerConfig.LINGER_MS_CONFIG, 2);
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, 16_384);
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 180_000);
    // a request to a paused broker is abandoned after this (the connection stays open, nothing answers)
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 8_000);
    try (KafkaProducer<String, String> kp = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
      for (long i = 0; producing; i++) {
        inFlight.acquire();
        TopicPartition tp = partitions.get((int) (i % partitions.size()));
        String value = tp.topic() + "-" + i;
        long sent = System.nanoTime();
        kp.send(new ProducerRecord<>(tp.topic(), tp.partition(), null, value), (md, e) -> {
          inFlight.release();
          if (e != null) {
            failures.add("send " + value + ": " + e);
            return;
          }
          acked.put(value, new Position(md.partition(), md.offset()));
          if (sent >= markNanos) {
            againAt.putIfAbsent(new TopicPartition(md.topic(), md.partition()), System.nanoTime());
          }
        });
        if (i % 10 == 9) {
          Thread.sleep(10);
        }
      }
      kp.flush();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      failures.add("producer: " + e);
    }
  }

  private void consume() {
    Properties props = new Properties();
    props.putAll(clientConfigs);
    props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000);
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
      c.subscribe(consumedTopics);
      while (consuming) {
        Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
          Position at = new Position(r.partition(), r.offset());
          Position before = consumed.put(r.value(), at);
          if (before != null && !before.equals(at)) {
            failures.add(r.value() + " consumed at " + before + " and at " + at);
          }
          next.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
        }
        if (next.isEmpty()) {
          continue;
        }
        try {
          c.commitSync(next, Duration.ofSeconds(30));
          c.committed(c.assignment(), Duration.ofSeconds(30)).forEach((tp, o) -> {
            if (o != null) {
              Long prev = committed.put(tp, o.offset());
              if (prev != null && o.offset() < prev) {
                failures.add("committed offset of " + tp + " went back from " + prev + " to " + o.offset());
              }
            }
          });
        } catch (RetriableException | CommitFailedException | RebalanceInProgressException e) {
          // the coordinator moved or was lost, or the group rebalanced: the next commit covers these offsets
        }
      }
    } catch (RuntimeException e) {
      failures.add("consumer: " + e);
    }
  }

  /** From now on, acknowledgements of newly sent records count as "acknowledging again". */
  long mark() {
    againAt.clear();
    markNanos = System.nanoTime();
    return markNanos;
  }

  /** Waits until {@code count} more records are acknowledged than now. */
  void awaitMoreAcks(int count) {
    int target = acked.size() + count;
    await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(50)).until(() -> acked.size() >= target);
  }

  /** The acknowledged values of {@code topic}. */
  Set<String> ackedOf(String topic) {
    return acked.keySet().stream().filter(v -> v.startsWith(topic + "-")).collect(Collectors.toSet());
  }

  /** Stops the producer (its last records flushed). */
  void stopProducing() throws InterruptedException {
    producing = false;
    producer.join(TimeUnit.MINUTES.toMillis(4));
  }

  /** Waits until the group consumed every acknowledged record of {@code topic}. */
  void awaitConsumedAll(String topic) {
    Set<String> all = ackedOf(topic);
    await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(500))
        .until(() -> consumed.keySet().containsAll(all));
    all.forEach(v -> assertThat(consumed.get(v)).as("consumed %s", v).isEqualTo(acked.get(v)));
  }

  @Override
  public void close() throws InterruptedException {
    if (closed) {
      return;
    }
    closed = true;
    stopProducing();
    consuming = false;
    if (consumer != null) {
      consumer.join(TimeUnit.MINUTES.toMillis(2));
    }
    System.out.println("ClusterLoad: " + acked.size() + " acknowledged, " + consumed.size() + " consumed, "
        + failures.size() + " failures");
  }

  /**
   * Reads {@code topic} from the start: offsets dense per partition, every record once, every
   * record of this load acknowledged on it at its acknowledged offset, and no record starting
   * with {@code forbiddenPrefix} (null: no such check). Returns the log.
   */
  Map<Position, String> checkLog(String topic, int partitionCount, String forbiddenPrefix) {
    Map<Position, String> log = TableFiles.readLog(clientConfigs, topic, partitionCount);
    Map<String, Position> where = new HashMap<>();
    log.forEach((at, value) -> {
      assertThat(where.put(value, at)).as("%s written once", value).isNull();
      if (forbiddenPrefix != null) {
        assertThat(value).as("a zombie's write at %s", at).doesNotStartWith(forbiddenPrefix);
      }
    });
    Set<String> mine = ackedOf(topic);
    assertThat(mine).as("acknowledged records of %s", topic).isNotEmpty();
    mine.forEach(v -> assertThat(where.get(v)).as("acknowledged %s", v).isEqualTo(acked.get(v)));
    System.out.println("ClusterLoad: " + mine.size() + " acknowledged records of " + topic + " read back exactly once, "
        + log.size() + " records in all");
    return log;
  }
}
