package io.tidemark.broker.group;

import static io.tidemark.broker.group.GroupCoordinator.done;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The classic group protocol of this node's group coordinator: JoinGroup (two-step join with
 * MEMBER_ID_REQUIRED, static members by group.instance.id), SyncGroup, Heartbeat and LeaveGroup,
 * and each {@link ClassicGroup}'s state machine (EMPTY, PREPARING_REBALANCE, COMPLETING_REBALANCE,
 * STABLE, DEAD) with its session, rebalance and initial-delay timers; plus the member checks of
 * an offset commit to a classic group ({@link #checkCommit}). The consumer protocol (KIP-848) is
 * {@link ConsumerGroupCoordinator}; both share the group namespace through {@link GroupRegistry}.
 *
 * <p>Durability: a generation is stored in the {@link OffsetLog} before SyncGroup is answered (and
 * when the group goes Empty, a tombstone when it is forgotten); {@link GroupLoader} restores it.
 *
 * <p>Threading: one owner thread, the group coordinator's ({@code owner}, named
 * {@code group-coordinator}), which it shares with {@link ConsumerGroupCoordinator},
 * {@link GroupOffsets} and {@link GroupLoader}, since a group id moves between the protocols and
 * its offsets are read and written by both. The entry points ({@link #join}, {@link #sync},
 * {@link #heartbeat}, {@link #leave}) hand their work to that thread and return futures; every
 * other method, and every timer, runs on it. No locking.
 */
final class ClassicGroupCoordinator {

  private static final Logger log = LoggerFactory.getLogger(ClassicGroupCoordinator.class);

  /** Settings of the classic protocol. */
  record Settings(int initialRebalanceDelayMs, int minSessionTimeoutMs, int maxSessionTimeoutMs, int maxGroupSize, int maxGroups) {}

  private final Settings settings;
  private final ScheduledExecutorService owner;
  private final OffsetLog offsets;
  private final GroupRegistry registry;
  private final Map<String, ClassicGroup> groups;

  ClassicGroupCoordinator(Settings settings, ScheduledExecutorService owner, OffsetLog offsets, GroupRegistry registry) {
    this.settings = settings;
    this.owner = owner;
    this.offsets = offsets;
    this.registry = registry;
    this.groups = registry.classic;
  }

  /** Runs {@code work} on the owner thread. */
  private <T> CompletableFuture<T> call(Callable<CompletableFuture<T>> work) {
    return GroupCoordinator.call(owner, work);
  }

  /**
   * Drops the classic groups kept in {@code partition} of the offsets topic (it closed or reloads
   * here): their timers stop and waiting joins and syncs are answered NOT_COORDINATOR.
   */
  void unload(int partition) {
    groups.values().removeIf(g -> {
      if (offsets.partitionFor(g.groupId) != partition) {
        return false;
      }
      if (g.rebalanceTimer != null) {
        g.rebalanceTimer.cancel(false);
      }
      for (Member m : g.members.values()) {
        if (m.sessionTimer != null) {
          m.sessionTimer.cancel(false);
        }
        if (m.awaitingJoin != null && !m.awaitingJoin.isDone()) {
          m.awaitingJoin.complete(new JoinGroupResponseData().setErrorCode(Errors.NOT_COORDINATOR.code())
              .setMemberId(m.memberId).setGenerationId(-1));
        }
        if (m.awaitingSync != null && !m.awaitingSync.isDone()) {
          m.awaitingSync.complete(new SyncGroupResponseData().setErrorCode(Errors.NOT_COORDINATOR.code()));
        }
      }
      return true;
    });
  }

  /**
   * Appends the group's current metadata ({@code assignments} override members' ones) to the
   * offsets log; the future completes on the owner thread.
   */
  private CompletableFuture<Void> storeGroup(ClassicGroup g, Map<String, byte[]> assignments) {
    g.metadataStored = true;
    return offsets.append(g.groupId, java.util.Collections.singletonList(OffsetLog.groupRecord(g.groupId, GroupMetadata.of(g, assignments))))
        .whenCompleteAsync((v, e) -> { }, owner);
  }

  /** Stores the group's metadata without anyone waiting on it (a group that just went Empty). */
  private void storeGroupInBackground(ClassicGroup g) {
    storeGroup(g, Map.of()).exceptionally(e -> {
      log.warn("could not store the metadata of group {} at generation {}: {}", g.groupId, g.generation, e.toString());
      return null;
    });
  }

  // ---------------------------------------------------------------- join

  /** A JoinGroup call, already decoded. */
  record JoinRequest(String groupId, String memberId, String groupInstanceId, String clientId, String clientHost,
      int sessionTimeoutMs, int rebalanceTimeoutMs, String protocolType, List<Member.Protocol> protocols, short version,
      boolean requireKnownMemberId) {}

  CompletableFuture<JoinGroupResponseData> join(JoinRequest r) {
    return call(() -> {
      CompletableFuture<JoinGroupResponseData> out = new CompletableFuture<>();
      if (r.groupId() == null || r.groupId().isEmpty()) {
        return done(joinError(Errors.INVALID_GROUP_ID, r.memberId()));
      }
      if (r.sessionTimeoutMs() < settings.minSessionTimeoutMs() || r.sessionTimeoutMs() > settings.maxSessionTimeoutMs()) {
        return done(joinError(Errors.INVALID_SESSION_TIMEOUT, r.memberId()));
      }
      if (!registry.claimForClassic(r.groupId())) {
        return done(joinError(Errors.INCONSISTENT_GROUP_PROTOCOL, r.memberId()));
      }
      ClassicGroup g = groups.get(r.groupId());
      if (g == null) {
        if (!r.memberId().isEmpty()) {
          return done(joinError(Errors.UNKNOWN_MEMBER_ID, r.memberId()));
        }
        if (registry.count() >= settings.maxGroups()) {
          return done(joinError(Errors.GROUP_MAX_SIZE_REACHED, r.memberId()));
        }
        g = new ClassicGroup(r.groupId());
        groups.put(r.groupId(), g);
      }
      if (!g.supports(r.protocolType(), r.protocols())) {
        return done(joinError(Errors.INCONSISTENT_GROUP_PROTOCOL, r.memberId()));
      }
      if (r.memberId().isEmpty()) {
        joinUnknown(g, r, out);
      } else {
        joinKnown(g, r, out);
      }
      return out;
    });
  }

  private void joinUnknown(ClassicGroup g, JoinRequest r, CompletableFuture<JoinGroupResponseData> out) {
    String newId = (r.clientId() == null ? "" : r.clientId()) + "-" + UUID.randomUUID();
    if (r.groupInstanceId() != null) {
      String old = g.staticMembers.get(r.groupInstanceId());
      if (old != null && g.members.containsKey(old)) {
        Member m = g.members.remove(old);
        if (m.awaitingJoin != null) {
          m.awaitingJoin.complete(joinError(Errors.FENCED_INSTANCE_ID, old));
          m.awaitingJoin = null;
        }
        if (m.awaitingSync != null) {
          m.awaitingSync.complete(new SyncGroupResponseData().setErrorCode(Errors.FENCED_INSTANCE_ID.code()));
          m.awaitingSync = null;
        }
        boolean wasLeader = old.equals(g.leaderId);
        boolean sameProtocols = m.sameProtocols(r.protocols());
        m.memberId = newId;
        m.clientId = r.clientId();
        m.clientHost = r.clientHost();
        m.sessionTimeoutMs = r.sessionTimeoutMs();
        m.rebalanceTimeoutMs = r.rebalanceTimeoutMs();
        m.protocols = r.protocols();
        m.joinVersion = r.version();
        g.members.put(newId, m);
        g.staticMembers.put(r.groupInstanceId(), newId);
        if (wasLeader) {
          g.leaderId = newId;
        }
        if (g.state == ClassicGroup.State.STABLE && sameProtocols) {
          // replaced static member keeps its assignment without a rebalance, once its new id is durable
          scheduleSession(g, m);
          replaceStaticDurably(g, m, old, wasLeader, r, out);
          return;
        }
        m.awaitingJoin = out;
        if (g.state == ClassicGroup.State.PREPARING_REBALANCE) {
          tryCompleteJoin(g);
        } else {
          prepareRebalance(g, "static member " + r.groupInstanceId() + " rejoined with new metadata");
        }
        return;
      }
      addMemberAndRebalance(g, newId, r, out);
      return;
    }
    if (r.requireKnownMemberId()) {
      if (g.members.size() + g.pendingMembers.size() >= settings.maxGroupSize()) {
        out.complete(joinError(Errors.GROUP_MAX_SIZE_REACHED, ""));
        return;
      }
      g.pendingMembers.add(newId);
      owner.schedule(() -> expirePending(g, newId), r.sessionTimeoutMs(), TimeUnit.MILLISECONDS);
      out.complete(joinError(Errors.MEMBER_ID_REQUIRED, newId));
      return;
    }
    addMemberAndRebalance(g, newId, r, out);
  }

  /**
   * Answers a replaced static member after the group's metadata with its new member id is stored;
   * if that fails, the old member id comes back so the instance can retry with it.
   */
  private void replaceStaticDurably(ClassicGroup g, Member m, String oldId, boolean wasLeader, JoinRequest r,
      CompletableFuture<JoinGroupResponseData> out) {
    String newId = m.memberId;
    storeGroup(g, Map.of()).whenComplete((v, e) -> {
      if (e == null) {
        out.complete(joinResponse(g, m, r.version(), false));
        return;
      }
      log.warn("could not store static member {} of group {} under its new id: {}", r.groupInstanceId(), g.groupId, e.toString());
      if (g.members.get(newId) == m && newId.equals(g.staticMembers.get(r.groupInstanceId()))) {
        g.members.remove(newId);
        m.memberId = oldId;
        g.members.put(oldId, m);
        g.staticMembers.put(r.groupInstanceId(), oldId);
        if (wasLeader && newId.equals(g.leaderId)) {
          g.leaderId = oldId;
        }
        scheduleSession(g, m);
      }
      out.complete(joinError(OffsetLog.toCoordinatorError(e), ""));
    });
  }

  private void expirePending(ClassicGroup g, String memberId) {
    if (g.pendingMembers.remove(memberId) && g.state == ClassicGroup.State.PREPARING_REBALANCE) {
      tryCompleteJoin(g);
    }
  }

  private void joinKnown(ClassicGroup g, JoinRequest r, CompletableFuture<JoinGroupResponseData> out) {
    if (g.pendingMembers.remove(r.memberId())) {
      addMemberAndRebalance(g, r.memberId(), r, out);
      return;
    }
    Member m = g.members.get(r.memberId());
    if (m == null) {
      out.complete(joinError(Errors.UNKNOWN_MEMBER_ID, r.memberId()));
      return;
    }
    if (r.groupInstanceId() != null && !r.memberId().equals(g.staticMembers.get(r.groupInstanceId()))) {
      out.complete(joinError(Errors.FENCED_INSTANCE_ID, r.memberId()));
      return;
    }
    boolean same = m.sameProtocols(r.protocols());
    m.clientId = r.clientId();
    m.clientHost = r.clientHost();
    m.rebalanceTimeoutMs = r.rebalanceTimeoutMs();
    m.sessionTimeoutMs = r.sessionTimeoutMs();
    m.joinVersion = r.version();
    if (m.awaitingJoin != null && m.awaitingJoin != out) {
      // a duplicate join from the same member replaces the earlier call
      m.awaitingJoin.complete(joinError(Errors.REBALANCE_IN_PROGRESS, r.memberId()));
    }
    switch (g.state) {
      case PREPARING_REBALANCE -> {
        m.protocols = r.protocols();
        m.awaitingJoin = out;
        tryCompleteJoin(g);
      }
      case COMPLETING_REBALANCE, STABLE -> {
        if (same && (g.state == ClassicGroup.State.COMPLETING_REBALANCE || !r.memberId().equals(g.leaderId))) {
          scheduleSession(g, m);
          out.complete(joinResponse(g, m, r.version(), r.memberId().equals(g.leaderId)));
        } else {
          m.protocols = r.protocols();
          m.awaitingJoin = out;
          prepareRebalance(g, "member " + r.memberId() + " rejoined");
        }
      }
      default -> out.complete(joinError(Errors.UNKNOWN_MEMBER_ID, r.memberId()));
    }
  }

  private void addMemberAndRebalance(ClassicGroup g, String memberId, JoinRequest r, CompletableFuture<JoinGroupResponseData> out) {
    if (g.members.size() >= settings.maxGroupSize()) {
      out.complete(joinError(Errors.GROUP_MAX_SIZE_REACHED, memberId));
      return;
    }
    Member m = new Member(memberId, r.groupInstanceId(), r.clientId(), r.clientHost(), r.rebalanceTimeoutMs(),
        r.sessionTimeoutMs(), r.protocols());
    m.joinVersion = r.version();
    m.awaitingJoin = out;
    if (g.members.isEmpty()) {
      g.protocolType = r.protocolType();
    }
    g.members.put(memberId, m);
    if (r.groupInstanceId() != null) {
      g.staticMembers.put(r.groupInstanceId(), memberId);
    }
    if (g.state == ClassicGroup.State.PREPARING_REBALANCE) {
      tryCompleteJoin(g);
    } else {
      prepareRebalance(g, "member " + memberId + " joined");
    }
  }

  private void prepareRebalance(ClassicGroup g, String reason) {
    if (g.state == ClassicGroup.State.COMPLETING_REBALANCE) {
      for (Member m : g.members.values()) {
        if (m.awaitingSync != null) {
          m.awaitingSync.complete(new SyncGroupResponseData().setErrorCode(Errors.REBALANCE_IN_PROGRESS.code()));
          m.awaitingSync = null;
        }
      }
    }
    boolean fromEmpty = g.state == ClassicGroup.State.EMPTY;
    g.transition(ClassicGroup.State.PREPARING_REBALANCE);
    log.debug("group {} rebalancing: {}", g.groupId, reason);
    if (g.rebalanceTimer != null) {
      g.rebalanceTimer.cancel(false);
    }
    if (fromEmpty && settings.initialRebalanceDelayMs() > 0) {
      g.initialDelayRunning = true;
      g.rebalanceTimer = owner.schedule(() -> {
        g.initialDelayRunning = false;
        if (!tryCompleteJoin(g)) {
          g.rebalanceTimer = owner.schedule(() -> completeJoin(g), g.maxRebalanceTimeoutMs(), TimeUnit.MILLISECONDS);
        }
      }, settings.initialRebalanceDelayMs(), TimeUnit.MILLISECONDS);
    } else {
      g.initialDelayRunning = false;
      g.rebalanceTimer = owner.schedule(() -> completeJoin(g), g.maxRebalanceTimeoutMs(), TimeUnit.MILLISECONDS);
      tryCompleteJoin(g);
    }
  }

  private boolean tryCompleteJoin(ClassicGroup g) {
    if (g.state != ClassicGroup.State.PREPARING_REBALANCE || g.initialDelayRunning || !g.allJoined()) {
      return false;
    }
    completeJoin(g);
    return true;
  }

  private void completeJoin(ClassicGroup g) {
    if (g.state != ClassicGroup.State.PREPARING_REBALANCE) {
      return;
    }
    if (g.rebalanceTimer != null) {
      g.rebalanceTimer.cancel(false);
      g.rebalanceTimer = null;
    }
    g.initialDelayRunning = false;
    g.pendingMembers.clear();
    for (Member m : new ArrayList<>(g.members.values())) {
      if (m.awaitingJoin == null) {
        removeMember(g, m);
      }
    }
    g.generation++;
    if (g.members.isEmpty()) {
      g.protocolName = null;
      g.leaderId = null;
      g.transition(ClassicGroup.State.EMPTY);
      if (!g.offsets.isEmpty()) {
        storeGroupInBackground(g);
      }
      maybeForget(g);
      return;
    }
    g.protocolName = g.selectProtocol();
    if (g.leaderId == null || !g.members.containsKey(g.leaderId)) {
      g.leaderId = g.members.keySet().iterator().next();
    }
    g.transition(ClassicGroup.State.COMPLETING_REBALANCE);
    for (Member m : g.members.values()) {
      CompletableFuture<JoinGroupResponseData> f = m.awaitingJoin;
      m.awaitingJoin = null;
      m.assignment = new byte[0];
      scheduleSession(g, m);
      f.complete(joinResponse(g, m, m.joinVersion, m.memberId.equals(g.leaderId)));
    }
  }

  private JoinGroupResponseData joinResponse(ClassicGroup g, Member m, short version, boolean withMembers) {
    JoinGroupResponseData r = new JoinGroupResponseData().setErrorCode(Errors.NONE.code()).setGenerationId(g.generation)
        .setProtocolType(g.protocolType).setProtocolName(g.protocolName).setLeader(g.leaderId).setMemberId(m.memberId)
        .setSkipAssignment(false);
    if (withMembers) {
      for (Member x : g.members.values()) {
        r.members().add(new JoinGroupResponseData.JoinGroupResponseMember().setMemberId(x.memberId)
            .setGroupInstanceId(x.groupInstanceId).setMetadata(x.metadata(g.protocolName)));
      }
    }
    return r;
  }

  private static JoinGroupResponseData joinError(Errors e, String memberId) {
    return new JoinGroupResponseData().setErrorCode(e.code()).setGenerationId(-1).setMemberId(memberId == null ? "" : memberId)
        .setLeader("").setProtocolName(null).setProtocolType(null);
  }

  // ---------------------------------------------------------------- sync, heartbeat, leave

  CompletableFuture<SyncGroupResponseData> sync(String groupId, String memberId, String instanceId, int generation,
      String protocolType, String protocolName, Map<String, byte[]> assignments) {
    return call(() -> {
      ClassicGroup g = groups.get(groupId);
      Errors e = checkMember(g, memberId, instanceId, generation);
      if (e != Errors.NONE) {
        return done(new SyncGroupResponseData().setErrorCode(e.code()));
      }
      if ((protocolType != null && !protocolType.equals(g.protocolType))
          || (protocolName != null && !protocolName.equals(g.protocolName))) {
        return done(new SyncGroupResponseData().setErrorCode(Errors.INCONSISTENT_GROUP_PROTOCOL.code()));
      }
      Member m = g.members.get(memberId);
      scheduleSession(g, m);
      switch (g.state) {
        case PREPARING_REBALANCE -> {
          return done(new SyncGroupResponseData().setErrorCode(Errors.REBALANCE_IN_PROGRESS.code()));
        }
        case COMPLETING_REBALANCE -> {
          CompletableFuture<SyncGroupResponseData> out = new CompletableFuture<>();
          m.awaitingSync = out;
          if (memberId.equals(g.leaderId)) {
            completeSync(g, assignments);
          }
          return out;
        }
        case STABLE -> {
          return done(syncResponse(g, m));
        }
        default -> {
          return done(new SyncGroupResponseData().setErrorCode(Errors.UNKNOWN_MEMBER_ID.code()));
        }
      }
    });
  }

  /**
   * The leader's assignment: stored durably first (like Kafka), then the group goes STABLE and
   * every waiting member gets its share. If the group moved on while the record was written, the
   * rebalance already answered the waiting members; if the write failed, they get the error and the
   * group rebalances.
   */
  private void completeSync(ClassicGroup g, Map<String, byte[]> assignments) {
    int generation = g.generation;
    Map<String, byte[]> complete = new HashMap<>();
    for (String id : g.members.keySet()) {
      complete.put(id, assignments.getOrDefault(id, new byte[0]));
    }
    storeGroup(g, complete).whenComplete((v, e) -> {
      if (g.state != ClassicGroup.State.COMPLETING_REBALANCE || g.generation != generation || groups.get(g.groupId) != g) {
        return;
      }
      if (e != null) {
        Errors err = OffsetLog.toCoordinatorError(e);
        log.warn("could not store generation {} of group {}: {}", generation, g.groupId, e.toString());
        for (Member x : g.members.values()) {
          x.assignment = new byte[0];
          if (x.awaitingSync != null) {
            x.awaitingSync.complete(new SyncGroupResponseData().setErrorCode(err.code()));
            x.awaitingSync = null;
          }
        }
        prepareRebalance(g, "generation " + generation + " could not be stored");
        return;
      }
      for (Member x : g.members.values()) {
        x.assignment = complete.getOrDefault(x.memberId, new byte[0]);
      }
      g.transition(ClassicGroup.State.STABLE);
      for (Member x : g.members.values()) {
        if (x.awaitingSync != null) {
          x.awaitingSync.complete(syncResponse(g, x));
          x.awaitingSync = null;
        }
      }
    });
  }

  private static SyncGroupResponseData syncResponse(ClassicGroup g, Member m) {
    return new SyncGroupResponseData().setErrorCode(Errors.NONE.code()).setProtocolType(g.protocolType)
        .setProtocolName(g.protocolName).setAssignment(m.assignment);
  }

  CompletableFuture<HeartbeatResponseData> heartbeat(String groupId, String memberId, String instanceId, int generation) {
    return call(() -> {
      ClassicGroup g = groups.get(groupId);
      Errors e = checkMember(g, memberId, instanceId, generation);
      if (e == Errors.NONE) {
        scheduleSession(g, g.members.get(memberId));
        if (g.state == ClassicGroup.State.PREPARING_REBALANCE) {
          e = Errors.REBALANCE_IN_PROGRESS;
        }
      } else if (e == Errors.ILLEGAL_GENERATION && g.state == ClassicGroup.State.PREPARING_REBALANCE) {
        e = Errors.REBALANCE_IN_PROGRESS;
      }
      return done(new HeartbeatResponseData().setErrorCode(e.code()));
    });
  }

  private Errors checkMember(ClassicGroup g, String memberId, String instanceId, int generation) {
    if (g == null || g.state == ClassicGroup.State.DEAD) {
      return Errors.UNKNOWN_MEMBER_ID;
    }
    if (instanceId != null) {
      String current = g.staticMembers.get(instanceId);
      if (current != null && !current.equals(memberId)) {
        return Errors.FENCED_INSTANCE_ID;
      }
    }
    if (!g.members.containsKey(memberId)) {
      return Errors.UNKNOWN_MEMBER_ID;
    }
    if (generation != g.generation) {
      return Errors.ILLEGAL_GENERATION;
    }
    return Errors.NONE;
  }

  /** One member leaving: by member id, or by instance id (static), or both. */
  record Leaving(String memberId, String groupInstanceId) {}

  CompletableFuture<List<Errors>> leave(String groupId, List<Leaving> leaving) {
    return call(() -> {
      ClassicGroup g = groups.get(groupId);
      List<Errors> results = new ArrayList<>();
      boolean changed = false;
      for (Leaving l : leaving) {
        if (g == null) {
          results.add(Errors.UNKNOWN_MEMBER_ID);
          continue;
        }
        String id = l.memberId();
        if (l.groupInstanceId() != null) {
          String current = g.staticMembers.get(l.groupInstanceId());
          if (current == null) {
            results.add(Errors.UNKNOWN_MEMBER_ID);
            continue;
          }
          if (id != null && !id.isEmpty() && !id.equals(current)) {
            results.add(Errors.FENCED_INSTANCE_ID);
            continue;
          }
          id = current;
        }
        if (g.pendingMembers.remove(id)) {
          results.add(Errors.NONE);
          continue;
        }
        Member m = g.members.get(id);
        if (m == null) {
          results.add(Errors.UNKNOWN_MEMBER_ID);
          continue;
        }
        if (m.awaitingJoin != null) {
          m.awaitingJoin.complete(joinError(Errors.UNKNOWN_MEMBER_ID, id));
          m.awaitingJoin = null;
        }
        removeMember(g, m);
        results.add(Errors.NONE);
        changed = true;
      }
      if (changed) {
        membershipChanged(g, "members left");
      }
      return done(results);
    });
  }

  private void removeMember(ClassicGroup g, Member m) {
    g.members.remove(m.memberId);
    if (m.groupInstanceId != null && m.memberId.equals(g.staticMembers.get(m.groupInstanceId))) {
      g.staticMembers.remove(m.groupInstanceId);
    }
    if (m.sessionTimer != null) {
      m.sessionTimer.cancel(false);
    }
    if (m.awaitingSync != null) {
      m.awaitingSync.complete(new SyncGroupResponseData().setErrorCode(Errors.REBALANCE_IN_PROGRESS.code()));
      m.awaitingSync = null;
    }
    if (m.memberId.equals(g.leaderId)) {
      g.leaderId = null;
    }
  }

  private void membershipChanged(ClassicGroup g, String reason) {
    switch (g.state) {
      case STABLE, COMPLETING_REBALANCE -> prepareRebalance(g, reason);
      case PREPARING_REBALANCE -> tryCompleteJoin(g);
      default -> {
      }
    }
  }

  void scheduleSession(ClassicGroup g, Member m) {
    if (m.sessionTimer != null) {
      m.sessionTimer.cancel(false);
    }
    String id = m.memberId;
    m.sessionTimer = owner.schedule(() -> {
      Member current = g.members.get(id);
      if (current == m) {
        log.info("member {} of group {} missed its session timeout of {} ms", id, g.groupId, m.sessionTimeoutMs);
        if (m.awaitingJoin != null) {
          m.awaitingJoin.complete(joinError(Errors.UNKNOWN_MEMBER_ID, id));
          m.awaitingJoin = null;
        }
        removeMember(g, m);
        membershipChanged(g, "member " + id + " expired");
      }
    }, m.sessionTimeoutMs, TimeUnit.MILLISECONDS);
  }

  /**
   * Drops {@code g} once it is empty with no offsets, if it was never stored; a stored one stays
   * Empty until {@link GroupCoordinator}'s sweep (Kafka keeps it until its offsets-retention sweep).
   */
  void maybeForget(ClassicGroup g) {
    if (!g.metadataStored) {
      forgetIfEmpty(g);
    }
  }

  void forgetIfEmpty(ClassicGroup g) {
    if (g.state == ClassicGroup.State.EMPTY && g.offsets.isEmpty() && g.members.isEmpty() && g.pendingMembers.isEmpty()) {
      g.transition(ClassicGroup.State.DEAD);
      groups.remove(g.groupId, g);
      if (g.metadataStored) {
        offsets.append(g.groupId, OffsetLog.groupTombstones(g.groupId)).exceptionally(e -> {
          log.warn("could not store the removal of group {}: {}", g.groupId, e.toString());
          return null;
        });
      }
    }
  }

  /**
   * Kafka 4.4's rules for an offset commit to a classic group (its {@code ClassicGroup.validateOffsetCommit}
   * and {@code OffsetMetadataManager}): a commit without a generation creates or targets an empty
   * group (simple consumers, Admin); a member's commit must carry its member id (and instance id for
   * a static member) and the group's current generation, and is accepted while the group is STABLE
   * or PREPARING_REBALANCE (a cooperative rebalance keeps the generation until members rejoin, so
   * members still commit what they own); only COMPLETING_REBALANCE answers REBALANCE_IN_PROGRESS
   * (the member has joined the next generation but not received its assignment yet).
   */
  static Errors checkCommit(ClassicGroup g, String memberId, String instanceId, int generation, short version) {
    if (g == null) {
      if (generation < 0) {
        return Errors.NONE; // a simple (or Admin) commit creates the group
      }
      return version >= 9 ? Errors.GROUP_ID_NOT_FOUND : Errors.ILLEGAL_GENERATION;
    }
    if (g.state == ClassicGroup.State.DEAD) {
      return Errors.COORDINATOR_NOT_AVAILABLE;
    }
    if (generation < 0 && g.state == ClassicGroup.State.EMPTY) {
      return Errors.NONE;
    }
    boolean member = memberId != null && !memberId.isEmpty();
    if (generation >= 0 || member || instanceId != null) {
      if (instanceId != null) {
        String current = g.staticMembers.get(instanceId);
        if (current == null) {
          return Errors.UNKNOWN_MEMBER_ID;
        }
        if (!current.equals(memberId)) {
          return Errors.FENCED_INSTANCE_ID;
        }
      } else if (!g.members.containsKey(memberId)) {
        return Errors.UNKNOWN_MEMBER_ID;
      }
      if (generation != g.generation) {
        return Errors.ILLEGAL_GENERATION;
      }
    } else if (g.state != ClassicGroup.State.EMPTY) {
      return Errors.UNKNOWN_MEMBER_ID;
    }
    return g.state == ClassicGroup.State.COMPLETING_REBALANCE ? Errors.REBALANCE_IN_PROGRESS : Errors.NONE;
  }
}
