package io.tidemark.broker.quota;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.quota.ClientQuotaEntity;

/**
 * Where client quotas live (AlterClientQuotas, {@code kafka-configs --entity-type users/clients}):
 * the seam to the metadata authority (the server keeps them in the replicated controller).
 * {@link #quotas()} is read on request paths and must be cheap; writes complete once durable and
 * visible here. Thread-safe.
 */
public interface QuotaStore {

  /** One quota value of one entity; a null value removes it. */
  record Change(ClientQuotaEntity entity, String key, Double value) {}

  /** Every entity with its quota values (an entity name null is the default entity of that type). */
  Map<ClientQuotaEntity, Map<String, Double>> quotas();

  /** Applies the changes together. */
  CompletableFuture<Void> alter(List<Change> changes);

  /** Quotas in this process's memory, for a broker alone (tests); lost on exit. */
  static QuotaStore memory() {
    return new QuotaStore() {
      private volatile Map<ClientQuotaEntity, Map<String, Double>> current = Map.of();

      @Override
      public Map<ClientQuotaEntity, Map<String, Double>> quotas() {
        return current;
      }

      @Override
      public synchronized CompletableFuture<Void> alter(List<Change> changes) {
        Map<ClientQuotaEntity, Map<String, Double>> next = new HashMap<>();
        current.forEach((e, v) -> next.put(e, new HashMap<>(v)));
        for (Change c : changes) {
          Map<String, Double> values = next.computeIfAbsent(c.entity(), e -> new HashMap<>());
          if (c.value() == null) {
            values.remove(c.key());
          } else {
            values.put(c.key(), c.value());
          }
          if (values.isEmpty()) {
            next.remove(c.entity());
          }
        }
        Map<ClientQuotaEntity, Map<String, Double>> frozen = new HashMap<>();
        next.forEach((e, v) -> frozen.put(e, Map.copyOf(v)));
        current = Map.copyOf(frozen);
        return CompletableFuture.completedFuture(null);
      }
    };
  }
}
