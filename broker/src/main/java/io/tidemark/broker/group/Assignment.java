package io.tidemark.broker.group;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BiPredicate;
import org.apache.kafka.common.Uuid;

/**
 * An immutable set of partitions addressed by topic id, as the consumer group protocol (KIP-848)
 * assigns them: topic id → sorted partition numbers. Topics with no partitions are never kept, so
 * two equal sets are {@code equals}. Safe to share across threads.
 */
final class Assignment {

  static final Assignment EMPTY = new Assignment(Map.of());

  private final Map<Uuid, SortedSet<Integer>> partitions;

  private Assignment(Map<Uuid, SortedSet<Integer>> partitions) {
    this.partitions = partitions;
  }

  /** A copy of {@code source}, dropping topics without partitions. */
  static Assignment of(Map<Uuid, ? extends java.util.Collection<Integer>> source) {
    Map<Uuid, SortedSet<Integer>> copy = new TreeMap<>();
    source.forEach((topic, ps) -> {
      if (!ps.isEmpty()) {
        copy.put(topic, Collections.unmodifiableSortedSet(new TreeSet<>(ps)));
      }
    });
    return copy.isEmpty() ? EMPTY : new Assignment(Collections.unmodifiableMap(copy));
  }

  Map<Uuid, SortedSet<Integer>> partitions() {
    return partitions;
  }

  boolean isEmpty() {
    return partitions.isEmpty();
  }

  int size() {
    return partitions.values().stream().mapToInt(SortedSet::size).sum();
  }

  boolean contains(Uuid topic, int partition) {
    SortedSet<Integer> ps = partitions.get(topic);
    return ps != null && ps.contains(partition);
  }

  /** Whether every partition of this set is in {@code other}. */
  boolean isSubsetOf(Assignment other) {
    return filter((t, p) -> !other.contains(t, p)).isEmpty();
  }

  /** The partitions of this set that {@code keep} accepts. */
  Assignment filter(BiPredicate<Uuid, Integer> keep) {
    Map<Uuid, List<Integer>> out = new TreeMap<>();
    partitions.forEach((t, ps) -> ps.forEach(p -> {
      if (keep.test(t, p)) {
        out.computeIfAbsent(t, x -> new java.util.ArrayList<>()).add(p);
      }
    }));
    return of(out);
  }

  Assignment minus(Assignment other) {
    return filter((t, p) -> !other.contains(t, p));
  }

  Assignment intersect(Assignment other) {
    return filter(other::contains);
  }

  Assignment union(Assignment other) {
    Map<Uuid, java.util.Set<Integer>> out = new TreeMap<>();
    partitions.forEach((t, ps) -> out.computeIfAbsent(t, x -> new TreeSet<>()).addAll(ps));
    other.partitions.forEach((t, ps) -> out.computeIfAbsent(t, x -> new TreeSet<>()).addAll(ps));
    return of(out);
  }

  /** Calls {@code action} for every partition, topics and partitions in ascending order. */
  void forEach(java.util.function.BiConsumer<Uuid, Integer> action) {
    partitions.forEach((t, ps) -> ps.forEach(p -> action.accept(t, p)));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Assignment a && a.partitions.equals(partitions);
  }

  @Override
  public int hashCode() {
    return partitions.hashCode();
  }

  @Override
  public String toString() {
    return partitions.toString();
  }
}
