package io.tidemark.broker.group;

import io.tidemark.broker.partition.PartitionLog;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads the groups of the offsets topic's partitions that open here ({@link OffsetLog}: committed
 * offsets, pending transactional offsets and group metadata of both protocols) and drops them when
 * a partition closes, so a group's coordinator follows its offsets partition. While a partition
 * loads, its groups' requests are answered COORDINATOR_LOAD_IN_PROGRESS ({@link #loading}).
 *
 * <p>Threading: one owner thread, the group coordinator's ({@code owner}), shared with the
 * protocol coordinators; the log is read on the partition's threads and every record handed to the
 * owner. {@link #loading} is callable from any thread (the request gate).
 */
final class GroupLoader {

  private static final Logger log = LoggerFactory.getLogger(GroupLoader.class);

  private final ScheduledExecutorService owner;
  private final OffsetLog offsets;
  private final Map<String, ClassicGroup> groups;
  private final Map<String, ConsumerGroup> consumerGroups;
  private final ClassicGroupCoordinator classic;
  private final ConsumerGroupCoordinator consumer;
  private final GroupOffsets groupOffsets;
  /** The loads of offsets-topic partitions open here, by partition (owner thread; read by the gate). */
  private final Map<Integer, CompletableFuture<Void>> loads = new java.util.concurrent.ConcurrentHashMap<>();

  GroupLoader(ScheduledExecutorService owner, OffsetLog offsets, GroupRegistry registry, ClassicGroupCoordinator classic,
      ConsumerGroupCoordinator consumer, GroupOffsets groupOffsets) {
    this.owner = owner;
    this.offsets = offsets;
    this.groups = registry.classic;
    this.consumerGroups = registry.consumer;
    this.classic = classic;
    this.consumer = consumer;
    this.groupOffsets = groupOffsets;
  }

  /** Runs {@code work} on the owner thread. */
  private <T> CompletableFuture<T> call(Callable<CompletableFuture<T>> work) {
    return GroupCoordinator.call(owner, work);
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
    attemptLoad(partitionLog, load, 1);
  }

  /**
   * One attempt to load {@code partitionLog}'s groups for {@code load}. A failed attempt (the
   * log's objects could not be read: the controller or the object store did not answer) applied
   * nothing; the partition stays loading, so its groups' requests keep answering
   * COORDINATOR_LOAD_IN_PROGRESS (never served as if the partition held no groups, which would let
   * a consumer reset to its earliest offset), and the load is tried again after a backoff for as
   * long as the partition stays open here. On the owner thread.
   */
  private void attemptLoad(PartitionLog partitionLog, CompletableFuture<Void> load, int attempt) {
    int partition = partitionLog.topicPartition().partition();
    loadPartition(partitionLog).whenComplete((v, e) -> owner.execute(() -> {
      if (loads.get(partition) != load) {
        return; // closed (or opened again) meanwhile
      }
      if (e == null) {
        load.complete(null);
        return;
      }
      long backoff = LoadRetry.schedule(owner, attempt, () -> loads.get(partition) == load,
          () -> attemptLoad(partitionLog, load, attempt + 1));
      log.warn("loading the groups of {} failed (attempt {}); their requests answer COORDINATOR_LOAD_IN_PROGRESS, "
          + "trying again in {} ms: {}", partitionLog.topicPartition(), attempt, backoff, e.toString());
    }));
  }

  /** Drops the groups of {@code partition} (on the owner thread). */
  private void unload(int partition) {
    groupOffsets.unload(partition);
    classic.unload(partition);
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
      int loadedPartition = partitionLog.topicPartition().partition();
      groupOffsets.loaded(loadedPartition, loadedPending);
      int withMembers = 0;
      for (Map.Entry<String, StoredGroup> e : loaded.groups().entrySet()) {
        switch (e.getValue()) {
          case GroupMetadata md -> {
            ClassicGroup g = groups.computeIfAbsent(e.getKey(), ClassicGroup::new);
            g.restore(md);
            for (Member m : g.members.values()) {
              classic.scheduleSession(g, m);
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
}
