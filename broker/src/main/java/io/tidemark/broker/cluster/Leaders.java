package io.tidemark.broker.cluster;

import io.tidemark.broker.partition.Partitions;
import io.tidemark.broker.topic.TopicInfo;
import java.util.ArrayList;
import java.util.List;
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

  /** The replicas to report: the assignment (during a reassignment, the target then those being removed). */
  List<Integer> replicas(TopicInfo.PartitionInfo p) {
    List<Integer> all = p.allReplicas();
    return all.isEmpty() ? List.of(p.leader() >= 0 ? p.leader() : cluster.nodeId()) : all;
  }

  /**
   * The in-sync replicas to report: every live replica while the leader serves (all replicas read
   * the same streams, so any live one can take over without losing data), none otherwise.
   */
  List<Integer> isr(TopicInfo.PartitionInfo p, boolean led) {
    if (!led) {
      return List.of();
    }
    List<Integer> out = new ArrayList<>();
    out.add(p.leader());
    for (int r : replicas(p)) {
      if (r != p.leader() && (r == cluster.nodeId() || cluster.broker(r).isPresent())) {
        out.add(r);
      }
    }
    return out;
  }

  boolean available(String topic, TopicInfo.PartitionInfo p) {
    if (p.leader() == cluster.nodeId()) {
      return partitions.servedOrOpening(new TopicPartition(topic, p.partition()));
    }
    return p.leader() >= 0 && cluster.broker(p.leader()).isPresent();
  }
}
