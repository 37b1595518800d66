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

  /** Partitions that failed for good ({@link PartitionLog#failedForGood()}). */
  public List<TopicPartition> failedForGood() {
    return open.values().stream().filter(PartitionLog::failedForGood).map(PartitionLog::topicPartition).toList();
  }

  public Collection<PartitionLog> all() {
    return List.copyOf(open.values());
  }
}
