package io.tidemark.broker.fetch;

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.tidemark.broker.partition.PartitionLog;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.TopicPartition;

/**
 * Fetches waiting for data (long-poll on MaxWaitMs / MinBytes): each is registered under the
 * partitions it reads, woken when one of them gets an append, and expired by a timer wheel.
 * Bounded to {@code maxWaiting}; beyond it {@link #park} refuses and the fetch is answered at once.
 *
 * <p>Thread-safe: concurrent maps; a waiter's own state is guarded by the waiter.
 */
final class DelayedFetches implements PartitionLog.AppendListener, AutoCloseable {

  /** A parked fetch. */
  interface Waiter {
    /** Called on appends to one of its partitions and on expiry; must be idempotent after completion. */
    void wake(boolean expired);

    boolean completed();
  }

  private final Map<TopicPartition, Set<Waiter>> byPartition = new ConcurrentHashMap<>();
  private final HashedWheelTimer timer = new HashedWheelTimer(r -> {
    Thread t = new Thread(r, "fetch-timer");
    t.setDaemon(true);
    return t;
  }, 10, TimeUnit.MILLISECONDS, 512);
  private final AtomicInteger waiting = new AtomicInteger();
  private final int maxWaiting;

  DelayedFetches(int maxWaiting) {
    this.maxWaiting = maxWaiting;
  }

  /** Parks {@code waiter} on {@code partitions} for {@code maxWaitMs}; false when full. */
  boolean park(Waiter waiter, List<TopicPartition> partitions, long maxWaitMs) {
    if (waiting.incrementAndGet() > maxWaiting) {
      waiting.decrementAndGet();
      return false;
    }
    for (TopicPartition tp : partitions) {
      byPartition.computeIfAbsent(tp, k -> ConcurrentHashMap.newKeySet()).add(waiter);
    }
    timer.newTimeout((Timeout t) -> waiter.wake(true), Math.max(1, maxWaitMs), TimeUnit.MILLISECONDS);
    return true;
  }

  /** Removes a completed waiter from its partitions. */
  void unpark(Waiter waiter, List<TopicPartition> partitions) {
    waiting.decrementAndGet();
    for (TopicPartition tp : partitions) {
      Set<Waiter> set = byPartition.get(tp);
      if (set != null) {
        set.remove(waiter);
        if (set.isEmpty()) {
          byPartition.remove(tp, set);
        }
      }
    }
  }

  @Override
  public void onAppend(PartitionLog partition) {
    Set<Waiter> set = byPartition.get(partition.topicPartition());
    if (set != null) {
      for (Waiter w : set) {
        w.wake(false);
      }
    }
  }

  int waiting() {
    return waiting.get();
  }

  @Override
  public void close() {
    timer.stop();
  }
}
