package io.tidemark.broker;

import io.tidemark.broker.cluster.ClusterMetadata;
import io.tidemark.broker.cluster.ClusterView;
import io.tidemark.broker.topic.RegistryState;
import io.tidemark.broker.topic.TopicInfo;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.common.Uuid;

/**
 * A unit-test stand-in for the replicated controller: one in-memory {@link ClusterMetadata}
 * shared by brokers in one JVM. {@link #apply} merges a broker's change into the current state
 * (as the controller applies each write) and tells every broker. Thread-safe (monitor).
 */
final class SharedClusterMetadata implements ClusterMetadata {

  private final Map<Integer, ClusterView.Node> live = new ConcurrentSkipListMap<>();
  private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
  private volatile RegistryState state = new RegistryState(Uuid.randomUuid().toString(), 0, Map.of());
  private final io.tidemark.broker.acl.AclStore acls = io.tidemark.broker.acl.AclStore.memory();

  @Override
  public io.tidemark.broker.acl.AclStore aclStore() {
    return acls;
  }

  private final io.tidemark.broker.quota.QuotaStore quotas = io.tidemark.broker.quota.QuotaStore.memory();

  @Override
  public io.tidemark.broker.quota.QuotaStore quotaStore() {
    return quotas;
  }

  /**
   * Starts broker {@code id} of this cluster on {@code streams} and marks it live: an ephemeral port
   * on loopback, no initial rebalance delay nor controlled-shutdown wait, then {@code extra}
   * settings; its Kafka-level meters go to {@code meters} (null: none).
   */
  KafkaBroker startBroker(int id, io.tidemark.stream.api.StreamStore streams, io.micrometer.core.instrument.MeterRegistry meters,
      Map<String, String> extra) {
    Map<String, String> s = new java.util.HashMap<>(Map.of("kafka.node.id", Integer.toString(id), "kafka.listener.port", "0",
        "kafka.listener.host", "127.0.0.1", "kafka.advertised.host", "127.0.0.1", "kafka.group.initial.rebalance.delay.ms", "0",
        "kafka.controlled.shutdown.timeout.ms", "0"));
    s.putAll(extra);
    KafkaBroker broker = new KafkaBroker(new BrokerConfig(new io.tidemark.stream.config.Settings(s)), streams,
        org.apache.kafka.common.utils.Time.SYSTEM, this, meters);
    broker.start();
    live(id, broker.port());
    return broker;
  }

  /** Marks a broker live at its bound port. */
  void live(int id, int port) {
    live.put(id, new ClusterView.Node(id, "127.0.0.1", port));
    listeners.forEach(Runnable::run);
  }

  @Override
  public RegistryState state() {
    return state;
  }

  @Override
  public RegistryState apply(RegistryState from, RegistryState to) {
    synchronized (this) {
      Map<String, TopicInfo> topics = new LinkedHashMap<>(state.topics());
      from.topics().keySet().stream().filter(n -> !to.topics().containsKey(n)).forEach(topics::remove);
      to.topics().forEach((name, topic) -> {
        if (!topic.equals(from.topics().get(name))) {
          topics.put(name, topic);
        }
      });
      state = new RegistryState(state.clusterId(), Math.max(state.nextProducerIdBlock(), to.nextProducerIdBlock()), topics);
    }
    listeners.forEach(Runnable::run);
    return state;
  }

  @Override
  public synchronized IdBlock allocateProducerIds() {
    long first = state.nextProducerIdBlock();
    state = new RegistryState(state.clusterId(), first + 1000, state.topics());
    return new IdBlock(first, 1000);
  }

  @Override
  public List<ClusterView.Node> liveBrokers() {
    return List.copyOf(live.values());
  }

  @Override
  public void onChange(Runnable listener) {
    listeners.add(listener);
  }

  /** Moves each partition at once to the first broker of its target (no reassignment state kept), as a finished reassignment. */
  @Override
  public List<PartitionChange> reassign(List<Reassignment> reassignments) {
    List<PartitionChange> out = new java.util.ArrayList<>();
    synchronized (this) {
      Map<String, TopicInfo> topics = new LinkedHashMap<>(state.topics());
      for (Reassignment r : reassignments) {
        TopicInfo t = topics.get(r.partition().topic());
        List<TopicInfo.PartitionInfo> ps = new java.util.ArrayList<>(t.partitions());
        TopicInfo.PartitionInfo p = ps.get(r.partition().partition());
        ps.set(r.partition().partition(), new TopicInfo.PartitionInfo(p.partition(), p.dataStreamId(), p.metaStreamId(),
            p.leaderEpoch() + 1, r.targetReplicas().get(0), r.targetReplicas(), List.of()));
        topics.put(t.name(), t.withPartitions(ps));
        out.add(PartitionChange.OK);
      }
      state = new RegistryState(state.clusterId(), state.nextProducerIdBlock(), topics);
    }
    listeners.forEach(Runnable::run);
    return out;
  }

  private final io.tidemark.broker.cluster.ResourceConfigStore resourceConfigs = io.tidemark.broker.cluster.ResourceConfigStore.memory();

  @Override
  public io.tidemark.broker.cluster.ResourceConfigStore resourceConfigs() {
    return resourceConfigs;
  }
}
