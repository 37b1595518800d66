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
   * Where one partition's streams are, its current leader epoch and its leader's node id (-1: not
   * assigned yet; a single node assigns itself at start).
   */
  public record PartitionInfo(int partition, long dataStreamId, long metaStreamId, int leaderEpoch, int leader) {

    /** A partition without an assigned leader. */
    public PartitionInfo(int partition, long dataStreamId, long metaStreamId, int leaderEpoch) {
      this(partition, dataStreamId, metaStreamId, leaderEpoch, -1);
    }

    /** The same partition led by {@code node} from {@code epoch} on. */
    public PartitionInfo ledBy(int node, int epoch) {
      return new PartitionInfo(partition, dataStreamId, metaStreamId, epoch, node);
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
