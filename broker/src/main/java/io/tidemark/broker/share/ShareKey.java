package io.tidemark.broker.share;

import org.apache.kafka.common.Uuid;

/** One share partition: a share group's view of one topic partition (Kafka's "group:topicId:partition"). */
record ShareKey(String group, Uuid topicId, int partition) {

  /** Kafka's share-coordinator key "group:topicId:partition"; IllegalArgumentException when malformed. */
  static ShareKey parse(String key) {
    int last = key == null ? -1 : key.lastIndexOf(':');
    int middle = last <= 0 ? -1 : key.lastIndexOf(':', last - 1);
    if (middle <= 0) {
      throw new IllegalArgumentException("share coordinator key " + key + " is not group:topicId:partition");
    }
    try {
      return new ShareKey(key.substring(0, middle), Uuid.fromString(key.substring(middle + 1, last)),
          Integer.parseInt(key.substring(last + 1)));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("share coordinator key " + key + " is not group:topicId:partition", e);
    }
  }

  @Override
  public String toString() {
    return group + ":" + topicId + ":" + partition;
  }
}
