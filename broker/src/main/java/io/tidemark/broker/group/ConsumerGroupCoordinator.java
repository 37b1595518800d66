package io.tidemark.broker.group;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ConsumerGroupDescribeResponseData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The consumer group protocol (KIP-848) of this node's group coordinator: ConsumerGroupHeartbeat
 * (join with epoch 0, heartbeat, leave with -1, static leave with -2), server-side assignment,
 * reconciliation with revocation before reassignment, session and rebalance timeouts, static
 * membership, and the member checks of OffsetCommit / OffsetFetch.
 *
 * <p>Each heartbeat: validate; find or create the member; bump the group epoch if membership,
 * subscription or the subscribed topics changed; recompute the target assignment when it is
 * older than the group epoch; move the member one {@link Reconciliation} step; answer with its
 * epoch and, when it changed or was asked for, its assignment.
 *
 * <p>Shares the group namespace with the classic protocol: an empty classic group (offsets only)
 * becomes a consumer group on the first join; a classic group with members refuses with
 * GROUP_ID_NOT_FOUND. Threading: every method runs on the coordinator's owner thread (the one of
 * {@code owner}); timers are scheduled there too. Group state is persisted by the caller (the
 * {@link GroupCoordinator} stores a {@link ConsumerGroupMetadata} after each heartbeat that changed
 * it, and is told through {@code changed} of changes made by timers); {@link #restore} brings a
 * stored group back after a restart so members carry on at their epochs.
 */
final class ConsumerGroupCoordinator {

  private static final Logger log = LoggerFactory.getLogger(ConsumerGroupCoordinator.class);

  /** Settings of the consumer protocol. */
  record Settings(int sessionTimeoutMs, int heartbeatIntervalMs, int maxGroupSize, int maxGroups) {}

  /** A decoded ConsumerGroupHeartbeat; null fields mean "unchanged since the last heartbeat". */
  record Heartbeat(short version, String groupId, String memberId, int memberEpoch, String instanceId, String rackId,
      int rebalanceTimeoutMs, List<String> subscribedTopicNames, String subscribedTopicRegex, String serverAssignor,
      Assignment owned, String clientId, String clientHost) {}

  private final ScheduledExecutorService owner;
  private final Settings settings;
  private final TopicView topics;
  private final Map<String, ClassicGroup> classicGroups;
  private final Map<String, ConsumerGroup> groups;
  private final Map<String, ConsumerAssignor> assignors = new HashMap<>();
  private final ConsumerAssignor defaultAssignor = new UniformAssignor();
  private final java.util.function.Consumer<ConsumerGroup> changed;

  ConsumerGroupCoordinator(ScheduledExecutorService owner, Settings settings, TopicView topics,
      Map<String, ClassicGroup> classicGroups, Map<String, ConsumerGroup> groups, java.util.function.Consumer<ConsumerGroup> changed) {
    this.owner = owner;
    this.changed = changed;
    this.settings = settings;
    this.topics = topics;
    this.classicGroups = classicGroups;
    this.groups = groups;
    assignors.put(defaultAssignor.name(), defaultAssignor);
    ConsumerAssignor range = new RangeAssignor();
    assignors.put(range.name(), range);
  }

  // ---------------------------------------------------------------- heartbeat

  ConsumerGroupHeartbeatResponseData heartbeat(Heartbeat h) {
    try {
      validate(h);
      if (h.memberEpoch() < 0) {
        return leave(h);
      }
      return h.memberEpoch() == 0 ? join(h) : beat(h);
    } catch (GroupException e) {
      return new ConsumerGroupHeartbeatResponseData().setErrorCode(e.error().code()).setErrorMessage(e.getMessage());
    }
  }

  private void validate(Heartbeat h) {
    if (h.groupId() == null || h.groupId().isEmpty()) {
      throw invalid("GroupId can't be empty.");
    }
    if (h.instanceId() != null && h.instanceId().isEmpty()) {
      throw invalid("InstanceId can't be empty.");
    }
    if (h.rackId() != null && h.rackId().isEmpty()) {
      throw invalid("RackId can't be empty.");
    }
    if (h.memberEpoch() < ConsumerMember.LEFT_STATIC_EPOCH) {
      throw invalid("MemberEpoch " + h.memberEpoch() + " is invalid: use 0 to join, -1 or -2 to leave, or the current epoch.");
    }
    if (h.memberId().isEmpty() && (h.version() >= 1 || h.memberEpoch() != 0)) {
      throw invalid("MemberId can't be empty.");
    }
    if (h.memberEpoch() == 0) {
      if (h.rebalanceTimeoutMs() < 0) {
        throw invalid("RebalanceTimeoutMs must be provided in the first request.");
      }
      if (h.owned() == null || !h.owned().isEmpty()) {
        throw invalid("TopicPartitions must be empty when (re-)joining.");
      }
      if (h.subscribedTopicNames() == null && h.subscribedTopicRegex() == null) {
        throw invalid("SubscribedTopicNames or SubscribedTopicRegex must be set in the first request.");
      }
    }
    if (h.memberEpoch() == ConsumerMember.LEFT_STATIC_EPOCH && h.instanceId() == null) {
      throw invalid("InstanceId can't be null when leaving with epoch -2 (static member).");
    }
    if (h.serverAssignor() != null && !assignors.containsKey(h.serverAssignor())) {
      throw new GroupException(Errors.UNSUPPORTED_ASSIGNOR, "ServerAssignor " + h.serverAssignor() + " is not supported; use one of "
          + new TreeSet<>(assignors.keySet()) + ".");
    }
    if (h.subscribedTopicRegex() != null && !h.subscribedTopicRegex().isEmpty()) {
      compile(h.subscribedTopicRegex());
    }
  }

  private static Pattern compile(String regex) {
    try {
      return Pattern.compile(regex);
    } catch (PatternSyntaxException e) {
      throw new GroupException(Errors.INVALID_REGULAR_EXPRESSION, "SubscribedTopicRegex " + regex + " is invalid: "
          + e.getDescription() + " (RE2 syntax)");
    }
  }

  private static GroupException invalid(String message) {
    return new GroupException(Errors.INVALID_REQUEST, message);
  }

  private ConsumerGroupHeartbeatResponseData join(Heartbeat h) {
    ConsumerGroup g = group(h.groupId(), true);
    String memberId = h.memberId().isEmpty() ? Uuid.randomUuid().toString() : h.memberId();
    boolean bump = false;
    ConsumerMember m = g.members.get(memberId);
    if (h.instanceId() != null) {
      String holderId = g.staticMembers.get(h.instanceId());
      if (holderId != null && !holderId.equals(memberId)) {
        ConsumerMember holder = g.members.get(holderId);
        if (holder != null && !holder.leftStatic()) {
          throw new GroupException(Errors.UNRELEASED_INSTANCE_ID, "Static member " + holderId + " with instance id "
              + h.instanceId() + " is still in group " + g.groupId + "; it must leave first.");
        }
        m = new ConsumerMember(memberId, h.instanceId());
        if (holder != null) {
          g.replace(holder, m);
          log.info("member {} replaces static member {} (instance {}) in group {}", memberId, holderId, h.instanceId(), g.groupId);
        } else {
          g.members.put(memberId, m);
          g.staticMembers.put(h.instanceId(), memberId);
          bump = true;
        }
      }
    }
    if (m == null) {
      if (g.members.size() >= settings.maxGroupSize()) {
        throw new GroupException(Errors.GROUP_MAX_SIZE_REACHED, "group " + g.groupId + " has its maximum of "
            + settings.maxGroupSize() + " members");
      }
      m = new ConsumerMember(memberId, h.instanceId());
      g.members.put(memberId, m);
      if (h.instanceId() != null) {
        g.staticMembers.put(h.instanceId(), memberId);
      }
      bump = true;
    }
    return update(g, m, h, bump);
  }

  private ConsumerGroupHeartbeatResponseData beat(Heartbeat h) {
    ConsumerGroup g = group(h.groupId(), false);
    ConsumerMember m = g == null ? null : g.members.get(h.memberId());
    if (m == null) {
      throw new GroupException(Errors.UNKNOWN_MEMBER_ID, "member " + h.memberId() + " is not in group " + h.groupId()
          + " (removed after a timeout or a coordinator restart); rejoin with epoch 0");
    }
    if (h.instanceId() != null && !m.memberId.equals(g.staticMembers.get(h.instanceId()))) {
      throw new GroupException(Errors.FENCED_INSTANCE_ID, "instance id " + h.instanceId() + " now belongs to another member of "
          + g.groupId);
    }
    int epoch = m.epoch();
    boolean previousWithSubset = h.memberEpoch() == m.previousEpoch && h.owned() != null && h.owned().isSubsetOf(m.step.assigned());
    if (h.memberEpoch() > epoch || (h.memberEpoch() < epoch && !previousWithSubset)) {
      throw new GroupException(Errors.FENCED_MEMBER_EPOCH, "member " + m.memberId + " sent epoch " + h.memberEpoch()
          + " but its epoch is " + epoch + "; rejoin with epoch 0");
    }
    return update(g, m, h, false);
  }

  /** Applies what the heartbeat changed, brings the target up to date and moves the member one step. */
  private ConsumerGroupHeartbeatResponseData update(ConsumerGroup g, ConsumerMember m, Heartbeat h, boolean bump) {
    m.clientId = h.clientId();
    m.clientHost = h.clientHost();
    if (h.rackId() != null) {
      m.rackId = h.rackId();
    }
    if (h.rebalanceTimeoutMs() >= 0) {
      m.rebalanceTimeoutMs = h.rebalanceTimeoutMs();
    }
    bump |= updateSubscription(m, h);
    Map<String, ConsumerGroup.TopicShape> shape = subscribedTopics(g);
    if (!shape.equals(g.subscribedTopics)) {
      g.subscribedTopics = shape;
      bump = true;
    }
    if (bump) {
      g.groupEpoch++;
    }
    if (g.assignmentEpoch < g.groupEpoch) {
      computeTarget(g);
    }
    Reconciliation.Step next = Reconciliation.next(m.step, g.assignmentEpoch, g.targetAssignment.getOrDefault(m.memberId, Assignment.EMPTY),
        subscribedIds(g, m), (t, p) -> g.heldByOther(m.memberId, t, p), h.owned());
    g.apply(m, next);
    scheduleSession(g, m);
    scheduleRebalanceTimeout(g, m);
    return response(m, h.memberEpoch() == 0 || h.owned() != null);
  }

  private static boolean updateSubscription(ConsumerMember m, Heartbeat h) {
    boolean changed = false;
    if (h.subscribedTopicNames() != null) {
      List<String> names = List.copyOf(new TreeSet<>(h.subscribedTopicNames()));
      changed = !names.equals(m.subscribedTopicNames);
      m.subscribedTopicNames = names;
    }
    if (h.subscribedTopicRegex() != null) {
      String regex = h.subscribedTopicRegex().isEmpty() ? null : h.subscribedTopicRegex();
      changed |= !java.util.Objects.equals(regex, m.subscribedTopicRegex);
      m.subscribedTopicRegex = regex;
      m.compiledRegex = regex == null ? null : compile(regex);
    }
    if (h.serverAssignor() != null) {
      changed |= !h.serverAssignor().equals(m.serverAssignor);
      m.serverAssignor = h.serverAssignor();
    }
    return changed;
  }

  private ConsumerGroupHeartbeatResponseData response(ConsumerMember m, boolean full) {
    ConsumerGroupHeartbeatResponseData r = new ConsumerGroupHeartbeatResponseData().setMemberId(m.memberId)
        .setMemberEpoch(m.epoch()).setHeartbeatIntervalMs(settings.heartbeatIntervalMs());
    Assignment assigned = m.step.assigned();
    if (full || m.sentEpoch != m.epoch() || !assigned.equals(m.sentAssignment)) {
      ConsumerGroupHeartbeatResponseData.Assignment a = new ConsumerGroupHeartbeatResponseData.Assignment();
      assigned.partitions().forEach((topic, ps) -> a.topicPartitions().add(new ConsumerGroupHeartbeatResponseData.TopicPartitions()
          .setTopicId(topic).setPartitions(new ArrayList<>(ps))));
      r.setAssignment(a);
      m.sentEpoch = m.epoch();
      m.sentAssignment = assigned;
    }
    return r;
  }

  private ConsumerGroupHeartbeatResponseData leave(Heartbeat h) {
    ConsumerGroup g = group(h.groupId(), false);
    String memberId = h.memberId();
    if (g != null && h.instanceId() != null) {
      String holder = g.staticMembers.get(h.instanceId());
      if (holder != null && !holder.equals(memberId)) {
        throw new GroupException(Errors.FENCED_INSTANCE_ID, "instance id " + h.instanceId() + " belongs to member " + holder);
      }
    }
    ConsumerMember m = g == null ? null : g.members.get(memberId);
    if (m == null) {
      throw new GroupException(Errors.UNKNOWN_MEMBER_ID, "member " + memberId + " is not in group " + h.groupId());
    }
    if (h.memberEpoch() == ConsumerMember.LEFT_STATIC_EPOCH) {
      // keeps its partitions until its session expires or its instance id rejoins
      g.apply(m, new Reconciliation.Step(ConsumerMember.LEFT_STATIC_EPOCH, m.step.state(), m.step.assigned(),
          m.step.pendingRevocation()));
      if (m.rebalanceTimer != null) {
        m.rebalanceTimer.cancel(false);
        m.rebalanceTimer = null;
      }
      log.debug("static member {} of group {} left temporarily", memberId, g.groupId);
    } else {
      removeMember(g, m, "left the group");
    }
    return new ConsumerGroupHeartbeatResponseData().setMemberId(memberId).setMemberEpoch(h.memberEpoch())
        .setHeartbeatIntervalMs(0);
  }

  private void removeMember(ConsumerGroup g, ConsumerMember m, String why) {
    g.remove(m);
    g.groupEpoch++;
    log.info("member {} of consumer group {} {}; group epoch {}", m.memberId, g.groupId, why, g.groupEpoch);
    maybeForget(g);
  }

  /** Drops an empty group that holds no offsets, unless it was stored (then the sweep does). */
  void maybeForget(ConsumerGroup g) {
    if (g.stored == null) { // a stored group stays Empty until the coordinator's sweep, as in Kafka
      forgetIfEmpty(g);
    }
  }

  /** Drops {@code g} if it is empty and holds no offsets; true when it did (the caller stores the tombstone). */
  boolean forgetIfEmpty(ConsumerGroup g) {
    return g.members.isEmpty() && g.offsets.isEmpty() && groups.remove(g.groupId, g);
  }

  /**
   * The consumer group {@code id}: existing, converted from an empty classic group, or (when
   * {@code create}) new; null if it does not exist and is not created.
   */
  private ConsumerGroup group(String id, boolean create) {
    ConsumerGroup g = groups.get(id);
    if (g != null) {
      return g;
    }
    ClassicGroup classic = classicGroups.get(id);
    if (classic != null && (!classic.members.isEmpty() || !classic.pendingMembers.isEmpty()
        || classic.state != ClassicGroup.State.EMPTY)) {
      throw new GroupException(Errors.GROUP_ID_NOT_FOUND, "Group " + id + " is a classic group with members; a consumer "
          + "group cannot use its id until it is empty (online migration is not supported).");
    }
    if (!create) {
      return null;
    }
    if (classic == null && classicGroups.size() + groups.size() >= settings.maxGroups()) {
      throw new GroupException(Errors.GROUP_MAX_SIZE_REACHED, "the coordinator keeps at most " + settings.maxGroups() + " groups");
    }
    g = new ConsumerGroup(id, classic == null ? new HashMap<>() : classic.offsets);
    if (classic != null) {
      classic.transition(ClassicGroup.State.DEAD);
      classicGroups.remove(id);
      log.info("empty classic group {} becomes a consumer group", id);
    }
    groups.put(id, g);
    return g;
  }

  // ---------------------------------------------------------------- subscriptions and assignment

  /** Names of the existing topics a member is subscribed to: by name, and by regex over non-internal topics. */
  private Set<String> subscribedNames(ConsumerGroup g, ConsumerMember m) {
    Set<String> names = new TreeSet<>();
    for (String n : m.subscribedTopicNames) {
      if (topics.byName(n).isPresent()) {
        names.add(n);
      }
    }
    if (m.compiledRegex != null) {
      names.addAll(g.resolveRegex(m.subscribedTopicRegex, topics.version(), () -> {
        Set<String> matched = new TreeSet<>();
        for (TopicView.Topic t : topics.all()) {
          if (!t.internal() && m.compiledRegex.matcher(t.name()).matches()) {
            matched.add(t.name());
          }
        }
        return matched;
      }));
    }
    return names;
  }

  private Map<String, ConsumerGroup.TopicShape> subscribedTopics(ConsumerGroup g) {
    Map<String, ConsumerGroup.TopicShape> shape = new TreeMap<>();
    for (ConsumerMember m : g.members.values()) {
      for (String n : subscribedNames(g, m)) {
        if (!shape.containsKey(n)) {
          topics.byName(n).ifPresent(t -> shape.put(n, new ConsumerGroup.TopicShape(t.id(), t.partitions())));
        }
      }
    }
    return Map.copyOf(shape);
  }

  private Set<Uuid> subscribedIds(ConsumerGroup g, ConsumerMember m) {
    Set<Uuid> ids = new HashSet<>();
    for (String n : subscribedNames(g, m)) {
      ConsumerGroup.TopicShape s = g.subscribedTopics.get(n);
      if (s != null) {
        ids.add(s.id());
      }
    }
    return ids;
  }

  private void computeTarget(ConsumerGroup g) {
    SortedMap<String, Set<Uuid>> subscriptions = new TreeMap<>();
    g.members.values().forEach(m -> subscriptions.put(m.memberId, subscribedIds(g, m)));
    Map<Uuid, Integer> counts = new HashMap<>();
    g.subscribedTopics.values().forEach(s -> counts.put(s.id(), s.partitions()));
    ConsumerAssignor assignor = chooseAssignor(g);
    g.targetAssignment = new HashMap<>(assignor.assign(new ConsumerAssignor.Input(subscriptions, counts, g.targetAssignment)));
    g.assignmentEpoch = g.groupEpoch;
    g.assignorName = assignor.name();
    log.debug("consumer group {} target assignment at epoch {} by {}: {}", g.groupId, g.assignmentEpoch, assignor.name(),
        g.targetAssignment);
  }

  /** The assignor most members ask for; the default ({@code uniform}) when none asks. */
  private ConsumerAssignor chooseAssignor(ConsumerGroup g) {
    Map<String, Integer> votes = new TreeMap<>();
    g.members.values().forEach(m -> {
      if (m.serverAssignor != null) {
        votes.merge(m.serverAssignor, 1, Integer::sum);
      }
    });
    return votes.entrySet().stream().max(Map.Entry.comparingByValue()).map(e -> assignors.get(e.getKey())).orElse(defaultAssignor);
  }

  // ---------------------------------------------------------------- timers

  private void scheduleSession(ConsumerGroup g, ConsumerMember m) {
    if (m.sessionTimer != null) {
      m.sessionTimer.cancel(false);
    }
    m.sessionTimer = owner.schedule(() -> {
      if (groups.get(g.groupId) == g && g.members.get(m.memberId) == m) {
        removeMember(g, m, "missed its session timeout of " + settings.sessionTimeoutMs() + " ms");
        changed.accept(g);
      }
    }, settings.sessionTimeoutMs(), TimeUnit.MILLISECONDS);
  }

  /** A member asked to revoke partitions must do so within its rebalance timeout, or it is removed. */
  private void scheduleRebalanceTimeout(ConsumerGroup g, ConsumerMember m) {
    boolean revoking = m.step.state() == Reconciliation.State.UNREVOKED_PARTITIONS;
    if (!revoking && m.rebalanceTimer != null) {
      m.rebalanceTimer.cancel(false);
      m.rebalanceTimer = null;
    } else if (revoking && m.rebalanceTimer == null) {
      int epoch = m.epoch();
      m.rebalanceTimer = owner.schedule(() -> {
        m.rebalanceTimer = null;
        if (groups.get(g.groupId) == g && g.members.get(m.memberId) == m && m.epoch() == epoch
            && m.step.state() == Reconciliation.State.UNREVOKED_PARTITIONS) {
          removeMember(g, m, "did not revoke " + m.step.pendingRevocation() + " within its rebalance timeout of "
              + m.rebalanceTimeoutMs + " ms");
          changed.accept(g);
        }
      }, m.rebalanceTimeoutMs, TimeUnit.MILLISECONDS);
    }
  }

  // ---------------------------------------------------------------- restore

  /**
   * Brings back a stored group (load only) with its epochs, target and members at their steps, each
   * member's session starting now; {@code offsets} are the group's committed offsets.
   */
  ConsumerGroup restore(String groupId, ConsumerGroupMetadata md, Map<org.apache.kafka.common.TopicPartition, ClassicGroup.Committed> offsets) {
    ConsumerGroup g = new ConsumerGroup(groupId, offsets);
    g.groupEpoch = md.groupEpoch();
    g.assignmentEpoch = md.assignmentEpoch();
    g.assignorName = md.assignorName();
    g.subscribedTopics = md.subscribedTopics();
    for (ConsumerGroupMetadata.MemberState s : md.members()) {
      ConsumerMember m = new ConsumerMember(s.memberId(), s.instanceId());
      m.rackId = s.rackId();
      m.clientId = s.clientId();
      m.clientHost = s.clientHost();
      m.rebalanceTimeoutMs = s.rebalanceTimeoutMs();
      m.subscribedTopicNames = s.subscribedTopicNames();
      m.subscribedTopicRegex = s.subscribedTopicRegex();
      m.compiledRegex = s.subscribedTopicRegex() == null ? null : compile(s.subscribedTopicRegex());
      m.serverAssignor = s.serverAssignor();
      g.members.put(m.memberId, m);
      if (m.instanceId != null) {
        g.staticMembers.put(m.instanceId, m.memberId);
      }
      g.apply(m, s.step());
      m.previousEpoch = s.previousEpoch();
      if (!s.target().isEmpty()) {
        g.targetAssignment.put(m.memberId, s.target());
      }
    }
    g.stored = md;
    groups.put(groupId, g);
    for (ConsumerMember m : g.members.values()) {
      scheduleSession(g, m);
      scheduleRebalanceTimeout(g, m);
    }
    return g;
  }

  // ---------------------------------------------------------------- offsets, describe

  /**
   * The check of an OffsetCommit against a consumer group: admin commits (negative epoch, no
   * member) only while the group is empty; members with their current epoch and OffsetCommit v9+.
   */
  Errors checkCommit(ConsumerGroup g, String memberId, int memberEpoch, short version) {
    if (memberEpoch < 0 && (memberId == null || memberId.isEmpty())) {
      return g.members.isEmpty() ? Errors.NONE : Errors.UNKNOWN_MEMBER_ID;
    }
    ConsumerMember m = g.members.get(memberId);
    if (m == null) {
      return Errors.UNKNOWN_MEMBER_ID;
    }
    if (version < 9) {
      return Errors.UNSUPPORTED_VERSION;
    }
    return memberEpoch == m.epoch() ? Errors.NONE : Errors.STALE_MEMBER_EPOCH;
  }

  /** The check of an OffsetFetch v9+ that names a member: it must be in the group at that epoch. */
  Errors checkFetch(ConsumerGroup g, String memberId, int memberEpoch) {
    if (memberId == null || (memberEpoch < 0 && memberId.isEmpty())) {
      return Errors.NONE;
    }
    ConsumerMember m = g.members.get(memberId);
    if (m == null) {
      return Errors.UNKNOWN_MEMBER_ID;
    }
    return memberEpoch == m.epoch() ? Errors.NONE : Errors.STALE_MEMBER_EPOCH;
  }

  /** Whether any member of the group is subscribed to {@code topic} (OffsetDelete refuses those). */
  boolean subscribed(ConsumerGroup g, String topic) {
    for (ConsumerMember m : g.members.values()) {
      if (subscribedNames(g, m).contains(topic)) {
        return true;
      }
    }
    return false;
  }

  ConsumerGroupDescribeResponseData.DescribedGroup describe(String groupId, short version) {
    ConsumerGroupDescribeResponseData.DescribedGroup out = new ConsumerGroupDescribeResponseData.DescribedGroup().setGroupId(groupId);
    if (groupId == null || groupId.isEmpty()) {
      return out.setErrorCode(Errors.INVALID_GROUP_ID.code()).setErrorMessage("GroupId can't be empty.").setGroupState("Dead");
    }
    ConsumerGroup g = groups.get(groupId);
    if (g == null) {
      String why = classicGroups.containsKey(groupId) ? "Group " + groupId + " is not a consumer group."
          : "Group " + groupId + " not found.";
      return out.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code()).setErrorMessage(why); // no state, as Kafka 4.4 answers
    }
    out.setGroupState(g.state()).setGroupEpoch(g.groupEpoch).setAssignmentEpoch(g.assignmentEpoch)
        .setAssignorName(g.assignorName == null ? chooseAssignor(g).name() : g.assignorName);
    for (ConsumerMember m : g.members.values()) {
      ConsumerGroupDescribeResponseData.Member d = new ConsumerGroupDescribeResponseData.Member().setMemberId(m.memberId)
          .setInstanceId(m.instanceId).setRackId(m.rackId).setMemberEpoch(m.epoch()).setClientId(m.clientId)
          .setClientHost(m.clientHost).setSubscribedTopicNames(m.subscribedTopicNames).setSubscribedTopicRegex(m.subscribedTopicRegex == null ? "" : m.subscribedTopicRegex)
          .setAssignment(describe(m.step.assigned()))
          .setTargetAssignment(describe(g.targetAssignment.getOrDefault(m.memberId, Assignment.EMPTY)));
      if (version >= 1) {
        d.setMemberType((byte) 1);
      }
      out.members().add(d);
    }
    return out;
  }

  private ConsumerGroupDescribeResponseData.Assignment describe(Assignment a) {
    ConsumerGroupDescribeResponseData.Assignment out = new ConsumerGroupDescribeResponseData.Assignment();
    a.partitions().forEach((id, ps) -> topics.byId(id).ifPresent(t -> out.topicPartitions().add(
        new ConsumerGroupDescribeResponseData.TopicPartitions().setTopicId(id).setTopicName(t.name()).setPartitions(new ArrayList<>(ps)))));
    return out;
  }
}
