package io.tidemark.broker.share;

import org.apache.kafka.common.Uuid;

/** One share partition: a share group's view of one topic partition (Kafka's "group:topicId:partition"). */
record ShareKey(String group, Uuid topicId, int partition) {

  @Override
  public String toString() {
    return group + ":" + topicId + ":" + partition;
  }
}
