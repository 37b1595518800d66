package io.tidemark.broker.cluster;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Where config values of non-topic resources are agreed: dynamic broker configs (resource type
 * BROKER, named by a broker id or {@code ""} for the cluster-wide default) and client-metrics
 * subscriptions. The seam to the metadata authority: the server keeps them as config records in the
 * replicated controller, so every broker sees the same values and they survive restarts.
 * {@link #configs} is read on request paths and must be cheap; {@link #alter} completes once the
 * change is durable and visible here. Thread-safe.
 */
public interface ResourceConfigStore {

  /** One value of one resource; a null value removes it. */
  record Change(byte resourceType, String resourceName, String key, String value) {}

  /** The resources of one type that have values, each with its values (resource name → key → value). Immutable. */
  Map<String, Map<String, String>> configs(byte resourceType);

  /** Applies the changes together: all or none. */
  CompletableFuture<Void> alter(List<Change> changes);

  /** Calls {@code listener} (on any thread, quickly) whenever {@link #configs} may have changed, by this broker or another. */
  void onChange(Runnable listener);

  /** Values in this process's memory, for a broker alone (tests); lost on exit. */
  static ResourceConfigStore memory() {
    return new ResourceConfigStore() {
      private volatile Map<Byte, Map<String, Map<String, String>>> current = Map.of();
      private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

      @Override
      public Map<String, Map<String, String>> configs(byte resourceType) {
        return current.getOrDefault(resourceType, Map.of());
      }

      @Override
      public synchronized CompletableFuture<Void> alter(List<Change> changes) {
        Map<Byte, Map<String, Map<String, String>>> next = new HashMap<>();
        current.forEach((t, byName) -> byName.forEach((n, v) -> next.computeIfAbsent(t, x -> new HashMap<>()).put(n, new HashMap<>(v))));
        for (Change c : changes) {
          Map<String, Map<String, String>> byName = next.computeIfAbsent(c.resourceType(), x -> new HashMap<>());
          Map<String, String> values = byName.computeIfAbsent(c.resourceName(), x -> new HashMap<>());
          if (c.value() == null) {
            values.remove(c.key());
          } else {
            values.put(c.key(), c.value());
          }
          if (values.isEmpty()) {
            byName.remove(c.resourceName());
          }
        }
        current = freeze(next);
        new ArrayList<>(listeners).forEach(Runnable::run);
        return CompletableFuture.completedFuture(null);
      }

      @Override
      public void onChange(Runnable listener) {
        listeners.add(listener);
      }
    };
  }

  /** An immutable copy of type → name → key → value. */
  static Map<Byte, Map<String, Map<String, String>>> freeze(Map<Byte, Map<String, Map<String, String>>> values) {
    Map<Byte, Map<String, Map<String, String>>> out = new HashMap<>();
    values.forEach((t, byName) -> {
      Map<String, Map<String, String>> names = new HashMap<>();
      byName.forEach((n, v) -> names.put(n, Map.copyOf(v)));
      out.put(t, Map.copyOf(names));
    });
    return Map.copyOf(out);
  }
}
