package io.tidemark.broker.topic;

import io.tidemark.broker.cluster.ClusterMetadata;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;
import org.apache.kafka.common.Uuid;

/**
 * The broker's topic catalogue over {@link ClusterMetadata}: reads see the agreed
 * {@link RegistryState} as of now (immutable, no locks), {@link #update} makes a change durable
 * through the metadata before it is visible. This broker's writers are serialized by this
 * object's monitor; other brokers may change the state at any time (in a cluster).
 */
public final class TopicRegistry {

  private final ClusterMetadata metadata;
  private volatile Indexed indexed;

  private record Indexed(RegistryState state, Map<Uuid, String> namesById) {}

  public TopicRegistry(ClusterMetadata metadata) {
    this.metadata = metadata;
    this.indexed = index(metadata.state());
  }

  /** A registry of one node alone, kept in {@code store}. */
  public TopicRegistry(TopicStore store, String configuredClusterId) {
    this(ClusterMetadata.local(store, configuredClusterId));
  }

  public RegistryState state() {
    return current().state();
  }

  public ClusterMetadata metadata() {
    return metadata;
  }

  public String clusterId() {
    return state().clusterId();
  }

  public Optional<TopicInfo> topic(String name) {
    return Optional.ofNullable(state().topics().get(name));
  }

  public Optional<TopicInfo> topic(Uuid id) {
    Indexed i = current();
    String name = i.namesById().get(id);
    return name == null ? Optional.empty() : Optional.ofNullable(i.state().topics().get(name));
  }

  public Map<Uuid, String> topicNamesById() {
    return current().namesById();
  }

  /** Applies {@code change} to the current state and makes the result durable; returns the agreed state after it. */
  public synchronized RegistryState update(UnaryOperator<RegistryState> change) {
    RegistryState from = state();
    return metadata.apply(from, change.apply(from));
  }

  /** Reserves the next block of producer ids durably. */
  public ClusterMetadata.IdBlock allocateProducerIdBlock() {
    return metadata.allocateProducerIds();
  }

  private Indexed current() {
    RegistryState s = metadata.state();
    Indexed i = indexed;
    if (i.state() != s) {
      i = index(s);
      indexed = i;
    }
    return i;
  }

  private static Indexed index(RegistryState s) {
    Map<Uuid, String> ids = new HashMap<>();
    s.topics().values().forEach(t -> ids.put(t.id(), t.name()));
    return new Indexed(s, Map.copyOf(ids));
  }
}
