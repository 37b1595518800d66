package io.tidemark.broker.group;

import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import org.apache.kafka.common.TopicPartition;

/**
 * A classic-protocol consumer group: members, generation, chosen protocol, leader, and its
 * committed offsets. States: EMPTY (no members; may hold offsets) → PREPARING_REBALANCE (waiting
 * for members to (re)join) → COMPLETING_REBALANCE (joined; waiting for the leader's assignment) →
 * STABLE; any state → PREPARING_REBALANCE when membership changes; EMPTY → DEAD when deleted.
 * Owned by the coordinator thread; no locking.
 */
final class ClassicGroup {

  enum State {
    EMPTY("Empty"), PREPARING_REBALANCE("PreparingRebalance"), COMPLETING_REBALANCE("CompletingRebalance"), STABLE("Stable"),
    DEAD("Dead");

    final String kafkaName;

    State(String kafkaName) {
      this.kafkaName = kafkaName;
    }
  }

  /** A committed offset. */
  record Committed(long offset, int leaderEpoch, String metadata, long commitTimestamp) {}

  /**
   * Stands (by identity) for a partition whose offset a transaction has written but not yet
   * committed, in answers to an OffsetFetch with RequireStable (UNSTABLE_OFFSET_COMMIT).
   */
  static final Committed UNSTABLE = new Committed(-1, -1, "", -1);

  final String groupId;
  State state = State.EMPTY;
  int generation;
  String protocolType;
  String protocolName;
  String leaderId;
  final LinkedHashMap<String, Member> members = new LinkedHashMap<>();
  final Map<String, String> staticMembers = new HashMap<>();
  final Set<String> pendingMembers = new HashSet<>();
  final Map<TopicPartition, Committed> offsets = new HashMap<>();
  ScheduledFuture<?> rebalanceTimer;
  boolean initialDelayRunning;
  /** Whether a group metadata record of this group may be in the offsets log (so forgetting it needs a tombstone). */
  boolean metadataStored;

  ClassicGroup(String groupId) {
    this.groupId = groupId;
  }

  void transition(State next) {
    boolean legal = switch (next) {
      case EMPTY -> state == State.PREPARING_REBALANCE || state == State.EMPTY;
      case PREPARING_REBALANCE -> state != State.DEAD;
      case COMPLETING_REBALANCE -> state == State.PREPARING_REBALANCE;
      case STABLE -> state == State.COMPLETING_REBALANCE;
      case DEAD -> true;
    };
    if (!legal) {
      throw new IllegalStateException("group " + groupId + " cannot go from " + state + " to " + next);
    }
    state = next;
  }

  /**
   * Takes the state stored at the end of a generation (load only, before any member is in): STABLE
   * with the stored members and assignments, or EMPTY when none were stored.
   */
  void restore(GroupMetadata md) {
    if (state != State.EMPTY || !members.isEmpty()) {
      throw new IllegalStateException("group " + groupId + " is " + state + " with " + members.size() + " members; restore needs a fresh group");
    }
    protocolType = md.protocolType();
    generation = md.generation();
    metadataStored = true;
    if (md.members().isEmpty()) {
      return;
    }
    protocolName = md.protocolName();
    leaderId = md.leaderId();
    for (GroupMetadata.MemberMetadata mm : md.members()) {
      Member m = new Member(mm.memberId(), mm.groupInstanceId(), mm.clientId(), mm.clientHost(), mm.rebalanceTimeoutMs(),
          mm.sessionTimeoutMs(), mm.protocols());
      m.assignment = mm.assignment();
      members.put(m.memberId, m);
      if (m.groupInstanceId != null) {
        staticMembers.put(m.groupInstanceId, m.memberId);
      }
    }
    state = State.STABLE;
  }

  boolean allJoined() {
    if (!pendingMembers.isEmpty()) {
      return false;
    }
    for (Member m : members.values()) {
      if (m.awaitingJoin == null) {
        return false;
      }
    }
    return true;
  }

  int maxRebalanceTimeoutMs() {
    int max = 0;
    for (Member m : members.values()) {
      max = Math.max(max, m.rebalanceTimeoutMs);
    }
    return max;
  }

  /** The protocol every member supports that most members prefer, or null when none is common. */
  String selectProtocol() {
    Set<String> common = null;
    for (Member m : members.values()) {
      Set<String> names = new HashSet<>();
      m.protocols.forEach(p -> names.add(p.name()));
      if (common == null) {
        common = names;
      } else {
        common.retainAll(names);
      }
    }
    if (common == null || common.isEmpty()) {
      return null;
    }
    Map<String, Integer> votes = new LinkedHashMap<>();
    for (Member m : members.values()) {
      for (Member.Protocol p : m.protocols) {
        if (common.contains(p.name())) {
          votes.merge(p.name(), 1, Integer::sum);
          break;
        }
      }
    }
    return votes.entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey).orElse(null);
  }

  /** Whether a joining member's protocols fit the group (same type, at least one protocol in common). */
  boolean supports(String type, List<Member.Protocol> protocols) {
    if (members.isEmpty()) {
      return type != null && !type.isEmpty() && !protocols.isEmpty();
    }
    if (!type.equals(protocolType)) {
      return false;
    }
    for (Member.Protocol p : protocols) {
      boolean everyone = true;
      for (Member m : members.values()) {
        if (m.protocols.stream().noneMatch(q -> q.name().equals(p.name()))) {
          everyone = false;
          break;
        }
      }
      if (everyone) {
        return true;
      }
    }
    return false;
  }
}
