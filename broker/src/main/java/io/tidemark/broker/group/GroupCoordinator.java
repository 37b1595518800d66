package io.tidemark.broker.group;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ConsumerGroupDescribeResponseData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The group coordinator of this node: owns the coordinator thread and wires its parts, each a
 * class of its own:
 * <ul>
 *   <li>{@link ClassicGroupCoordinator}: the classic protocol (JoinGroup, SyncGroup, Heartbeat,
 *       LeaveGroup) and the classic groups' state machine;
 *   <li>{@link ConsumerGroupCoordinator}: the consumer protocol (KIP-848), whose changed group
 *       state this class stores before a heartbeat is answered;
 *   <li>{@link GroupOffsets}: committed offsets of both (durable in {@link OffsetLog} before they
 *       are acknowledged or visible), transactional ones pending until their marker;
 *   <li>{@link GroupLoader}: groups loaded from, and dropped with, the offsets topic's partitions;
 *   <li>{@link GroupRegistry}: the one group namespace of both protocols.
 * </ul>
 * Here: DescribeGroups, ListGroups, DeleteGroups and the periodic sweep of emptied groups.
 *
 * <p>Threading: one owner thread ({@code group-coordinator}) runs every state change and timer of
 * every part; the parts share it because a group id moves between the protocols and both
 * protocols' commits, loads and deletions touch the same groups. Callers hand work to it through
 * {@link #call} (each part's entry points do) and get futures back; nothing locks. Bounded: at
 * most {@code maxGroups} groups and {@code maxGroupSize} members per group.
 */
public final class GroupCoordinator implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(GroupCoordinator.class);

  /** Settings of the coordinator. */
  public record Settings(int initialRebalanceDelayMs, int minSessionTimeoutMs, int maxSessionTimeoutMs, int maxGroupSize,
      int maxGroups, int consumerSessionTimeoutMs, int consumerHeartbeatIntervalMs) {}

  private final OffsetLog offsets;
  private final ScheduledExecutorService owner = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "group-coordinator");
    t.setDaemon(true);
    return t;
  });
  private final GroupRegistry registry = new GroupRegistry();
  private final Map<String, ClassicGroup> groups = registry.classic;
  private final Map<String, ConsumerGroup> consumerGroups = registry.consumer;
  private final ClassicGroupCoordinator classic;
  private final ConsumerGroupCoordinator consumer;
  private final GroupOffsets groupOffsets;
  private final GroupLoader loader;

  /**
   * How often emptied groups (classic and consumer) without offsets are swept away: Kafka's default
   * {@code offsets.retention.check.interval.ms}. Until then such a group stays Empty, as in Kafka
   * (it can be described, listed and deleted).
   */
  static final long EMPTY_GROUP_SWEEP_MS = 600_000;

  GroupCoordinator(Settings settings, Time time, OffsetLog offsets, TopicView topics) {
    this.offsets = offsets;
    this.classic = new ClassicGroupCoordinator(new ClassicGroupCoordinator.Settings(settings.initialRebalanceDelayMs(),
        settings.minSessionTimeoutMs(), settings.maxSessionTimeoutMs(), settings.maxGroupSize(), settings.maxGroups()), owner, offsets,
        registry);
    this.consumer = new ConsumerGroupCoordinator(owner, new ConsumerGroupCoordinator.Settings(settings.consumerSessionTimeoutMs(),
        settings.consumerHeartbeatIntervalMs(), settings.maxGroupSize(), settings.maxGroups()), topics, groups, consumerGroups,
        g -> storeInBackground(storeConsumerGroup(g), g.groupId));
    this.groupOffsets = new GroupOffsets(time, owner, offsets, registry, settings.maxGroups(), classic, consumer,
        this::forgetConsumerGroup, this::loading);
    this.loader = new GroupLoader(owner, offsets, registry, classic, consumer, groupOffsets);
    owner.scheduleWithFixedDelay(this::sweepEmptyGroups, EMPTY_GROUP_SWEEP_MS, EMPTY_GROUP_SWEEP_MS, TimeUnit.MILLISECONDS);
  }

  /** The classic protocol. */
  ClassicGroupCoordinator classic() {
    return classic;
  }

  /** Committed offsets of both protocols. */
  GroupOffsets offsets() {
    return groupOffsets;
  }

  /** Loading of the groups from the offsets topic. */
  GroupLoader loader() {
    return loader;
  }

  private boolean loading(int offsetsPartition) {
    return loader.loading(offsetsPartition);
  }

  /** Runs {@code work} on the owner thread. */
  <T> CompletableFuture<T> call(Callable<CompletableFuture<T>> work) {
    return call(owner, work);
  }

  /** Runs {@code work} on {@code owner} (the coordinator thread), completing the returned future with its result. */
  static <T> CompletableFuture<T> call(Executor owner, Callable<CompletableFuture<T>> work) {
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

  /** The sweep of emptied groups without offsets (owner thread). */
  private void sweepEmptyGroups() {
    try {
      new ArrayList<>(groups.values()).forEach(classic::forgetIfEmpty);
      for (ConsumerGroup g : new ArrayList<>(consumerGroups.values())) {
        if (consumer.forgetIfEmpty(g)) {
          storeInBackground(storeConsumerGroup(g), g.groupId); // its tombstone
        }
      }
    } catch (RuntimeException e) {
      log.warn("sweep of empty groups failed: {}", e.toString());
    }
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
              out.put(id, OffsetLog.toCoordinatorError(e));
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
        Errors err = OffsetLog.toCoordinatorError(e);
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

  static <T> CompletableFuture<T> done(T value) {
    return CompletableFuture.completedFuture(value);
  }

  @Override
  public void close() {
    owner.shutdownNow();
  }
}
