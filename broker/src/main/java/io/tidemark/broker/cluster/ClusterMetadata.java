package io.tidemark.broker.cluster;

import io.tidemark.broker.topic.LocalClusterMetadata;
import io.tidemark.broker.topic.RegistryState;
import io.tidemark.broker.topic.TopicStore;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;

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

  /**
   * Where SCRAM credentials are agreed (the controller's metadata in a cluster); empty when this
   * authority keeps none, and the broker then keeps them in memory.
   */
  default java.util.Optional<io.tidemark.broker.security.ScramCredentialStore> scramCredentials() {
    return java.util.Optional.empty();
  }

  /** Registered brokers that are not fenced, as advertised (may omit or include this broker). */
  List<ClusterView.Node> liveBrokers();

  /**
   * Calls {@code listener} whenever {@link #state()} or {@link #liveBrokers()} may have changed
   * because of another broker; on any thread, and it must return quickly.
   */
  void onChange(Runnable listener);

  /** A wanted assignment of one partition (preferred leader first), or a null target to cancel a running reassignment. */
  record Reassignment(TopicPartition partition, List<Integer> targetReplicas) {}

  /** The outcome of one partition's reassignment or election, as Kafka reports it. */
  record PartitionChange(Errors error, String message) {
    public static final PartitionChange OK = new PartitionChange(Errors.NONE, null);
  }

  /**
   * Changes replica assignments (AlterPartitionReassignments): a partition whose leader is not in
   * its new assignment moves to the first live broker of it, which serves it once the old leader
   * closed it. Returns one outcome per entry, in order; a refused entry changes nothing. Alone,
   * the only assignment is this node: asking for it is a no-op, anything else is refused.
   */
  default List<PartitionChange> reassign(List<Reassignment> reassignments) {
    List<PartitionChange> out = new ArrayList<>();
    for (Reassignment r : reassignments) {
      List<Integer> current = state().topics().get(r.partition().topic()).partitions().get(r.partition().partition())
          .replicas();
      if (r.targetReplicas() == null) {
        out.add(new PartitionChange(Errors.NO_REASSIGNMENT_IN_PROGRESS, "no reassignment of " + r.partition() + " is in progress"));
      } else if (r.targetReplicas().equals(current)) {
        out.add(PartitionChange.OK);
      } else {
        out.add(new PartitionChange(Errors.INVALID_REPLICA_ASSIGNMENT, "this node runs alone: " + r.partition()
            + " can only be assigned to " + current));
      }
    }
    return out;
  }

  /**
   * Elects leaders (ElectLeaders): the preferred replica (the first of the assignment), or with
   * {@code unclean} any live replica when the leader is not live. One outcome per entry, in order.
   */
  default List<PartitionChange> electLeaders(List<TopicPartition> partitions, boolean unclean) {
    return partitions.stream().map(p -> new PartitionChange(Errors.ELECTION_NOT_NEEDED, "the only replica of " + p
        + " already leads it")).toList();
  }

  /**
   * Controlled shutdown: marks this broker as shutting down (nothing moves to it any more) and
   * moves the leadership of every partition it leads to other live brokers; returns how many
   * moved; waits at most {@code timeoutMs} for the controller. Alone, nothing moves.
   */
  default long drain(long timeoutMs) {
    return 0;
  }

  /**
   * Whether the streams are still held open by another broker (a move's source that has not closed
   * them yet, or a dead broker whose failover has not closed them): opening them here would be
   * refused, so the caller waits for the next change instead. Alone, never.
   */
  default boolean heldElsewhere(long dataStreamId, long metaStreamId) {
    return false;
  }

  /**
   * Told after each pass over the partitions led here whether some still wait for their streams
   * ({@link #heldElsewhere}); while they do, stream changes call the {@link #onChange} listener too,
   * so a moving partition opens as soon as its previous holder closed it.
   */
  default void awaitingStreams(boolean waiting) {}

  /**
   * Why this broker must not acknowledge a write now (its controller lease lapsed, or it failed over
   * and was replaced), or null when it may. Alone, never.
   */
  default String leaseLost() {
    return null;
  }

  /**
   * The metadata quorum as its leader describes it, on every node of a controller-backed cluster,
   * voter or not (DescribeQuorum is served only then); empty for a broker alone without a quorum.
   */
  default java.util.Optional<QuorumView> quorum() {
    return java.util.Optional.empty();
  }

  /** Where the cluster's ACLs live (CreateAcls, DeleteAcls; read by the authorizer on every request). */
  io.tidemark.broker.acl.AclStore aclStore();

  /** Where client quotas live (AlterClientQuotas; read by the quota manager on produce and fetch). */
  io.tidemark.broker.quota.QuotaStore quotaStore();

  /** Where dynamic broker configs and client-metrics subscriptions live (IncrementalAlterConfigs on those resources). */
  ResourceConfigStore resourceConfigs();

  /** One node alone: topics in {@code store}, the cluster id generated once or configured. */
  static ClusterMetadata local(TopicStore store, String configuredClusterId) {
    return new LocalClusterMetadata(store, configuredClusterId);
  }
}
