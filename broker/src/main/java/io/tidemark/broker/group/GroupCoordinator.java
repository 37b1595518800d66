package io.tidemark.broker.group;

import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.protocol.ErrorMapping;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ConsumerGroupDescribeResponseData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatResponseData;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The group coordinator of this node. Classic protocol here: membership (two-step join with
 * MEMBER_ID_REQUIRED, static members by group.instance.id, session expiry, rebalance timeouts) and
 * assignment distribution; the consumer protocol (KIP-848) in {@link ConsumerGroupCoordinator},
 * which shares the group namespace; committed offsets of both kinds (durable in {@link OffsetLog}
 * before they are acknowledged or visible). Group metadata is durable in the same log: a classic
 * generation is stored before SyncGroup is answered (and when the group goes Empty, a tombstone
 * when it is deleted), a consumer group's changed state before its heartbeat is answered; both are
 * restored by {@link #load}.
 *
 * <p>Threading: one owner thread ({@code group-coordinator}) runs every state change and timer;
 * callers hand work to it through {@link #call} and get futures back. Bounded: at most
 * {@code maxGroups} groups and {@code maxGroupSize} members per group.
 */
public final class GroupCoordinator implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(GroupCoordinator.class);
  static final int MAX_METADATA_CHARS = 4096;

  /** Settings of the coordinator. */
  public record Settings(int initialRebalanceDelayMs, int minSessionTimeoutMs, int maxSessionTimeoutMs, int maxGroupSize,
      int maxGroups, int consumerSessionTimeoutMs, int consumerHeartbeatIntervalMs) {}

  private final Settings settings;
  private final Time time;
  private final OffsetLog offsets;
  private final ScheduledExecutorService owner = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "group-coordinator");
    t.setDaemon(true);
    return t;
  });
  private final Map<String, ClassicGroup> groups = new HashMap<>();
  private final Map<String, ConsumerGroup> consumerGroups = new HashMap<>();
  private final ConsumerGroupCoordinator consumer;
  /**
   * Offsets written by transactions not yet ended (TxnOffsetCommit), by producer id, then group:
   * they become committed offsets on the producer's COMMIT marker in the group's offsets partition
   * and are dropped on ABORT ({@link #completeTransaction}). Owner thread.
   */
  private final Map<Long, Map<String, Map<TopicPartition, ClassicGroup.Committed>>> pendingTxnOffsets = new HashMap<>();
  /**
   * Transactions that ended in an offsets partition while it was loading (producer id → commit):
   * the load may have read the log before their marker, so they are applied again once it is in.
   */
  private final Map<Integer, Map<Long, Boolean>> endedWhileLoading = new HashMap<>();
  /** The loads of offsets-topic partitions open here, by partition (owner thread; read by the gate). */
  private final Map<Integer, CompletableFuture<Void>> loads = new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * How often emptied groups (classic and consumer) without offsets are swept away: Kafka's default
   * {@code offsets.retention.check.interval.ms}. Until then such a group stays Empty, as in Kafka
   * (it can be described, listed and deleted).
   */
  static final long EMPTY_GROUP_SWEEP_MS = 600_000;

  GroupCoordinator(Settings settings, Time time, OffsetLog offsets, TopicView topics) {
    this.settings = settings;
    this.time = time;
    this.offsets = offsets;
    owner.scheduleWithFixedDelay(this::sweepEmptyGroups, EMPTY_GROUP_SWEEP_MS, EMPTY_GROUP_SWEEP_MS, TimeUnit.MILLISECONDS);
    this.consumer = new ConsumerGroupCoordinator(owner, new ConsumerGroupCoordinator.Settings(settings.consumerSessionTimeoutMs(),
        settings.consumerHeartbeatIntervalMs(), settings.maxGroupSize(), settings.maxGroups()), topics, groups, consumerGroups,
        g -> storeInBackground(storeConsumerGroup(g), g.groupId));
  }

  /** Runs {@code work} on the owner thread. */
  <T> CompletableFuture<T> call(Callable<CompletableFuture<T>> work) {
    CompletableFuture<T> result = new CompletableFuture<>();
    owner.execute(() -> {
      try {
        work.call().whenComplete((v, e) -> {
          if (e != null) {
            result.completeExceptionally(e);
          } else {
            result.complete(v);
          }
        });
      } catch (Exception e) {
        result.completeExceptionally(e);
      }
    });
    return result;
  }

  /**
   * Loads committed offsets and group metadata from the offsets topic's partitions open here
   * (start-up, before serving): completes once every load started for them so far is done.
   */
  CompletableFuture<Void> load() {
    return call(() -> {
      for (int p = 0; p < offsets.partitionCount(); p++) {
        if (!loads.containsKey(p)) {
          offsets.open(p).ifPresent(this::startLoad);
        }
      }
      return CompletableFuture.allOf(loads.values().toArray(CompletableFuture[]::new));
    });
  }

  /**
   * Follows a partition of the offsets topic that opened here (start-up, or it moved here): drops
   * whatever this node held of its groups and loads them from the log ({@link #loadPartition}).
   * Callable from any thread.
   */
  void partitionOpened(int partition) {
    owner.execute(() -> offsets.open(partition).ifPresent(this::startLoad));
  }

  /**
   * Forgets the groups of a partition of the offsets topic that closed here (it moved away): their
   * members' timers stop and waiting joins and syncs are answered NOT_COORDINATOR, so that clients
   * find the new coordinator, which loads the same log. Callable from any thread.
   */
  void partitionClosed(int partition) {
    owner.execute(() -> {
      loads.remove(partition);
      unload(partition);
    });
  }

  /** Whether the groups of {@code partition} are being loaded here (requests wait: COORDINATOR_LOAD_IN_PROGRESS). */
  boolean loading(int partition) {
    CompletableFuture<Void> f = loads.get(partition);
    return f != null && !f.isDone();
  }

  /** On the owner thread. */
  private void startLoad(PartitionLog partitionLog) {
    int partition = partitionLog.topicPartition().partition();
    CompletableFuture<Void> load = new CompletableFuture<>();
    loads.put(partition, load);
    unload(partition);
    loadPartition(partitionLog).whenComplete((v, e) -> owner.execute(() -> {
      if (e != null) {
        log.warn("loading the groups of {} failed; they are not served until it reopens: {}", partitionLog.topicPartition(),
            e.toString());
        load.completeExceptionally(e);
      } else {
        load.complete(null);
      }
    }));
  }

  /** Drops the groups of {@code partition} (on the owner thread). */
  private void unload(int partition) {
    endedWhileLoading.remove(partition);
    for (Map<String, Map<TopicPartition, ClassicGroup.Committed>> byGroup : pendingTxnOffsets.values()) {
      byGroup.keySet().removeIf(g -> offsets.partitionFor(g) == partition);
    }
    pendingTxnOffsets.values().removeIf(Map::isEmpty);
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
    consumerGroups.values().removeIf(g -> {
      if (offsets.partitionFor(g.groupId) != partition) {
        return false;
      }
      g.members.values().forEach(ConsumerMember::cancelTimers);
      return true;
    });
  }

  /**
   * Loads one partition's committed offsets and group metadata; only the newest metadata record of
   * each group is held while replaying ({@link LoadedGroups}). Classic groups come back in their
   * stored generation, STABLE with their members and assignments (or EMPTY); consumer groups at
   * their epochs with their members' steps. Each member's session starts now, so members that keep
   * heartbeating carry on without a rebalance (a coordinator that moved keeps its groups) and the
   * others expire as usual.
   */
  private CompletableFuture<Void> loadPartition(PartitionLog partitionLog) {
    LoadedGroups loaded = new LoadedGroups();
    Map<String, ClassicGroup> loadedOffsets = new HashMap<>();
    Map<Long, List<OffsetLog.Entry>> loadedPending = new HashMap<>();
    return offsets.load(partitionLog, rec -> owner.execute(() -> {
      switch (rec) {
        case OffsetLog.Entry e -> replayOffset(loadedOffsets, e);
        case OffsetLog.GroupEntry e -> loaded.replay(e);
        case OffsetLog.TxnEntry e -> loadedPending.computeIfAbsent(e.producerId(), p -> new ArrayList<>()).add(e.entry());
        case OffsetLog.TxnMarker m -> {
          List<OffsetLog.Entry> ended = loadedPending.remove(m.producerId());
          if (m.commit() && ended != null) {
            ended.forEach(e -> replayOffset(loadedOffsets, e));
          }
        }
      }
    })).thenCompose(v -> call(() -> {
      groups.putAll(loadedOffsets);
      loadedPending.forEach((pid, entries) -> entries.forEach(e -> {
        if (e.committed() != null) {
          pendingTxnOffsets.computeIfAbsent(pid, p -> new HashMap<>()).computeIfAbsent(e.group(), g -> new HashMap<>())
              .put(e.partition(), e.committed());
        }
      }));
      int loadedPartition = partitionLog.topicPartition().partition();
      Map<Long, Boolean> ended = endedWhileLoading.remove(loadedPartition);
      if (ended != null) {
        ended.forEach((pid, commit) -> applyTransactionEnd(loadedPartition, pid, commit));
      }
      int withMembers = 0;
      for (Map.Entry<String, StoredGroup> e : loaded.groups().entrySet()) {
        switch (e.getValue()) {
          case GroupMetadata md -> {
            ClassicGroup g = groups.computeIfAbsent(e.getKey(), ClassicGroup::new);
            g.restore(md);
            for (Member m : g.members.values()) {
              scheduleSession(g, m);
            }
            withMembers += g.members.isEmpty() ? 0 : 1;
          }
          case ConsumerGroupMetadata md -> {
            ClassicGroup offsetsOnly = groups.remove(e.getKey());
            ConsumerGroup g = consumer.restore(e.getKey(), md, offsetsOnly == null ? new HashMap<>() : offsetsOnly.offsets);
            withMembers += g.members.isEmpty() ? 0 : 1;
          }
        }
      }
      groups.values().removeIf(g -> g.offsets.isEmpty() && g.members.isEmpty() && !g.metadataStored); // stored ones: swept later
      consumerGroups.values().removeIf(g -> g.offsets.isEmpty() && g.members.isEmpty() && g.stored == null);
      java.util.Set<String> names = new java.util.HashSet<>(loadedOffsets.keySet());
      names.addAll(loaded.groups().keySet());
      log.info("loaded {} groups of {} ({} with members)", names.size(), partitionLog.topicPartition(), withMembers);
      return CompletableFuture.completedFuture(null);
    }));
  }

  private static void replayOffset(Map<String, ClassicGroup> loadedOffsets, OffsetLog.Entry e) {
    ClassicGroup g = loadedOffsets.computeIfAbsent(e.group(), ClassicGroup::new);
    if (e.committed() == null) {
      g.offsets.remove(e.partition());
    } else {
      g.offsets.put(e.partition(), e.committed());
    }
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
      if (!claimForClassic(r.groupId())) {
        return done(joinError(Errors.INCONSISTENT_GROUP_PROTOCOL, r.memberId()));
      }
      ClassicGroup g = groups.get(r.groupId());
      if (g == null) {
        if (!r.memberId().isEmpty()) {
          return done(joinError(Errors.UNKNOWN_MEMBER_ID, r.memberId()));
        }
        if (groupCount() >= settings.maxGroups()) {
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

  private int groupCount() {
    return groups.size() + consumerGroups.size();
  }

  /**
   * Makes {@code groupId} available to the classic protocol: an empty consumer group becomes an
   * (empty) classic group with the same offsets; false if a consumer group with members holds it.
   */
  private boolean claimForClassic(String groupId) {
    ConsumerGroup cg = consumerGroups.get(groupId);
    if (cg == null) {
      return true;
    }
    if (!cg.members.isEmpty()) {
      return false;
    }
    consumerGroups.remove(groupId);
    ClassicGroup converted = new ClassicGroup(groupId);
    converted.offsets.putAll(cg.offsets);
    groups.put(groupId, converted);
    log.info("empty consumer group {} becomes a classic group", groupId);
    return true;
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
      out.complete(joinError(toCoordinatorError(e), ""));
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
        Errors err = toCoordinatorError(e);
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

  private void scheduleSession(ClassicGroup g, Member m) {
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
   * Empty until {@link #sweepEmptyGroups} (Kafka keeps it until its offsets-retention sweep).
   */
  private void maybeForget(ClassicGroup g) {
    if (!g.metadataStored) {
      forgetIfEmpty(g);
    }
  }

  /** The sweep of emptied groups without offsets (owner thread). */
  private void sweepEmptyGroups() {
    try {
      new ArrayList<>(groups.values()).forEach(this::forgetIfEmpty);
      for (ConsumerGroup g : new ArrayList<>(consumerGroups.values())) {
        if (consumer.forgetIfEmpty(g)) {
          storeInBackground(storeConsumerGroup(g), g.groupId); // its tombstone
        }
      }
    } catch (RuntimeException e) {
      log.warn("sweep of empty groups failed: {}", e.toString());
    }
  }

  private void forgetIfEmpty(ClassicGroup g) {
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

  // ---------------------------------------------------------------- offsets

  /** One partition's commit. */
  record Commit(TopicPartition partition, long offset, int leaderEpoch, String metadata) {}

  /** Commits offsets; returns one error per commit, in order. */
  CompletableFuture<List<Errors>> commit(String groupId, String memberId, String instanceId, int generation, short version,
      List<Commit> commits) {
    return call(() -> {
      ConsumerGroup cg = consumerGroups.get(groupId);
      if (cg != null) {
        Errors error = consumer.checkCommit(cg, memberId, generation, version);
        if (error != Errors.NONE) {
          return done(new ArrayList<>(java.util.Collections.nCopies(commits.size(), error)));
        }
        return writeOffsets(groupId, cg.offsets, commits, () -> forgetConsumerGroup(cg));
      }
      ClassicGroup g = groups.get(groupId);
      Errors groupError = groupId == null || groupId.isEmpty() ? Errors.INVALID_GROUP_ID : checkClassicCommit(g, memberId, instanceId,
          generation, version);
      if (groupError == Errors.NONE && g != null && memberId != null && g.members.containsKey(memberId)
          && (g.state == ClassicGroup.State.STABLE || g.state == ClassicGroup.State.PREPARING_REBALANCE)) {
        scheduleSession(g, g.members.get(memberId)); // a commit proves the member alive, as a heartbeat does
      }
      if (groupError != Errors.NONE) {
        return done(new ArrayList<>(java.util.Collections.nCopies(commits.size(), groupError)));
      }
      if (g == null) {
        if (groupCount() >= settings.maxGroups()) {
          return done(new ArrayList<>(java.util.Collections.nCopies(commits.size(), Errors.GROUP_MAX_SIZE_REACHED)));
        }
        g = new ClassicGroup(groupId);
        groups.put(groupId, g);
      }
      ClassicGroup group = g;
      return writeOffsets(groupId, group.offsets, commits, () -> maybeForget(group));
    });
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
  private static Errors checkClassicCommit(ClassicGroup g, String memberId, String instanceId, int generation, short version) {
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

  /**
   * Appends the commits to the offsets log and, once durable, makes them visible in {@code target};
   * {@code afterFailure} lets an empty group created for the commit go again.
   */
  private CompletableFuture<List<Errors>> writeOffsets(String groupId, Map<TopicPartition, ClassicGroup.Committed> target,
      List<Commit> commits, Runnable afterFailure) {
    long now = time.milliseconds();
    List<Errors> results = new ArrayList<>();
    List<byte[][]> records = new ArrayList<>();
    List<Commit> accepted = new ArrayList<>();
    for (Commit c : commits) {
      if (c.metadata() != null && c.metadata().length() > MAX_METADATA_CHARS) {
        results.add(Errors.OFFSET_METADATA_TOO_LARGE);
        continue;
      }
      results.add(Errors.NONE);
      accepted.add(c);
      records.add(OffsetLog.commitRecord(groupId, c.partition(),
          new ClassicGroup.Committed(c.offset(), c.leaderEpoch(), c.metadata() == null ? "" : c.metadata(), now)));
    }
    return offsets.append(groupId, records).handleAsync((v, e) -> {
      if (e != null) {
        Errors err = toCoordinatorError(e);
        List<Errors> all = new ArrayList<>();
        results.forEach(r -> all.add(r == Errors.NONE ? err : r));
        afterFailure.run();
        return all;
      }
      for (Commit c : accepted) {
        target.put(c.partition(), new ClassicGroup.Committed(c.offset(), c.leaderEpoch(),
            c.metadata() == null ? "" : c.metadata(), now));
      }
      return results;
    }, owner);
  }

  /**
   * TxnOffsetCommit: the offsets are written to the offsets log in a transactional batch of
   * {@code producerId} and stay pending (invisible to OffsetFetch, which answers
   * UNSTABLE_OFFSET_COMMIT to a RequireStable fetch of them) until the transaction's marker lands
   * in the group's offsets partition. A commit naming a member (KIP-447) must carry that member's
   * current generation (classic) or epoch (consumer protocol); one without member and generation
   * is accepted as Kafka does.
   */
  CompletableFuture<List<Errors>> txnCommit(String groupId, long producerId, short producerEpoch, String memberId, String instanceId,
      int generation, List<Commit> commits) {
    return call(() -> {
      Errors error = txnCommitCheck(groupId, memberId, instanceId, generation);
      if (error != Errors.NONE) {
        return done(new ArrayList<>(java.util.Collections.nCopies(commits.size(), error)));
      }
      long now = time.milliseconds();
      List<Errors> results = new ArrayList<>();
      List<byte[][]> records = new ArrayList<>();
      Map<TopicPartition, ClassicGroup.Committed> written = new HashMap<>();
      for (Commit c : commits) {
        if (c.metadata() != null && c.metadata().length() > MAX_METADATA_CHARS) {
          results.add(Errors.OFFSET_METADATA_TOO_LARGE);
          continue;
        }
        results.add(Errors.NONE);
        ClassicGroup.Committed committed = new ClassicGroup.Committed(c.offset(), c.leaderEpoch(),
            c.metadata() == null ? "" : c.metadata(), now);
        written.put(c.partition(), committed);
        records.add(OffsetLog.commitRecord(groupId, c.partition(), committed));
      }
      if (records.isEmpty()) {
        return done(results);
      }
      return offsets.appendTransactional(groupId, producerId, producerEpoch, records).handleAsync((v, e) -> {
        if (e != null) {
          Errors err = toCoordinatorError(e);
          List<Errors> all = new ArrayList<>();
          results.forEach(r -> all.add(r == Errors.NONE ? err : r));
          return all;
        }
        pendingTxnOffsets.computeIfAbsent(producerId, p -> new HashMap<>()).computeIfAbsent(groupId, g -> new HashMap<>())
            .putAll(written);
        return results;
      }, owner);
    });
  }

  private Errors txnCommitCheck(String groupId, String memberId, String instanceId, int generation) {
    if (groupId == null || groupId.isEmpty()) {
      return Errors.INVALID_GROUP_ID;
    }
    if (generation < 0 && (memberId == null || memberId.isEmpty())) {
      return Errors.NONE; // no member information (older clients, or a producer outside the group): Kafka accepts it
    }
    ConsumerGroup cg = consumerGroups.get(groupId);
    if (cg != null) {
      ConsumerMember m = cg.members.get(memberId);
      if (m == null) {
        return Errors.UNKNOWN_MEMBER_ID;
      }
      return m.epoch() == generation ? Errors.NONE : Errors.ILLEGAL_GENERATION;
    }
    ClassicGroup g = groups.get(groupId);
    if (g == null) {
      return Errors.ILLEGAL_GENERATION;
    }
    Errors e = checkClassicCommit(g, memberId, instanceId, generation, (short) 8);
    return e == Errors.REBALANCE_IN_PROGRESS ? Errors.NONE : e;
  }

  /**
   * The transaction of {@code producerId} ended in {@code offsetsPartition} (its marker is durable
   * there): its pending offsets of the groups kept in that partition become committed offsets
   * (COMMIT) or are dropped (ABORT). Callable from any thread.
   */
  void completeTransaction(int offsetsPartition, long producerId, boolean commit) {
    owner.execute(() -> {
      if (loading(offsetsPartition)) {
        endedWhileLoading.computeIfAbsent(offsetsPartition, p -> new HashMap<>()).put(producerId, commit);
      }
      applyTransactionEnd(offsetsPartition, producerId, commit);
    });
  }

  private void applyTransactionEnd(int offsetsPartition, long producerId, boolean commit) {
    Map<String, Map<TopicPartition, ClassicGroup.Committed>> byGroup = pendingTxnOffsets.get(producerId);
    if (byGroup == null) {
      return;
    }
    for (java.util.Iterator<Map.Entry<String, Map<TopicPartition, ClassicGroup.Committed>>> it = byGroup.entrySet().iterator();
        it.hasNext(); ) {
      Map.Entry<String, Map<TopicPartition, ClassicGroup.Committed>> e = it.next();
      if (offsets.partitionFor(e.getKey()) != offsetsPartition) {
        continue;
      }
      it.remove();
      if (commit) {
        ConsumerGroup cg = consumerGroups.get(e.getKey());
        Map<TopicPartition, ClassicGroup.Committed> target = cg != null ? cg.offsets
            : groups.computeIfAbsent(e.getKey(), ClassicGroup::new).offsets;
        target.putAll(e.getValue());
      }
    }
    if (byGroup.isEmpty()) {
      pendingTxnOffsets.remove(producerId);
    }
  }

  private boolean pendingTxnOffset(String groupId, TopicPartition tp) {
    for (Map<String, Map<TopicPartition, ClassicGroup.Committed>> byGroup : pendingTxnOffsets.values()) {
      Map<TopicPartition, ClassicGroup.Committed> pending = byGroup.get(groupId);
      if (pending != null && pending.containsKey(tp)) {
        return true;
      }
    }
    return false;
  }

  private static Errors toCoordinatorError(Throwable e) {
    Errors err = ErrorMapping.toErrors(e);
    return switch (err) {
      case NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR, UNKNOWN_TOPIC_OR_PARTITION -> Errors.COORDINATOR_NOT_AVAILABLE;
      case MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE -> Errors.INVALID_COMMIT_OFFSET_SIZE;
      default -> err == Errors.UNKNOWN_SERVER_ERROR ? Errors.COORDINATOR_NOT_AVAILABLE : err;
    };
  }

  /**
   * Committed offsets of a group: all (partitions null) or the ones asked; missing ones are absent.
   * For a consumer group, a named member must be in it at {@code memberEpoch} (OffsetFetch v9+).
   */
  CompletableFuture<Map<TopicPartition, ClassicGroup.Committed>> committed(String groupId, String memberId, int memberEpoch,
      List<TopicPartition> partitions) {
    return committed(groupId, memberId, memberEpoch, partitions, false);
  }

  /** As above; with {@code requireStable}, a partition with a transaction's pending offset maps to {@link ClassicGroup#UNSTABLE}. */
  CompletableFuture<Map<TopicPartition, ClassicGroup.Committed>> committed(String groupId, String memberId, int memberEpoch,
      List<TopicPartition> partitions, boolean requireStable) {
    return call(() -> {
      Map<TopicPartition, ClassicGroup.Committed> held = Map.of();
      ConsumerGroup cg = consumerGroups.get(groupId);
      if (cg != null) {
        Errors e = consumer.checkFetch(cg, memberId, memberEpoch);
        if (e != Errors.NONE) {
          throw new GroupException(e, "member " + memberId + " at epoch " + memberEpoch + " cannot fetch offsets of group " + groupId);
        }
        held = cg.offsets;
      } else if (groups.containsKey(groupId)) {
        held = groups.get(groupId).offsets;
      }
      Map<TopicPartition, ClassicGroup.Committed> out = new HashMap<>();
      if (partitions == null) {
        out.putAll(held);
      } else {
        for (TopicPartition tp : partitions) {
          ClassicGroup.Committed c = requireStable && pendingTxnOffset(groupId, tp) ? ClassicGroup.UNSTABLE : held.get(tp);
          if (c != null) {
            out.put(tp, c);
          }
        }
      }
      return done(out);
    });
  }

  /**
   * The committed offsets of every group coordinated here (classic and consumer groups), copied on
   * the owner thread: for the consumer-lag meters.
   */
  CompletableFuture<Map<String, Map<TopicPartition, Long>>> committedOffsets() {
    return call(() -> {
      Map<String, Map<TopicPartition, Long>> out = new HashMap<>();
      groups.forEach((id, g) -> copyOffsets(id, g.offsets, out));
      consumerGroups.forEach((id, g) -> copyOffsets(id, g.offsets, out));
      return done(out);
    });
  }

  private static void copyOffsets(String groupId, Map<TopicPartition, ClassicGroup.Committed> held,
      Map<String, Map<TopicPartition, Long>> out) {
    if (held.isEmpty()) {
      return;
    }
    Map<TopicPartition, Long> copy = out.computeIfAbsent(groupId, k -> new HashMap<>());
    held.forEach((tp, c) -> {
      if (c.offset() >= 0) {
        copy.put(tp, c.offset());
      }
    });
  }

  /** Deletes offsets of an empty group, or of partitions no member is subscribed to. */
  CompletableFuture<Map<TopicPartition, Errors>> deleteOffsets(String groupId, List<TopicPartition> partitions,
      java.util.function.BiPredicate<byte[], String> subscribed) {
    return call(() -> {
      Map<TopicPartition, ClassicGroup.Committed> held;
      java.util.function.Predicate<String> inUse;
      Runnable forget;
      ConsumerGroup cg = consumerGroups.get(groupId);
      ClassicGroup g = groups.get(groupId);
      if (cg != null) {
        held = cg.offsets;
        inUse = topic -> consumer.subscribed(cg, topic);
        forget = () -> forgetConsumerGroup(cg);
      } else if (g != null) {
        held = g.offsets;
        inUse = topic -> !g.members.isEmpty() && g.protocolName != null
            && g.members.values().stream().anyMatch(m -> subscribed.test(m.metadata(g.protocolName), topic));
        forget = () -> maybeForget(g);
      } else {
        throw new GroupException(Errors.GROUP_ID_NOT_FOUND, "group " + groupId + " does not exist");
      }
      Map<TopicPartition, Errors> out = new HashMap<>();
      List<byte[][]> tombstones = new ArrayList<>();
      for (TopicPartition tp : partitions) {
        if (inUse.test(tp.topic())) {
          out.put(tp, Errors.GROUP_SUBSCRIBED_TO_TOPIC);
        } else {
          out.put(tp, Errors.NONE);
          if (held.containsKey(tp)) {
            tombstones.add(OffsetLog.commitRecord(groupId, tp, null));
          }
        }
      }
      return offsets.append(groupId, tombstones).thenApplyAsync(v -> {
        out.forEach((tp, e) -> {
          if (e == Errors.NONE) {
            held.remove(tp);
          }
        });
        forget.run();
        return out;
      }, owner);
    });
  }

  /** Deletes groups without members (their offsets with them). */
  CompletableFuture<Map<String, Errors>> deleteGroups(List<String> groupIds) {
    return call(() -> {
      Map<String, Errors> out = new HashMap<>();
      List<CompletableFuture<?>> waits = new ArrayList<>();
      for (String id : groupIds) {
        ClassicGroup g = groups.get(id);
        ConsumerGroup cg = consumerGroups.get(id);
        if (g == null && cg == null) {
          out.put(id, Errors.GROUP_ID_NOT_FOUND);
        } else if (cg != null ? !cg.members.isEmpty() : !g.members.isEmpty() || g.state != ClassicGroup.State.EMPTY) {
          out.put(id, Errors.NON_EMPTY_GROUP);
        } else {
          Map<TopicPartition, ClassicGroup.Committed> held = cg != null ? cg.offsets : g.offsets;
          List<byte[][]> tombstones = new ArrayList<>();
          held.keySet().forEach(tp -> tombstones.add(OffsetLog.commitRecord(id, tp, null)));
          if (cg != null ? cg.stored != null : g.metadataStored) {
            tombstones.addAll(OffsetLog.groupTombstones(id));
          }
          waits.add(offsets.append(id, tombstones).handleAsync((v, e) -> {
            if (e != null) {
              out.put(id, toCoordinatorError(e));
            } else {
              held.clear();
              if (cg != null) {
                consumerGroups.remove(id, cg);
                cg.stored = null;
              } else {
                g.transition(ClassicGroup.State.DEAD);
                groups.remove(id, g);
              }
              out.put(id, Errors.NONE);
            }
            return null;
          }, owner));
        }
      }
      return CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new)).thenApply(x -> out);
    });
  }

  // ---------------------------------------------------------------- describe, list

  /** A snapshot of one group for DescribeGroups / ListGroups; type is "classic" or "consumer". */
  record GroupView(String groupId, String type, String state, String protocolType, String protocolName, List<MemberView> members) {}

  /** A snapshot of one member. */
  record MemberView(String memberId, String groupInstanceId, String clientId, String clientHost, byte[] metadata, byte[] assignment) {}

  CompletableFuture<List<GroupView>> describe(List<String> groupIds) {
    return call(() -> {
      List<GroupView> out = new ArrayList<>();
      for (String id : groupIds) {
        ClassicGroup g = groups.get(id);
        ConsumerGroup cg = consumerGroups.get(id);
        out.add(g != null ? view(g, true) : cg != null ? view(cg) : null);
      }
      return done(out);
    });
  }

  CompletableFuture<List<GroupView>> list() {
    return call(() -> {
      List<GroupView> out = new ArrayList<>();
      for (ClassicGroup g : groups.values()) {
        out.add(view(g, false));
      }
      consumerGroups.values().forEach(g -> out.add(view(g)));
      return done(out);
    });
  }

  private static GroupView view(ClassicGroup g, boolean withMembers) {
    List<MemberView> members = new ArrayList<>();
    if (withMembers) {
      boolean stable = g.state == ClassicGroup.State.STABLE;
      for (Member m : g.members.values()) {
        members.add(new MemberView(m.memberId, m.groupInstanceId, m.clientId, m.clientHost,
            stable && g.protocolName != null ? m.metadata(g.protocolName) : new byte[0], stable ? m.assignment : new byte[0]));
      }
    }
    return new GroupView(g.groupId, "classic", g.state.kafkaName, g.protocolType == null ? "" : g.protocolType,
        g.state == ClassicGroup.State.STABLE && g.protocolName != null ? g.protocolName : "", members);
  }

  private static GroupView view(ConsumerGroup g) {
    return new GroupView(g.groupId, "consumer", g.state(), "consumer", "", List.of());
  }

  // ---------------------------------------------------------------- consumer protocol (KIP-848)

  /** A consumer group heartbeat, answered once the group state it changed is durable. */
  CompletableFuture<ConsumerGroupHeartbeatResponseData> consumerHeartbeat(ConsumerGroupCoordinator.Heartbeat h) {
    return call(() -> {
      ConsumerGroup before = consumerGroups.get(h.groupId());
      ConsumerGroupHeartbeatResponseData r = consumer.heartbeat(h);
      ConsumerGroup g = consumerGroups.getOrDefault(h.groupId(), before);
      if (g == null) {
        return done(r);
      }
      return storeConsumerGroup(g).handle((v, e) -> {
        if (e == null) {
          return r;
        }
        log.warn("could not store consumer group {} at epoch {}: {}", g.groupId, g.groupEpoch, e.toString());
        Errors err = toCoordinatorError(e);
        return new ConsumerGroupHeartbeatResponseData().setErrorCode(err.code())
            .setErrorMessage("the group's new state could not be stored: " + e.getMessage());
      });
    });
  }

  /** Stands for a consumer group state whose write failed: equal to no real state, so the next change writes again. */
  private static final ConsumerGroupMetadata UNKNOWN_STORED = new ConsumerGroupMetadata(-1, -1, null, Map.of(), List.of());

  /**
   * Appends the consumer group's state if it differs from what was last stored, or a tombstone if
   * the group is gone and something was stored; completes on the owner thread. In-memory state
   * is not rolled back on failure (unlike the classic path): the next change writes it again.
   */
  private CompletableFuture<Void> storeConsumerGroup(ConsumerGroup g) {
    ConsumerGroupMetadata next = consumerGroups.get(g.groupId) == g ? ConsumerGroupMetadata.of(g) : null;
    if (java.util.Objects.equals(next, g.stored)) {
      return done(null);
    }
    g.stored = next;
    return offsets.append(g.groupId, java.util.Collections.singletonList(OffsetLog.groupRecord(g.groupId, next)))
        .whenCompleteAsync((v, e) -> {
          if (e != null && g.stored == next) {
            g.stored = UNKNOWN_STORED;
          }
        }, owner);
  }

  private void forgetConsumerGroup(ConsumerGroup g) {
    consumer.maybeForget(g);
    storeInBackground(storeConsumerGroup(g), g.groupId);
  }

  private static void storeInBackground(CompletableFuture<Void> write, String groupId) {
    write.exceptionally(e -> {
      log.warn("could not store the state of group {}: {}", groupId, e.toString());
      return null;
    });
  }

  CompletableFuture<List<ConsumerGroupDescribeResponseData.DescribedGroup>> consumerDescribe(List<String> groupIds, short version) {
    return call(() -> done(groupIds.stream().map(id -> consumer.describe(id, version)).toList()));
  }

  private static <T> CompletableFuture<T> done(T value) {
    return CompletableFuture.completedFuture(value);
  }

  @Override
  public void close() {
    owner.shutdownNow();
  }
}
