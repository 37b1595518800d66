package io.tidemark.registry.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The schema log read over the Kafka protocol, for a registry on a node that does not lead
 * {@code _schemas} partition 0: a plain {@link KafkaConsumer} assigned to that partition (no group),
 * so the node follows the leader wherever it is. Appends are refused, since writes are forwarded to
 * the leading node's registry (see {@code io.tidemark.registry.cluster.WriteLeader}).
 *
 * <p>Thread-safe by mutual exclusion: the consumer is single-threaded, every method holds this
 * store's lock. Each call blocks for at most the timeout given at construction.
 */
public final class ConsumerSchemaStore implements SchemaStore {
  private static final TopicPartition PARTITION = new TopicPartition(PartitionSchemaStore.TOPIC, 0);
  private static final Duration POLL = Duration.ofMillis(100);

  private final KafkaConsumer<byte[], byte[]> consumer;
  private final Duration timeout;
  private long position = -1;

  /** {@code bootstrapServers} of the cluster; {@code extra} consumer settings (security, client id) win over the defaults. */
  public ConsumerSchemaStore(String bootstrapServers, Map<String, Object> extra, Duration timeout) {
    Map<String, Object> props = new HashMap<>();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 1000);
    props.put(ConsumerConfig.CLIENT_ID_CONFIG, "tidemark-schema-registry-follower");
    props.putAll(extra);
    this.consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    this.consumer.assign(Set.of(PARTITION));
    this.timeout = timeout;
  }

  @Override
  public long append(byte[] key, byte[] value) {
    throw new SchemaStoreException("this node does not lead " + PARTITION + "; writes go to the registry of the node that does");
  }

  @Override
  public synchronized List<StoredRecord> read(long fromOffset, int maxRecords) {
    List<StoredRecord> out = new ArrayList<>();
    try {
      long end = endOffset();
      if (fromOffset >= end) {
        return out;
      }
      if (position != fromOffset) {
        consumer.seek(PARTITION, fromOffset);
        position = fromOffset;
      }
      long deadline = System.nanoTime() + timeout.toNanos();
      while (out.isEmpty() && position < end) {
        if (System.nanoTime() > deadline) {
          throw new SchemaStoreException("reading " + PARTITION + " from offset " + position + " found nothing within "
              + timeout.toMillis() + " ms although the log ends at " + end);
        }
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(POLL).records(PARTITION)) {
          if (r.offset() >= fromOffset && out.size() < maxRecords) {
            out.add(new StoredRecord(r.offset(), r.key(), r.value()));
          }
        }
        position = consumer.position(PARTITION, timeout);
      }
      if (!out.isEmpty() && out.get(out.size() - 1).offset() + 1 != position) {
        position = -1; // records beyond maxRecords were dropped: seek again on the next read
      }
      return out;
    } catch (KafkaException e) {
      position = -1;
      throw new SchemaStoreException("reading " + PARTITION + " from offset " + fromOffset + " failed: " + e, e);
    }
  }

  @Override
  public synchronized long endOffset() {
    try {
      Long end = consumer.endOffsets(Set.of(PARTITION), timeout).get(PARTITION);
      return end == null ? 0 : end;
    } catch (KafkaException e) {
      throw new SchemaStoreException("cannot read the end of " + PARTITION + ": " + e, e);
    }
  }

  @Override
  public synchronized void close() {
    consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
  }
}
