package io.tidemark.server.console;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsResult;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;

/**
 * The console's reads of the cluster over the Kafka protocol, through a Kafka {@code Admin} client on
 * this node's inter-broker listener (with its security settings): groups (listed and described by
 * whichever broker coordinates them), committed offsets and end offsets. This is how the console sees
 * the groups and partitions of other brokers exactly as {@code kafka-consumer-groups} does. Read-only:
 * only list and describe calls are made. Each call waits at most {@value #TIMEOUT_MS} ms; a partition
 * whose end offset cannot be read now is left out of the answer (shown as unknown), not retried.
 *
 * <p>Thread-safe (the Admin client is); created lazily on first use, closed with the console.
 */
final class KafkaReads implements AutoCloseable {

  static final long TIMEOUT_MS = 8_000;
  /** At most this many partitions per end-offset call. */
  static final int MAX_PARTITIONS = 10_000;

  private final Map<String, Object> clientConfigs;
  private Admin admin;
  private boolean closed;

  KafkaReads(String bootstrapServers, Map<String, Object> internalClientConfigs, int nodeId) {
    Map<String, Object> c = new HashMap<>(internalClientConfigs);
    c.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    c.put(AdminClientConfig.CLIENT_ID_CONFIG, "tidemark-console-" + nodeId);
    c.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) TIMEOUT_MS / 2);
    c.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT_MS);
    this.clientConfigs = Map.copyOf(c);
  }

  private synchronized Admin admin() {
    if (closed) {
      throw new Console.Missing("the node is stopping");
    }
    if (admin == null) {
      admin = Admin.create(clientConfigs);
    }
    return admin;
  }

  /** Every group of the cluster (consumer, classic, share, streams). */
  Collection<GroupListing> groups() {
    return await(admin().listGroups().all(), "listing the groups");
  }

  Map<String, ConsumerGroupDescription> describeConsumerGroups(Collection<String> groupIds) {
    if (groupIds.isEmpty()) {
      return Map.of();
    }
    Map<String, ConsumerGroupDescription> out = new HashMap<>();
    admin().describeConsumerGroups(groupIds).describedGroups().forEach((id, f) -> {
      try {
        out.put(id, f.get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
      } catch (ExecutionException | TimeoutException e) {
        // left out: the page shows the group from its listing only
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    return out;
  }

  /** The committed offsets of several consumer groups in one request per coordinator; a group that failed is left out. */
  Map<String, Map<TopicPartition, OffsetAndMetadata>> committed(Collection<String> groupIds) {
    if (groupIds.isEmpty()) {
      return Map.of();
    }
    Map<String, ListConsumerGroupOffsetsSpec> specs = new HashMap<>();
    groupIds.forEach(g -> specs.put(g, new ListConsumerGroupOffsetsSpec()));
    ListConsumerGroupOffsetsResult result = admin().listConsumerGroupOffsets(specs);
    Map<String, Map<TopicPartition, OffsetAndMetadata>> out = new HashMap<>();
    for (String g : groupIds) {
      try {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        result.partitionsToOffsetAndMetadata(g).get(TIMEOUT_MS, TimeUnit.MILLISECONDS).forEach((tp, o) -> {
          if (o != null) {
            offsets.put(tp, o);
          }
        });
        out.put(g, offsets);
      } catch (ExecutionException | TimeoutException e) {
        // left out: the group's lag shows as unknown
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    return out;
  }

  /** The end offsets (high watermarks) of {@code partitions} that could be read now. */
  Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions) {
    if (partitions.isEmpty()) {
      return Map.of();
    }
    List<TopicPartition> asked = partitions.stream().distinct().limit(MAX_PARTITIONS).toList();
    Map<TopicPartition, OffsetSpec> spec = new HashMap<>();
    asked.forEach(tp -> spec.put(tp, OffsetSpec.latest()));
    ListOffsetsResult result = admin().listOffsets(spec);
    Map<TopicPartition, Long> out = new HashMap<>();
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
    for (TopicPartition tp : asked) {
      try {
        long left = Math.max(1, deadline - System.nanoTime());
        out.put(tp, result.partitionResult(tp).get(left, TimeUnit.NANOSECONDS).offset());
      } catch (ExecutionException | TimeoutException e) {
        // unknown now (leader moving, topic just deleted): left out
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    return out;
  }

  private static <T> T await(KafkaFuture<T> future, String what) {
    try {
      return future.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new Console.Missing(what + " failed: " + e.getCause().getMessage());
    } catch (TimeoutException e) {
      throw new Console.Missing(what + " took longer than " + TIMEOUT_MS + " ms");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Console.Missing("interrupted while " + what);
    }
  }

  @Override
  public synchronized void close() {
    closed = true;
    if (admin != null) {
      admin.close(java.time.Duration.ofSeconds(5));
    }
  }
}
