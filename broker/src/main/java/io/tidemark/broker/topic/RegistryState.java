package io.tidemark.broker.topic;

import java.util.Map;

/**
 * Everything the broker keeps durably about topics on a single node, as one immutable value:
 * the cluster id, the topics by name and the next free producer-id block.
 */
public record RegistryState(String clusterId, long nextProducerIdBlock, Map<String, TopicInfo> topics) {

  public RegistryState {
    topics = Map.copyOf(topics);
  }
}
