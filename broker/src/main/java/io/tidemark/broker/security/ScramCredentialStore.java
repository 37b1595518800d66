package io.tidemark.broker.security;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where SCRAM credentials live: in a cluster, the controller's replicated metadata (salted
 * credentials only); a broker alone keeps them in memory. Reads are local and non-blocking (the
 * image this broker holds); writes complete once the metadata authority agreed.
 */
public interface ScramCredentialStore {

  /** The credential of {@code user} for {@code algorithm}, as this broker knows it now. */
  Optional<ScramCredential> credential(String user, ScramAlgorithm algorithm);

  /** Every user with a credential, and the mechanisms (with iterations) it has. */
  Map<String, List<ScramCredential>> all();

  /** Sets or replaces the credential; completes when it is agreed. */
  CompletableFuture<Void> upsert(String user, ScramCredential credential);

  /** Removes a credential; completes with {@code false} when there was none. */
  CompletableFuture<Boolean> delete(String user, ScramAlgorithm algorithm);

  /** A store in memory (a broker without a controller: tests, demos). Thread-safe. */
  static ScramCredentialStore memory() {
    Map<String, Map<ScramAlgorithm, ScramCredential>> users = new ConcurrentHashMap<>();
    return new ScramCredentialStore() {
      @Override
      public Optional<ScramCredential> credential(String user, ScramAlgorithm algorithm) {
        return Optional.ofNullable(users.getOrDefault(user, Map.of()).get(algorithm));
      }

      @Override
      public Map<String, List<ScramCredential>> all() {
        Map<String, List<ScramCredential>> out = new java.util.TreeMap<>();
        users.forEach((u, m) -> {
          if (!m.isEmpty()) {
            out.put(u, List.copyOf(m.values()));
          }
        });
        return out;
      }

      @Override
      public CompletableFuture<Void> upsert(String user, ScramCredential credential) {
        users.computeIfAbsent(user, u -> new ConcurrentHashMap<>()).put(credential.algorithm(), credential);
        return CompletableFuture.completedFuture(null);
      }

      @Override
      public CompletableFuture<Boolean> delete(String user, ScramAlgorithm algorithm) {
        Map<ScramAlgorithm, ScramCredential> m = users.get(user);
        return CompletableFuture.completedFuture(m != null && m.remove(algorithm) != null);
      }
    };
  }
}
