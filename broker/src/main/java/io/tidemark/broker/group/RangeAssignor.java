package io.tidemark.broker.group;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.Uuid;

/**
 * The {@code range} assignor: for each topic, its subscribers in member-id order each take a
 * contiguous range of partitions; the first {@code partitions % subscribers} take one more. Members
 * subscribed to the same topics with the same partition counts get the same partition numbers of
 * each (co-partitioning). Stateless.
 */
final class RangeAssignor implements ConsumerAssignor {

  static final String NAME = "range";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Map<String, Assignment> assign(Input input) {
    Map<Uuid, List<String>> subscribers = input.subscribersByTopic();
    Map<String, Map<Uuid, List<Integer>>> out = new HashMap<>();
    subscribers.forEach((topic, members) -> {
      int partitions = input.partitionCounts().getOrDefault(topic, 0);
      int each = partitions / members.size();
      int extra = partitions % members.size();
      int next = 0;
      for (int i = 0; i < members.size(); i++) {
        int count = each + (i < extra ? 1 : 0);
        List<Integer> range = new ArrayList<>(count);
        for (int p = next; p < next + count; p++) {
          range.add(p);
        }
        next += count;
        out.computeIfAbsent(members.get(i), m -> new TreeMap<>()).put(topic, range);
      }
    });
    return input.result(out);
  }
}
