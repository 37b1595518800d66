package io.tidemark.broker.cluster;

import io.tidemark.broker.topic.LocalClusterMetadata;
import io.tidemark.broker.topic.RegistryState;
import io.tidemark.broker.topic.TopicStore;
import java.util.List;

/**
 * Where the brokers of a cluster agree on topics, partition leaders and who is alive: the seam
 * between the broker and the metadata authority. A single node keeps it in a local
 * {@link TopicStore} ({@link #local}); a cluster reads it from the controller's replicated image
 * and writes through the controller (the server wires that implementation, so this module does
 * not depend on the controller's).
 *
 * <p>Implementations are thread-safe. {@link #state()} is called on request paths and must be
 * cheap; {@link #apply} and {@link #allocateProducerIds} block until durable.
 */
public interface ClusterMetadata {

  /** A block of producer ids reserved for this broker: {@code [first, first + size)}. */
  record IdBlock(long first, int size) {}

  /** The agreed topics (with partition leaders) and the cluster id, as of now. */
  RegistryState state();

  /**
   * Makes the differences from {@code from} to {@code to} durable (new, changed and removed
   * topics) and returns the agreed state that includes them. Throws
   * {@link io.tidemark.broker.topic.TopicException} for a change the authority refuses.
   */
  RegistryState apply(RegistryState from, RegistryState to);

  /** Reserves the next block of producer ids durably: never handed out twice, across restarts. */
  IdBlock allocateProducerIds();

  /** Registered brokers that are not fenced, as advertised (may omit or include this broker). */
  List<ClusterView.Node> liveBrokers();

  /**
   * Calls {@code listener} whenever {@link #state()} or {@link #liveBrokers()} may have changed
   * because of another broker; on any thread, and it must return quickly.
   */
  void onChange(Runnable listener);

  /**
   * The metadata quorum, when this node runs a voter of it (DescribeQuorum is served only then);
   * empty for a node alone or a node without the controller role.
   */
  default java.util.Optional<QuorumView> quorum() {
    return java.util.Optional.empty();
  }

  /** One node alone: topics in {@code store}, the cluster id generated once or configured. */
  static ClusterMetadata local(TopicStore store, String configuredClusterId) {
    return new LocalClusterMetadata(store, configuredClusterId);
  }
}
