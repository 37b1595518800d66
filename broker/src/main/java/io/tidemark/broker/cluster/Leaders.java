package io.tidemark.broker.cluster;

import io.tidemark.broker.partition.Partitions;
import io.tidemark.broker.topic.TopicInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * Whether a partition's leader can serve it now: a live broker other than this one, or this
 * broker with the partition open. Stateless apart from its views; callable from any thread.
 */
final class Leaders {

  private final ClusterView cluster;
  private final Partitions partitions;

  Leaders(ClusterView cluster, Partitions partitions) {
    this.cluster = cluster;
    this.partitions = partitions;
  }

  boolean available(String topic, TopicInfo.PartitionInfo p) {
    if (p.leader() == cluster.nodeId()) {
      return partitions.get(new TopicPartition(topic, p.partition())).isPresent();
    }
    return p.leader() >= 0 && cluster.broker(p.leader()).isPresent();
  }
}
