package io.tidemark.broker.offset;

import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.partition.Partitions;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.broker.topic.TopicRegistry;
import java.util.Optional;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;

/**
 * Resolves a topic name and partition index to an open partition, or to the Kafka error a
 * partition-level response should carry (unknown topic, not led here, fenced or unknown leader
 * epoch). Stateless apart from its views.
 */
public final class PartitionLookup {

  /** The partition, or the error to report instead. */
  public record Found(PartitionLog log, Errors error) {}

  private final TopicRegistry registry;
  private final Partitions partitions;

  public PartitionLookup(TopicRegistry registry, Partitions partitions) {
    this.registry = registry;
    this.partitions = partitions;
  }

  public Found find(String topic, int partition, int currentLeaderEpoch) {
    Optional<TopicInfo> t = registry.topic(topic);
    if (t.isEmpty() || partition < 0 || partition >= t.get().partitions().size()) {
      return new Found(null, Errors.UNKNOWN_TOPIC_OR_PARTITION);
    }
    Optional<PartitionLog> log = partitions.get(new TopicPartition(topic, partition));
    if (log.isEmpty()) {
      return new Found(null, Errors.NOT_LEADER_OR_FOLLOWER);
    }
    int epoch = log.get().leaderEpoch();
    if (currentLeaderEpoch >= 0 && currentLeaderEpoch < epoch) {
      return new Found(null, Errors.FENCED_LEADER_EPOCH);
    }
    if (currentLeaderEpoch > epoch) {
      return new Found(null, Errors.UNKNOWN_LEADER_EPOCH);
    }
    return new Found(log.get(), Errors.NONE);
  }
}
