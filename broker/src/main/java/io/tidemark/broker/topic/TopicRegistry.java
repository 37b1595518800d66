package io.tidemark.broker.topic;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;
import org.apache.kafka.common.Uuid;

/**
 * The single node's topic catalogue: an immutable {@link RegistryState} published through a
 * volatile field (readers never lock) and replaced by {@link #update}, which saves the new state
 * durably before publishing it. Writers are serialized by this object's monitor.
 */
public final class TopicRegistry {

  private final TopicStore store;
  private volatile RegistryState state;
  private volatile Map<Uuid, String> namesById = Map.of();

  public TopicRegistry(TopicStore store, String configuredClusterId) {
    this.store = store;
    RegistryState loaded = store.load().orElse(null);
    if (loaded == null) {
      String clusterId = configuredClusterId.isEmpty() ? Uuid.randomUuid().toString() : configuredClusterId;
      loaded = new RegistryState(clusterId, 0, Map.of());
      store.save(loaded);
    } else if (!configuredClusterId.isEmpty() && !configuredClusterId.equals(loaded.clusterId())) {
      throw new IllegalStateException("kafka.cluster.id=" + configuredClusterId + " but the data directory belongs to cluster "
          + loaded.clusterId() + "; use the matching data directory or remove the setting");
    }
    publish(loaded);
  }

  public RegistryState state() {
    return state;
  }

  public String clusterId() {
    return state.clusterId();
  }

  public Optional<TopicInfo> topic(String name) {
    return Optional.ofNullable(state.topics().get(name));
  }

  public Optional<TopicInfo> topic(Uuid id) {
    String name = namesById.get(id);
    return name == null ? Optional.empty() : topic(name);
  }

  public Map<Uuid, String> topicNamesById() {
    return namesById;
  }

  /** Applies {@code change}, saves the result durably, then publishes it. */
  public synchronized RegistryState update(UnaryOperator<RegistryState> change) {
    RegistryState next = change.apply(state);
    store.save(next);
    publish(next);
    return next;
  }

  /** Reserves the next block of {@code size} producer ids durably and returns its first id. */
  public synchronized long allocateProducerIdBlock(int size) {
    long first = state.nextProducerIdBlock();
    update(s -> new RegistryState(s.clusterId(), first + size, s.topics()));
    return first;
  }

  private void publish(RegistryState next) {
    Map<Uuid, String> ids = new HashMap<>();
    next.topics().values().forEach(t -> ids.put(t.id(), t.name()));
    namesById = Map.copyOf(ids);
    state = next;
  }
}
