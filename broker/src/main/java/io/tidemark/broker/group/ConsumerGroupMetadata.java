package io.tidemark.broker.group;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The durable form of a consumer group (KIP-848): group and assignment epochs, the assignor, the
 * subscribed topics as the assignment saw them, and each member with its subscription,
 * reconciliation step and target assignment; enough for members to carry on at their epochs after
 * the coordinator restarts or moves. Immutable; written to and read from {@link OffsetLog}.
 */
record ConsumerGroupMetadata(int groupEpoch, int assignmentEpoch, String assignorName,
    Map<String, ConsumerGroup.TopicShape> subscribedTopics, List<MemberState> members) implements StoredGroup {

  /** One member as stored. */
  record MemberState(String memberId, String instanceId, String rackId, String clientId, String clientHost, int rebalanceTimeoutMs,
      List<String> subscribedTopicNames, String subscribedTopicRegex, String serverAssignor, Reconciliation.Step step,
      int previousEpoch, Assignment target) {}

  ConsumerGroupMetadata {
    subscribedTopics = Map.copyOf(subscribedTopics);
    members = List.copyOf(members);
  }

  static ConsumerGroupMetadata of(ConsumerGroup g) {
    List<MemberState> members = new ArrayList<>();
    for (ConsumerMember m : g.members.values()) {
      members.add(new MemberState(m.memberId, m.instanceId, m.rackId, m.clientId, m.clientHost, m.rebalanceTimeoutMs,
          List.copyOf(m.subscribedTopicNames), m.subscribedTopicRegex, m.serverAssignor, m.step, m.previousEpoch,
          g.targetAssignment.getOrDefault(m.memberId, Assignment.EMPTY)));
    }
    return new ConsumerGroupMetadata(g.groupEpoch, g.assignmentEpoch, g.assignorName, new TreeMap<>(g.subscribedTopics), members);
  }
}
