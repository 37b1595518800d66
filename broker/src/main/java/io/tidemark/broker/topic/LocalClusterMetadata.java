package io.tidemark.broker.topic;

import io.tidemark.broker.cluster.ClusterMetadata;
import io.tidemark.broker.cluster.ClusterView;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.Uuid;

/**
 * The metadata of a broker that is alone: the {@link RegistryState} in a {@link TopicStore} (a
 * local file or memory), saved before it is published. No other broker changes it, so listeners
 * are never called. Writers are serialized by this object's monitor; readers read a volatile field.
 */
public final class LocalClusterMetadata implements ClusterMetadata {

  /** Producer ids per reserved block. */
  static final int PRODUCER_ID_BLOCK_SIZE = 1000;
  private final TopicStore store;
  private volatile RegistryState state;
  /** A broker alone keeps its ACLs in memory: they last as long as the process (the server uses the controller). */
  private final io.tidemark.broker.acl.AclStore acls = io.tidemark.broker.acl.AclStore.memory();
  private final io.tidemark.broker.quota.QuotaStore quotas = io.tidemark.broker.quota.QuotaStore.memory();

  public LocalClusterMetadata(TopicStore store, String configuredClusterId) {
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
    this.state = loaded;
  }

  @Override
  public RegistryState state() {
    return state;
  }

  /** Saves {@code to}; a producer-id block reserved since {@code from} was read stays reserved. */
  @Override
  public synchronized RegistryState apply(RegistryState from, RegistryState to) {
    RegistryState next = new RegistryState(to.clusterId(), Math.max(state.nextProducerIdBlock(), to.nextProducerIdBlock()),
        to.topics());
    store.save(next);
    state = next;
    return next;
  }

  @Override
  public synchronized IdBlock allocateProducerIds() {
    long first = state.nextProducerIdBlock();
    RegistryState next = new RegistryState(state.clusterId(), first + PRODUCER_ID_BLOCK_SIZE, state.topics());
    store.save(next);
    state = next;
    return new IdBlock(first, PRODUCER_ID_BLOCK_SIZE);
  }

  @Override
  public List<ClusterView.Node> liveBrokers() {
    return List.of();
  }

  @Override
  public void onChange(Runnable listener) {}

  @Override
  public io.tidemark.broker.acl.AclStore aclStore() {
    return acls;
  }

  @Override
  public io.tidemark.broker.quota.QuotaStore quotaStore() {
    return quotas;
  }

  private final io.tidemark.broker.cluster.ResourceConfigStore resourceConfigs = io.tidemark.broker.cluster.ResourceConfigStore.memory();

  @Override
  public io.tidemark.broker.cluster.ResourceConfigStore resourceConfigs() {
    return resourceConfigs;
  }
}
