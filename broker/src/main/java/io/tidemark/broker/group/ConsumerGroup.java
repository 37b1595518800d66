package io.tidemark.broker.group;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

/**
 * A consumer group of the KIP-848 protocol: members, the group epoch (bumped whenever membership,
 * subscriptions or the subscribed topics change), the target assignment computed for the
 * assignment epoch, who holds each partition, and the group's committed offsets.
 *
 * <p>States (derived, as Kafka reports them): Empty (no members), Assigning (the target is older
 * than the group epoch), Reconciling (some member has not reached the target), Stable.
 * Owned by the coordinator thread; no locking.
 */
final class ConsumerGroup {

  /** One partition of a topic, by topic id. */
  record PartitionKey(Uuid topic, int partition) {}

  /** A subscribed topic as the assignment saw it. */
  record TopicShape(Uuid id, int partitions) {}

  final String groupId;
  int groupEpoch;
  int assignmentEpoch;
  final LinkedHashMap<String, ConsumerMember> members = new LinkedHashMap<>();
  final Map<String, String> staticMembers = new HashMap<>();
  Map<String, Assignment> targetAssignment = new HashMap<>();
  /** Subscribed topic name → its id and partition count, as last seen; a change bumps the group epoch. */
  Map<String, TopicShape> subscribedTopics = Map.of();
  String assignorName;
  private final Map<PartitionKey, String> holders = new HashMap<>();
  private final Map<String, java.util.Set<String>> resolvedRegex = new HashMap<>();
  private Object resolvedAgainst;
  final Map<TopicPartition, ClassicGroup.Committed> offsets;
  /** What was last handed to the offsets log for this group (null: nothing, or the write failed). */
  ConsumerGroupMetadata stored;

  ConsumerGroup(String groupId, Map<TopicPartition, ClassicGroup.Committed> offsets) {
    this.groupId = groupId;
    this.offsets = offsets;
  }

  String state() {
    if (members.isEmpty()) {
      return "Empty";
    }
    if (assignmentEpoch < groupEpoch) {
      return "Assigning";
    }
    for (ConsumerMember m : members.values()) {
      if (!m.leftStatic() && (m.epoch() != assignmentEpoch || m.step.state() != Reconciliation.State.STABLE)) {
        return "Reconciling";
      }
    }
    return "Stable";
  }

  /** The topic names {@code regex} matches, computed once per topics version (at most one entry per member's regex). */
  java.util.Set<String> resolveRegex(String regex, Object topicsVersion, java.util.function.Supplier<java.util.Set<String>> resolve) {
    if (resolvedAgainst != topicsVersion) {
      resolvedRegex.clear();
      resolvedAgainst = topicsVersion;
    }
    if (resolvedRegex.size() > members.size()) {
      resolvedRegex.clear();
    }
    return resolvedRegex.computeIfAbsent(regex, r -> resolve.get());
  }

  /** Whether {@code memberId} is not the member holding the partition, and some member does. */
  boolean heldByOther(String memberId, Uuid topic, int partition) {
    String holder = holders.get(new PartitionKey(topic, partition));
    return holder != null && !holder.equals(memberId);
  }

  /** Moves a member to its next step, releasing what it no longer holds and claiming what it now holds. */
  void apply(ConsumerMember m, Reconciliation.Step next) {
    Assignment before = m.held();
    m.moveTo(next);
    Assignment after = m.held();
    before.minus(after).forEach((t, p) -> holders.remove(new PartitionKey(t, p), m.memberId));
    after.minus(before).forEach((t, p) -> {
      String previous = holders.putIfAbsent(new PartitionKey(t, p), m.memberId);
      if (previous != null && !previous.equals(m.memberId)) {
        throw new IllegalStateException("group " + groupId + ": partition " + t + "-" + p + " given to " + m.memberId
            + " while " + previous + " holds it");
      }
    });
  }

  /** Removes a member, releasing its partitions. */
  void remove(ConsumerMember m) {
    m.cancelTimers();
    members.remove(m.memberId, m);
    if (m.instanceId != null) {
      staticMembers.remove(m.instanceId, m.memberId);
    }
    m.held().forEach((t, p) -> holders.remove(new PartitionKey(t, p), m.memberId));
    targetAssignment.remove(m.memberId);
  }

  /** Puts {@code replacement} in the place of the static member {@code old}: same subscription, step and partitions. */
  void replace(ConsumerMember old, ConsumerMember replacement) {
    old.cancelTimers();
    members.remove(old.memberId);
    replacement.step = old.step;
    replacement.previousEpoch = old.previousEpoch;
    replacement.rackId = old.rackId;
    replacement.rebalanceTimeoutMs = old.rebalanceTimeoutMs;
    replacement.subscribedTopicNames = old.subscribedTopicNames;
    replacement.subscribedTopicRegex = old.subscribedTopicRegex;
    replacement.compiledRegex = old.compiledRegex;
    replacement.serverAssignor = old.serverAssignor;
    members.put(replacement.memberId, replacement);
    staticMembers.put(replacement.instanceId, replacement.memberId);
    replacement.held().forEach((t, p) -> holders.put(new PartitionKey(t, p), replacement.memberId));
    Assignment target = targetAssignment.remove(old.memberId);
    if (target != null) {
      targetAssignment.put(replacement.memberId, target);
    }
  }
}
