package io.tidemark.server.table;

import io.tidemark.broker.KafkaBroker;
import io.tidemark.broker.topic.TopicInfo;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.TopicPartition;

/**
 * Where a table topic's coordinator runs and whose workers it waits for. The rule: the coordinator
 * runs on the broker leading partition 0; the workers are the brokers leading any partition, as
 * the cluster's metadata says. Stateless.
 */
final class CoordinatorPlacement {

  private final KafkaBroker broker;
  CoordinatorPlacement(KafkaBroker broker) {
    this.broker = broker;
  }

  boolean coordinatesHere(TopicInfo topic) {
    return broker.partitionLog(new TopicPartition(topic.name(), 0)).isPresent();
  }

  /** The nodes whose workers answer the coordinator's rounds: the leaders of the topic's partitions. */
  Set<Integer> workerNodes(TopicInfo topic) {
    Set<Integer> nodes = new TreeSet<>();
    for (TopicInfo.PartitionInfo p : topic.partitions()) {
      broker.leaderOf(topic.name(), p.partition()).ifPresent(nodes::add);
    }
    return Set.copyOf(nodes);
  }
}
