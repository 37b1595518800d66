package io.tidemark.broker.group;

import static io.tidemark.broker.group.GroupCoordinator.done;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.IntPredicate;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;

/**
 * Committed offsets of the groups coordinated here, of both protocols: OffsetCommit (checked
 * against the group's protocol: {@link ClassicGroupCoordinator#checkCommit} or
 * {@link ConsumerGroupCoordinator}), TxnOffsetCommit (pending until the transaction's marker lands
 * in the group's offsets partition), OffsetFetch, OffsetDelete and the copy read by the lag meters.
 * A commit is visible only once it is durable in the {@link OffsetLog}. The offsets themselves
 * live in each group ({@code ClassicGroup.offsets}, {@code ConsumerGroup.offsets}); this class
 * holds the transactions' pending ones.
 *
 * <p>Threading: one owner thread, the group coordinator's ({@code owner}), shared with the two
 * protocol coordinators; entry points hand their work to it and return futures. No locking.
 */
final class GroupOffsets {

  static final int MAX_METADATA_CHARS = 4096;

  private final Time time;
  private final ScheduledExecutorService owner;
  private final OffsetLog offsets;
  private final GroupRegistry registry;
  private final Map<String, ClassicGroup> groups;
  private final Map<String, ConsumerGroup> consumerGroups;
  private final int maxGroups;
  private final ClassicGroupCoordinator classic;
  private final ConsumerGroupCoordinator consumer;
  /** Forgets an emptied consumer group (and stores its removal). */
  private final java.util.function.Consumer<ConsumerGroup> forgetConsumerGroup;
  /** Whether a partition of the offsets topic is loading here ({@link GroupLoader#loading}). */
  private final IntPredicate loading;
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

  GroupOffsets(Time time, ScheduledExecutorService owner, OffsetLog offsets, GroupRegistry registry, int maxGroups,
      ClassicGroupCoordinator classic, ConsumerGroupCoordinator consumer,
      java.util.function.Consumer<ConsumerGroup> forgetConsumerGroup, IntPredicate loading) {
    this.time = time;
    this.owner = owner;
    this.offsets = offsets;
    this.registry = registry;
    this.groups = registry.classic;
    this.consumerGroups = registry.consumer;
    this.maxGroups = maxGroups;
    this.classic = classic;
    this.consumer = consumer;
    this.forgetConsumerGroup = forgetConsumerGroup;
    this.loading = loading;
  }

  /** Runs {@code work} on the owner thread. */
  private <T> CompletableFuture<T> call(Callable<CompletableFuture<T>> work) {
    return GroupCoordinator.call(owner, work);
  }

  /** Drops the pending transactional offsets of the groups kept in {@code partition} (it unloads). */
  void unload(int partition) {
    endedWhileLoading.remove(partition);
    for (Map<String, Map<TopicPartition, ClassicGroup.Committed>> byGroup : pendingTxnOffsets.values()) {
      byGroup.keySet().removeIf(g -> offsets.partitionFor(g) == partition);
    }
    pendingTxnOffsets.values().removeIf(Map::isEmpty);
  }

  /**
   * Takes over the transactional offsets a load of {@code loadedPartition} found pending, then
   * applies the transactions that ended in that partition while it was loading.
   */
  void loaded(int loadedPartition, Map<Long, List<OffsetLog.Entry>> loadedPending) {
    loadedPending.forEach((pid, entries) -> entries.forEach(e -> {
      if (e.committed() != null) {
        pendingTxnOffsets.computeIfAbsent(pid, p -> new HashMap<>()).computeIfAbsent(e.group(), g -> new HashMap<>())
            .put(e.partition(), e.committed());
      }
    }));
    Map<Long, Boolean> ended = endedWhileLoading.remove(loadedPartition);
    if (ended != null) {
      ended.forEach((pid, commit) -> applyTransactionEnd(loadedPartition, pid, commit));
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
        return writeOffsets(groupId, cg.offsets, commits, () -> forgetConsumerGroup.accept(cg));
      }
      ClassicGroup g = groups.get(groupId);
      Errors groupError = groupId == null || groupId.isEmpty() ? Errors.INVALID_GROUP_ID : ClassicGroupCoordinator.checkCommit(g, memberId, instanceId,
          generation, version);
      if (groupError == Errors.NONE && g != null && memberId != null && g.members.containsKey(memberId)
          && (g.state == ClassicGroup.State.STABLE || g.state == ClassicGroup.State.PREPARING_REBALANCE)) {
        classic.scheduleSession(g, g.members.get(memberId)); // a commit proves the member alive, as a heartbeat does
      }
      if (groupError != Errors.NONE) {
        return done(new ArrayList<>(java.util.Collections.nCopies(commits.size(), groupError)));
      }
      if (g == null) {
        if (registry.count() >= maxGroups) {
          return done(new ArrayList<>(java.util.Collections.nCopies(commits.size(), Errors.GROUP_MAX_SIZE_REACHED)));
        }
        g = new ClassicGroup(groupId);
        groups.put(groupId, g);
      }
      ClassicGroup group = g;
      return writeOffsets(groupId, group.offsets, commits, () -> classic.maybeForget(group));
    });
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
        Errors err = OffsetLog.toCoordinatorError(e);
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
          Errors err = OffsetLog.toCoordinatorError(e);
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
    Errors e = ClassicGroupCoordinator.checkCommit(g, memberId, instanceId, generation, (short) 8);
    return e == Errors.REBALANCE_IN_PROGRESS ? Errors.NONE : e;
  }

  /**
   * The transaction of {@code producerId} ended in {@code offsetsPartition} (its marker is durable
   * there): its pending offsets of the groups kept in that partition become committed offsets
   * (COMMIT) or are dropped (ABORT). Callable from any thread.
   */
  void completeTransaction(int offsetsPartition, long producerId, boolean commit) {
    owner.execute(() -> {
      if (loading.test(offsetsPartition)) {
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
        forget = () -> forgetConsumerGroup.accept(cg);
      } else if (g != null) {
        held = g.offsets;
        inUse = topic -> !g.members.isEmpty() && g.protocolName != null
            && g.members.values().stream().anyMatch(m -> subscribed.test(m.metadata(g.protocolName), topic));
        forget = () -> classic.maybeForget(g);
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
}
