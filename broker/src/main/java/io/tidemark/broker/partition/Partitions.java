package io.tidemark.broker.partition;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;

/**
 * The partitions this broker currently leads, by topic partition. A partition absent here is
 * answered with NOT_LEADER_OR_FOLLOWER. Thread-safe: a concurrent map written by the topic
 * lifecycle and read by every request handler.
 */
public final class Partitions {

  /** Told when a partition starts or stops being served here (on the thread that changed it; must return quickly). */
  public interface Listener {
    void opened(PartitionLog log);

    void closed(PartitionLog log);
  }

  private final Map<TopicPartition, PartitionLog> open = new ConcurrentHashMap<>();
  private final List<Listener> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();
  /**
   * Partitions being opened here, each with the produce requests waiting for it in arrival order
   * (at most {@link #MAX_WAITERS}); guarded by itself.
   */
  private final Map<TopicPartition, List<java.util.concurrent.CompletableFuture<Void>>> opening = new java.util.HashMap<>();
  /** Most waiters per opening partition; more are not kept waiting. */
  static final int MAX_WAITERS = 10_000;

  public void addListener(Listener listener) {
    listeners.add(listener);
  }

  public Optional<PartitionLog> get(TopicPartition tp) {
    return Optional.ofNullable(open.get(tp));
  }

  /** The partition, or a NOT_LEADER failure naming it. */
  public PartitionLog require(TopicPartition tp) {
    PartitionLog p = open.get(tp);
    if (p == null) {
      throw new PartitionException(PartitionException.Outcome.NOT_LEADER, "partition " + tp + " is not served by this broker");
    }
    return p;
  }

  public void put(PartitionLog log) {
    PartitionLog previous = open.put(log.topicPartition(), log);
    if (previous != null && previous != log) {
      listeners.forEach(l -> l.closed(previous));
    }
    listeners.forEach(l -> l.opened(log));
  }

  public Optional<PartitionLog> remove(TopicPartition tp) {
    PartitionLog removed = open.remove(tp);
    if (removed != null) {
      listeners.forEach(l -> l.closed(removed));
    }
    return Optional.ofNullable(removed);
  }

  /** Whether opens are tracked (a produce may wait for its opening partition); set once, at start. */
  private volatile boolean trackOpening;

  /** Tracks partitions while they open, so produce requests wait for them ({@code kafka.produce.opening.wait.ms} > 0). */
  public void trackOpening(boolean track) {
    this.trackOpening = track;
  }

  /** The partition starts opening here: {@link #whenOpened} waits for it until {@link #openEnded} (when tracked). */
  public void opening(TopicPartition tp) {
    if (!trackOpening) {
      return;
    }
    synchronized (opening) {
      opening.putIfAbsent(tp, new java.util.ArrayList<>());
    }
  }

  /** Whether the partition is open here, or opening and tracked (a produce for it waits for the open). */
  public boolean servedOrOpening(TopicPartition tp) {
    if (open.containsKey(tp)) {
      return true;
    }
    synchronized (opening) {
      return opening.containsKey(tp);
    }
  }

  /** The partition's open ended (after {@link #put} when it opened, or failed): its waiters go on, in arrival order. */
  public void openEnded(TopicPartition tp) {
    List<java.util.concurrent.CompletableFuture<Void>> waiters;
    synchronized (opening) {
      waiters = opening.remove(tp);
    }
    if (waiters != null) {
      waiters.forEach(w -> w.complete(null));
    }
  }

  /**
   * While {@code tp} is opening here, a future completed when its open ends (whether it opened or
   * not; the caller may complete it sooner, on a timeout, which changes nothing here); else null.
   * Waiters go on in the order they asked, so one producer's batches keep their order.
   */
  public java.util.concurrent.CompletableFuture<Void> whenOpened(TopicPartition tp) {
    synchronized (opening) {
      List<java.util.concurrent.CompletableFuture<Void>> waiters = opening.get(tp);
      if (waiters == null || waiters.size() >= MAX_WAITERS) {
        return null;
      }
      java.util.concurrent.CompletableFuture<Void> w = new java.util.concurrent.CompletableFuture<>();
      waiters.add(w);
      return w;
    }
  }

  /**
   * While some of {@code tps} are opening here, a future completed when all their opens ended (see
   * {@link #whenOpened(TopicPartition)}); null when none is (nothing to wait for).
   */
  public java.util.concurrent.CompletableFuture<Void> whenOpened(Collection<TopicPartition> tps) {
    if (!trackOpening || tps.isEmpty()) {
      return null;
    }
    List<java.util.concurrent.CompletableFuture<Void>> waits = new java.util.ArrayList<>();
    for (TopicPartition tp : new java.util.LinkedHashSet<>(tps)) {
      java.util.concurrent.CompletableFuture<Void> w = whenOpened(tp);
      if (w != null) {
        waits.add(w);
      }
    }
    return waits.isEmpty() ? null : java.util.concurrent.CompletableFuture.allOf(waits.toArray(java.util.concurrent.CompletableFuture[]::new));
  }

  /** Requests waiting for {@code tp} to open here now (for tests and metrics). */
  public int waitingFor(TopicPartition tp) {
    synchronized (opening) {
      List<java.util.concurrent.CompletableFuture<Void>> waiters = opening.get(tp);
      return waiters == null ? 0 : (int) waiters.stream().filter(w -> !w.isDone()).count();
    }
  }

  /** Partitions that failed for good ({@link PartitionLog#failedForGood()}). */
  public List<TopicPartition> failedForGood() {
    return open.values().stream().filter(PartitionLog::failedForGood).map(PartitionLog::topicPartition).toList();
  }

  public Collection<PartitionLog> all() {
    return List.copyOf(open.values());
  }
}
