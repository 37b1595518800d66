package io.tidemark.table.control;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control log of a broker that does not lead {@value ControlLog#TOPIC}: appends go through an
 * idempotent producer with {@code acks=all} (so an append completes once the leader made it
 * durable), reads through a consumer assigned to partition 0 that long-polls for new messages,
 * trims through the Admin API. Clients follow the partition's leader as any Kafka client does.
 *
 * <p>Threading: appends and trims from any thread; reads and offset lookups share one consumer,
 * so they are serialized on this object's monitor (the node's control reader is the frequent
 * caller; coordinators read only while recovering).
 */
public final class KafkaControlLog implements ControlLog, AutoCloseable {

  private static final TopicPartition PARTITION = new TopicPartition(TOPIC, 0);
  private static final Duration CLOSE_WAIT = Duration.ofSeconds(5);
  private static final Logger LOG = LoggerFactory.getLogger(KafkaControlLog.class);
  /** How the consumer words a fetch answered with CORRUPT_MESSAGE (kafka-clients' FetchCollector). */
  static final String CORRUPT_FETCH = "Encountered corrupt message when fetching offset";

  private final KafkaProducer<byte[], byte[]> producer;
  private final KafkaConsumer<byte[], byte[]> consumer;
  private final Admin admin;
  private final Duration pollWait;
  private final Duration timeout;
  private long position = -1;

  /**
   * @param bootstrapServers any broker of the cluster (this broker's own listener is fine)
   * @param clientId prefix of the clients' ids, naming this node
   * @param pollWait how long a read waits for new messages when none are there
   * @param timeout bound of every blocking client call
   */
  public KafkaControlLog(String bootstrapServers, String clientId, int maxReadBytes, Duration pollWait, Duration timeout) {
    this(bootstrapServers, Map.of(), clientId, maxReadBytes, pollWait, timeout);
  }

  /** With {@code security}: the clients' security properties (security.protocol, ssl.*, sasl.*) for the broker's listener. */
  public KafkaControlLog(String bootstrapServers, Map<String, Object> security, String clientId, int maxReadBytes,
      Duration pollWait, Duration timeout) {
    this.pollWait = pollWait;
    this.timeout = timeout;
    Properties p = new Properties();
    p.putAll(security);
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId + "-producer");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Long.toString(timeout.toMillis()));
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Long.toString(Math.max(timeout.toMillis(), 30_000)));
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Long.toString(Math.min(timeout.toMillis(), 30_000)));
    this.producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    Properties c = new Properties();
    c.putAll(security);
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    c.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId + "-consumer");
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"); // a trimmed position reads from the log start
    c.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, Integer.toString(maxReadBytes));
    c.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, Integer.toString(maxReadBytes));
    c.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, Long.toString(pollWait.toMillis()));
    this.consumer = new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    consumer.assign(List.of(PARTITION));
    Map<String, Object> a = new java.util.HashMap<>(security);
    a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    a.put(AdminClientConfig.CLIENT_ID_CONFIG, clientId + "-admin");
    a.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) Math.max(timeout.toMillis(), 1_000));
    this.admin = Admin.create(a);
  }

  @Override
  public CompletableFuture<Long> append(ControlMessage message) {
    CompletableFuture<Long> done = new CompletableFuture<>();
    try {
      producer.send(new ProducerRecord<>(TOPIC, 0, ControlCodec.key(message), ControlCodec.encode(message)),
          (metadata, error) -> {
            if (error != null) {
              done.completeExceptionally(error);
            } else {
              done.complete(metadata.offset());
            }
          });
    } catch (RuntimeException e) {
      done.completeExceptionally(e);
    }
    return done;
  }

  @Override
  public synchronized long startOffset() {
    return consumer.beginningOffsets(List.of(PARTITION), timeout).get(PARTITION);
  }

  @Override
  public synchronized long endOffset() {
    return consumer.endOffsets(List.of(PARTITION), timeout).get(PARTITION);
  }

  @Override
  public synchronized CompletableFuture<Page> read(long offset) {
    try {
      if (position != offset) {
        consumer.seek(PARTITION, offset);
      }
      List<Entry> entries = new ArrayList<>();
      long next = offset;
      for (ConsumerRecord<byte[], byte[]> r : consumer.poll(pollWait).records(PARTITION)) {
        if (r.offset() >= offset && r.value() != null) {
          PartitionControlLog.decodeInto(r.offset(), r.value(), entries);
        }
        next = Math.max(next, r.offset() + 1);
      }
      // the consumer's position also moves past control batches and a trimmed prefix
      next = Math.max(next, consumer.position(PARTITION, timeout));
      position = next;
      return CompletableFuture.completedFuture(new Page(entries, next));
    } catch (KafkaException e) {
      if (e.getMessage() == null || !e.getMessage().startsWith(CORRUPT_FETCH)) {
        position = -1;
        return CompletableFuture.failedFuture(e);
      }
      // The leader reports damaged data at the position (CORRUPT_MESSAGE); Kafka says not where it ends, so step over
      // it one offset at a time: bad bytes must not stop the table topics.
      LOG.warn("{}: skipping offset {} of {}", e.getMessage(), offset, TOPIC);
      position = offset + 1;
      consumer.seek(PARTITION, position);
      return CompletableFuture.completedFuture(new Page(List.of(), position));
    } catch (RuntimeException e) {
      position = -1;
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletableFuture<Long> trimBefore(long offset) {
    return admin.deleteRecords(Map.of(PARTITION, RecordsToDelete.beforeOffset(offset))).lowWatermarks().get(PARTITION)
        .toCompletionStage().toCompletableFuture().thenApply(w -> w.lowWatermark());
  }

  /** Closes the clients; the table topics here are stopped already, so nothing waits for them. */
  @Override
  public void close() {
    producer.close(CLOSE_WAIT); // the leader of the control topic may be gone already (a cluster stopping)
    synchronized (this) {
      consumer.close(CloseOptions.timeout(Duration.ZERO)); // no group to leave
    }
    admin.close(Duration.ZERO);
  }
}
