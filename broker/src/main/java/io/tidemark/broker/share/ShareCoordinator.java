package io.tidemark.broker.share;

import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.partition.Partitions;
import io.tidemark.broker.protocol.ErrorMapping;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.broker.topic.TopicRegistry;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;

/**
 * The share coordinator (KIP-932): the keeper of share-partition state, for the keys whose
 * {@value ShareStateLog#TOPIC} partition is led by this broker. It serves Kafka's
 * Initialize/Read/Write/DeleteShareGroupState and ReadShareGroupStateSummary, locally for the
 * partition leaders on this broker and over the network (inter-broker listener) for the others;
 * it answers NOT_COORDINATOR for keys whose state partition is not led here, so callers follow the
 * state partition when it moves (the new leader replays its stream before serving it).
 *
 * <p><b>Fencing</b>, as Kafka's share coordinator: each key keeps a state epoch and the highest
 * leader epoch of its data partition seen in a Read or Write. Initialize must name a state epoch
 * above the stored one (FENCED_STATE_EPOCH otherwise) and replaces the state with a start offset
 * and nothing in flight; Write must carry the stored state epoch (FENCED_STATE_EPOCH: the state was
 * re-initialised or deleted since that leader read it; the leader reloads) and a leader epoch not
 * below the stored one (FENCED_LEADER_EPOCH: the data partition has a newer leader); a Read with a
 * higher leader epoch durably raises the stored one before it answers, so a former leader's later
 * write is refused. A Write replaces the whole state (Tidemark's partition leaders always send it
 * whole). Delete keeps the epochs and drops the snapshot.
 *
 * <p><b>Bad input changes nothing</b>, as in Kafka: a key whose topic id or partition the cluster
 * does not know is answered UNKNOWN_TOPIC_OR_PARTITION (a null topic id or a negative partition
 * INVALID_REQUEST) before its state partition is touched, so no state is ever kept for it.
 *
 * <p><b>Threading:</b> one owner thread ({@code tidemark-share-coordinator}) holds the
 * {@link ShareStateLog}; every operation is handed to it, and a change is answered once durable.
 */
public final class ShareCoordinator implements AutoCloseable {

  /** What an operation found: NONE with the state (null when the key has none), or an error. */
  record Outcome(Errors error, String message, ShareStateLog.Stored stored) {

    static Outcome ok(ShareStateLog.Stored stored) {
      return new Outcome(Errors.NONE, null, stored);
    }

    static Outcome failed(Errors error, String message) {
      return new Outcome(error, message, null);
    }
  }

  private final ExecutorService owner = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "tidemark-share-coordinator");
    t.setDaemon(true);
    return t;
  });
  private final ShareStateLog log;
  private final TopicRegistry registry;
  private final Map<Integer, CompletableFuture<ShareStateLog.Loaded>> loading = new HashMap<>();

  public ShareCoordinator(Partitions partitions, TopicRegistry registry, int statePartitions, Time time) {
    this.log = new ShareStateLog(partitions, statePartitions, time);
    this.registry = registry;
    partitions.addListener(new Partitions.Listener() {
      @Override
      public void opened(PartitionLog opened) {}

      @Override
      public void closed(PartitionLog closed) {
        if (closed.topicPartition().topic().equals(ShareStateLog.TOPIC)) {
          owner.execute(log::forgetClosed);
        }
      }
    });
  }

  /** The {@value ShareStateLog#TOPIC} partition holding {@code key}'s state. Any thread. */
  int partitionFor(ShareKey key) {
    return log.partitionFor(key);
  }

  /**
   * FindCoordinator with key type SHARE: the broker leading the state partition of {@code key}
   * ("group:topicId:partition"), empty while it has no leader. Any thread.
   *
   * @throws IllegalArgumentException when {@code key} is not a share-partition key
   */
  public Optional<Integer> coordinatorOf(String key) {
    ShareKey parsed = ShareKey.parse(key);
    int p = log.partitionFor(parsed);
    return registry.topic(ShareStateLog.TOPIC).filter(t -> p < t.partitions().size()).map(t -> t.partitions().get(p))
        .map(TopicInfo.PartitionInfo::leader).filter(id -> id >= 0);
  }

  /**
   * The outcome refusing an operation on {@code key}, or null when its topic partition exists.
   * {@code unknown} is the error for a partition the cluster does not know: Read and Write, which
   * need state that cannot exist for it, answer INVALID_REQUEST as for any uninitialized share
   * partition; the others UNKNOWN_TOPIC_OR_PARTITION (Kafka's order of checks).
   */
  private Outcome refusal(ShareKey key, Errors unknown) {
    if (key.topicId() == null || Uuid.ZERO_UUID.equals(key.topicId()) || key.partition() < 0) {
      return Outcome.failed(Errors.INVALID_REQUEST, "share partition " + key + " has no topic id or a negative partition");
    }
    boolean known = registry.topic(key.topicId()).filter(t -> key.partition() < t.partitions().size()).isPresent();
    return known ? null : Outcome.failed(unknown, unknown == Errors.INVALID_REQUEST ? "share partition " + key + " is not initialized"
        : "topic partition " + key.topicId() + "-" + key.partition() + " does not exist");
  }

  /** ReadShareGroupState: the state of {@code key}, fencing leader epochs below the stored one ({@code leaderEpoch} -1: no check). */
  CompletableFuture<Outcome> read(ShareKey key, int leaderEpoch) {
    return on(key, Errors.INVALID_REQUEST, (l, stored) -> {
      if (stored == null || leaderEpoch < 0 || leaderEpoch == stored.leaderEpoch()) {
        return CompletableFuture.completedFuture(Outcome.ok(stored));
      }
      if (leaderEpoch < stored.leaderEpoch()) {
        return CompletableFuture.completedFuture(Outcome.failed(Errors.FENCED_LEADER_EPOCH, "leader epoch " + leaderEpoch
            + " is below " + stored.leaderEpoch() + ", the epoch of a newer leader of the partition"));
      }
      ShareStateLog.Stored raised = new ShareStateLog.Stored(stored.stateEpoch(), leaderEpoch, stored.snapshot());
      return write(key, raised);
    });
  }

  /** ReadShareGroupStateSummary: the state of {@code key} without fencing. */
  CompletableFuture<Outcome> summary(ShareKey key) {
    return on(key, Errors.UNKNOWN_TOPIC_OR_PARTITION, (l, stored) -> CompletableFuture.completedFuture(Outcome.ok(stored)));
  }

  /** InitializeShareGroupState: a fresh state at {@code startOffset} under a state epoch above the stored one. */
  CompletableFuture<Outcome> initialize(ShareKey key, int stateEpoch, long startOffset) {
    return on(key, Errors.UNKNOWN_TOPIC_OR_PARTITION, (l, stored) -> {
      if (startOffset < 0) {
        return CompletableFuture.completedFuture(Outcome.failed(Errors.INVALID_REQUEST, "start offset " + startOffset + " is negative"));
      }
      if (stored != null && stateEpoch <= stored.stateEpoch()) {
        return CompletableFuture.completedFuture(Outcome.failed(Errors.FENCED_STATE_EPOCH, "state epoch " + stateEpoch
            + " is not above the stored " + stored.stateEpoch()));
      }
      return write(key, new ShareStateLog.Stored(stateEpoch, stored == null ? -1 : stored.leaderEpoch(),
          new SharePartition.Snapshot(startOffset, java.util.List.of())));
    });
  }

  /** WriteShareGroupState: replaces the state of {@code key}, fenced by state and leader epoch. */
  CompletableFuture<Outcome> write(ShareKey key, int stateEpoch, int leaderEpoch, SharePartition.Snapshot snapshot) {
    return on(key, Errors.INVALID_REQUEST, (l, stored) -> {
      if (stored == null || stored.snapshot() == null) {
        return CompletableFuture.completedFuture(Outcome.failed(Errors.INVALID_REQUEST, "share partition " + key
            + " is not initialized (deleted, or never initialized)"));
      }
      if (stateEpoch != stored.stateEpoch()) {
        return CompletableFuture.completedFuture(Outcome.failed(Errors.FENCED_STATE_EPOCH, "state epoch " + stateEpoch
            + " is not the stored " + stored.stateEpoch() + " (the state was re-initialized)"));
      }
      if (leaderEpoch < stored.leaderEpoch()) {
        return CompletableFuture.completedFuture(Outcome.failed(Errors.FENCED_LEADER_EPOCH, "leader epoch " + leaderEpoch
            + " is below " + stored.leaderEpoch() + ", the epoch of a newer leader of the partition"));
      }
      return write(key, new ShareStateLog.Stored(stateEpoch, Math.max(leaderEpoch, stored.leaderEpoch()), snapshot));
    });
  }

  /** DeleteShareGroupState: drops the snapshot of {@code key} (its epochs stay); NONE when it had none. */
  CompletableFuture<Outcome> delete(ShareKey key) {
    return on(key, Errors.UNKNOWN_TOPIC_OR_PARTITION, (l, stored) -> stored == null || stored.snapshot() == null ? CompletableFuture.completedFuture(Outcome.ok(null))
        : write(key, new ShareStateLog.Stored(stored.stateEpoch(), stored.leaderEpoch(), null)));
  }

  private interface Operation {
    CompletableFuture<Outcome> apply(ShareStateLog.Loaded loaded, ShareStateLog.Stored stored);
  }

  /** Runs {@code op} on the owner thread once {@code key}'s state partition is replayed here. */
  private CompletableFuture<Outcome> on(ShareKey key, Errors unknown, Operation op) {
    Outcome refused = refusal(key, unknown);
    if (refused != null) {
      return CompletableFuture.completedFuture(refused);
    }
    return CompletableFuture.supplyAsync(() -> loaded(log.partitionFor(key)), owner).thenCompose(Function.identity())
        .thenComposeAsync(l -> op.apply(l, log.get(l, key)), owner)
        .exceptionally(e -> Outcome.failed(ErrorMapping.toErrors(e), ErrorMapping.message(e)));
  }

  private CompletableFuture<Outcome> write(ShareKey key, ShareStateLog.Stored stored) {
    int p = log.partitionFor(key);
    return log.write(key, stored).handleAsync((x, e) -> {
      if (e != null) {
        log.forget(p);
        return Outcome.failed(ErrorMapping.toErrors(e), ErrorMapping.message(e));
      }
      return Outcome.ok(stored);
    }, owner);
  }

  /** The replayed state partition {@code p}, replaying it first if needed. Owner thread. */
  private CompletableFuture<ShareStateLog.Loaded> loaded(int p) {
    ShareStateLog.Loaded l;
    try {
      l = log.current(p);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    if (l != null) {
      return CompletableFuture.completedFuture(l);
    }
    CompletableFuture<ShareStateLog.Loaded> pending = loading.get(p);
    if (pending != null) {
      return pending;
    }
    CompletableFuture<ShareStateLog.Loaded> f = log.read(p).thenApplyAsync(x -> log.install(p, x), owner);
    loading.put(p, f);
    f.whenCompleteAsync((x, e) -> loading.remove(p, f), owner);
    return f;
  }

  @Override
  public void close() {
    owner.shutdownNow();
  }
}
