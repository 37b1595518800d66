package io.tidemark.broker.group;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.kafka.common.Uuid;

/**
 * A server-side partition assignor of the consumer group protocol (KIP-848), chosen by name
 * through the heartbeat's {@code ServerAssignor} ({@code group.remote.assignor} on the client).
 * Implementations are pure functions of their input: no state, callable from any thread.
 */
interface ConsumerAssignor {

  /** What an assignment is computed from. */
  record Input(
      /** Member id → the topic ids it is subscribed to (only topics that exist), sorted by member id. */
      SortedMap<String, Set<Uuid>> subscriptions,
      /** Partition count of every subscribed topic. */
      Map<Uuid, Integer> partitionCounts,
      /** The previous target assignment, for assignors that keep partitions where they are. */
      Map<String, Assignment> previous) {

    /** Topic id → its subscribers, in member-id order. */
    Map<Uuid, List<String>> subscribersByTopic() {
      Map<Uuid, List<String>> out = new TreeMap<>();
      subscriptions.forEach((member, topics) -> topics.forEach(t -> out.computeIfAbsent(t, x -> new ArrayList<>()).add(member)));
      return out;
    }

    /** The result for every member of the input: its partitions in {@code byMember}, or none. */
    Map<String, Assignment> result(Map<String, Map<Uuid, List<Integer>>> byMember) {
      Map<String, Assignment> out = new HashMap<>();
      subscriptions.keySet().forEach(m -> out.put(m, Assignment.of(byMember.getOrDefault(m, Map.of()))));
      return out;
    }
  }

  String name();

  /** Member id → its target assignment; every member of the input has an entry. */
  Map<String, Assignment> assign(Input input);
}
