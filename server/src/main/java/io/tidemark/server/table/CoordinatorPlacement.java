package io.tidemark.server.table;

import io.tidemark.broker.KafkaBroker;
import io.tidemark.broker.topic.TopicInfo;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;

/**
 * Where a table topic's coordinator runs and whose workers it waits for. The rule: the coordinator
 * runs on the broker leading partition 0; the workers are the brokers leading any partition. On a
 * single node that is this broker for every topic; the controller's leadership view replaces the
 * local lookup when brokers are many. Stateless.
 */
final class CoordinatorPlacement {

  private final KafkaBroker broker;
  private final int nodeId;

  CoordinatorPlacement(KafkaBroker broker, int nodeId) {
    this.broker = broker;
    this.nodeId = nodeId;
  }

  boolean coordinatesHere(TopicInfo topic) {
    return broker.partitionLog(new TopicPartition(topic.name(), 0)).isPresent();
  }

  /** The nodes whose workers answer the coordinator's rounds. */
  Set<Integer> workerNodes(TopicInfo topic) {
    boolean leadsAny = topic.partitions().stream()
        .anyMatch(p -> broker.partitionLog(new TopicPartition(topic.name(), p.partition())).isPresent());
    return leadsAny ? Set.of(nodeId) : Set.of();
  }
}
