package io.tidemark.broker.topic;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.Uuid;

/**
 * A topic as the registry knows it: its permanent id (never reused after deletion), whether it is
 * internal, the configs set on it (defaults are not stored) and its partitions.
 */
public record TopicInfo(String name, Uuid id, boolean internal, Map<String, String> configs, List<PartitionInfo> partitions) {

  /**
   * Where one partition's streams are, its current leader epoch, its leader's node id (-1: not
   * assigned yet; a single node assigns itself at start), its replica assignment (the brokers that
   * may lead it, preferred leader first; all of them read the same streams, only the leader serves)
   * and, while a reassignment runs, the assignment before it ({@code previousReplicas}; empty
   * otherwise).
   */
  public record PartitionInfo(int partition, long dataStreamId, long metaStreamId, int leaderEpoch, int leader,
      List<Integer> replicas, List<Integer> previousReplicas) {

    public PartitionInfo {
      replicas = List.copyOf(replicas);
      previousReplicas = List.copyOf(previousReplicas);
    }

    /** A partition whose assignment is its leader alone (none without a leader), not being reassigned. */
    public PartitionInfo(int partition, long dataStreamId, long metaStreamId, int leaderEpoch, int leader) {
      this(partition, dataStreamId, metaStreamId, leaderEpoch, leader, leader < 0 ? List.of() : List.of(leader), List.of());
    }

    /** A partition without an assigned leader. */
    public PartitionInfo(int partition, long dataStreamId, long metaStreamId, int leaderEpoch) {
      this(partition, dataStreamId, metaStreamId, leaderEpoch, -1);
    }

    /**
     * The same partition led by {@code node} from {@code epoch} on; the assignment is kept when it
     * includes {@code node}, else it becomes {@code node} alone.
     */
    public PartitionInfo ledBy(int node, int epoch) {
      return new PartitionInfo(partition, dataStreamId, metaStreamId, epoch, node,
          replicas.contains(node) ? replicas : List.of(node), previousReplicas);
    }

    /** Whether a reassignment of this partition is in progress. */
    public boolean reassigning() {
      return !previousReplicas.isEmpty();
    }

    /** The replicas a reassignment adds (empty when none runs). */
    public List<Integer> addingReplicas() {
      return reassigning() ? replicas.stream().filter(r -> !previousReplicas.contains(r)).toList() : List.of();
    }

    /** The replicas a reassignment removes (empty when none runs). */
    public List<Integer> removingReplicas() {
      return previousReplicas.stream().filter(r -> !replicas.contains(r)).toList();
    }

    /** The replicas as Kafka reports them during a reassignment: the target first, then those being removed. */
    public List<Integer> allReplicas() {
      List<Integer> all = new java.util.ArrayList<>(replicas);
      all.addAll(removingReplicas());
      return all;
    }
  }

  public TopicInfo {
    configs = Map.copyOf(configs);
    partitions = List.copyOf(partitions);
  }

  public TopicInfo withConfigs(Map<String, String> newConfigs) {
    return new TopicInfo(name, id, internal, newConfigs, partitions);
  }

  public TopicInfo withPartitions(List<PartitionInfo> newPartitions) {
    return new TopicInfo(name, id, internal, configs, newPartitions);
  }
}
