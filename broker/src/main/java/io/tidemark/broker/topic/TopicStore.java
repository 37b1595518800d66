package io.tidemark.broker.topic;

import java.util.Optional;

/** Durable home of the {@link RegistryState}: a local file, or nothing (memory only). */
public interface TopicStore {

  Optional<RegistryState> load();

  /** Replaces the stored state; durable when it returns. */
  void save(RegistryState state);

  /** Keeps nothing: for in-memory brokers. */
  static TopicStore memory() {
    return new TopicStore() {
      @Override
      public Optional<RegistryState> load() {
        return Optional.empty();
      }

      @Override
      public void save(RegistryState state) {}
    };
  }
}
