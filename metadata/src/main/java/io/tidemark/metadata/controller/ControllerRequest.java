package io.tidemark.metadata.controller;

import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.stream.metadata.CommitStreamObjectRequest;
import io.tidemark.stream.metadata.CommitStreamSetObjectRequest;
import io.tidemark.stream.metadata.NodeRef;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A request to the controller. {@link Write}s go through the replicated log (stamped with the
 * leader's clock) and are computed into records by {@link Controller}; {@link Read}s are answered
 * from the leader's current image. Encoded by {@link RequestCodec}.
 */
public sealed interface ControllerRequest {

  /** Changes metadata through the log. */
  sealed interface Write extends ControllerRequest {}

  /** Reads the image; never changes anything (a heartbeat changes only the leader's session table). */
  sealed interface Read extends ControllerRequest {}

  record RegisterBroker(int nodeId, List<Endpoint> endpoints, String rack) implements Write {}

  record FenceBroker(int nodeId, long nodeEpoch) implements Write {}

  record UnfenceBroker(int nodeId, long nodeEpoch) implements Write {}

  record CreateStream(NodeRef node, Map<String, String> tags) implements Write {}

  record OpenStream(NodeRef node, long streamId, long epoch) implements Write {}

  record CloseStream(NodeRef node, long streamId, long epoch) implements Write {}

  /** One stream operation of a {@link StreamOps}: open {@code streamId} at {@code epoch}, or close it at that epoch. */
  record StreamOp(long streamId, long epoch, boolean open) {}

  /**
   * Opens and closes many streams of one node in one log entry, each with the checks of a single
   * {@link OpenStream} or {@link CloseStream} and an outcome of its own (a refused operation changes
   * nothing, the others apply). At most {@link #MAX_OPS} operations on distinct streams. A restart's
   * recovery closes every stream its previous epochs held, and then opens the partitions' streams
   * again, hundreds of requests that the client sends as a few of these.
   */
  record StreamOps(NodeRef node, List<StreamOp> ops) implements Write {
    /** Most operations in one request. */
    public static final int MAX_OPS = 128;

    public StreamOps {
      ops = List.copyOf(ops);
    }
  }

  record TrimStream(NodeRef node, long streamId, long epoch, long newStartOffset) implements Write {}

  record DeleteStream(NodeRef node, long streamId, long epoch) implements Write {}

  record PrepareObjects(NodeRef node, int count, long ttlMs) implements Write {}

  record CommitStreamSetObject(NodeRef node, CommitStreamSetObjectRequest request) implements Write {}

  record CommitStreamObject(NodeRef node, CommitStreamObjectRequest request) implements Write {}

  /** Leader housekeeping: marks at most {@code maxObjects} expired prepared objects for deletion. */
  record ExpireObjects(int maxObjects) implements Write {}

  /** Leader housekeeping: these marked objects were physically deleted. */
  record RemoveDeletedObjects(List<Long> objectIds) implements Write {}

  record CreateTopic(UUID topicId, String name, int partitionCount) implements Write {}

  record DeleteTopic(UUID topicId) implements Write {}

  /** Grows a topic to {@code partitionCount} partitions (CreatePartitions); the new ones have no leader yet. */
  record GrowTopic(UUID topicId, int partitionCount) implements Write {}

  record UpdatePartition(UUID topicId, int partition, int leaderNodeId, int leaderEpoch, List<Long> streamIds)
      implements Write {}

  /**
   * Updates many partitions in one log entry, each with the checks of a single {@link UpdatePartition}
   * against the image before the request and an outcome of its own (a refused update changes
   * nothing, the others apply). At most {@link #MAX_UPDATES}, each partition once.
   */
  record UpdatePartitions(List<UpdatePartition> updates) implements Write {
    /** Most updates in one request. */
    public static final int MAX_UPDATES = 128;

    public UpdatePartitions {
      updates = List.copyOf(updates);
    }
  }

  /** One partition of a topic. */
  record PartitionRef(UUID topicId, int partition) {}

  /** One wanted assignment: the new replicas (preferred leader first), or null to cancel a running reassignment. */
  record Reassignment(UUID topicId, int partition, List<Integer> targetReplicas) {}

  /** Changes the replica assignments of partitions (AlterPartitionReassignments); one outcome per entry. */
  record ReassignPartitions(List<Reassignment> reassignments) implements Write {}

  /**
   * Moves leadership (ElectLeaders): to each partition's preferred replica, or with {@code unclean}
   * to its first live replica when its leader is not live. One outcome per entry.
   */
  record ElectLeaders(List<PartitionRef> partitions, boolean unclean) implements Write {}

  /**
   * Controlled shutdown: marks the node as shutting down (no partition moves to it any more) and
   * moves the leadership of every partition it leads to another live broker, preferring the
   * partition's other replicas.
   */
  record DrainBroker(NodeRef node) implements Write {}

  /** Leader housekeeping: the partition's new leader opened it at {@code leaderEpoch}; its reassignment is done. */
  record CompleteReassignment(UUID topicId, int partition, int leaderEpoch) implements Write {}

  /** Housekeeping: the failover of a fenced broker (see {@link FailoverControl}). */
  record FailoverBroker(int nodeId, long nodeEpoch) implements Write {}

  /** The recovering broker, as the recovery incarnation: its recovery is done (see {@link FailoverControl}). */
  record CompleteFailover(NodeRef recovery) implements Write {}

  /** Sets (or with a null value removes) a config value. */
  record SetConfig(byte resourceType, String resourceName, String key, String value) implements Write {}

  /** Puts (or with a null value removes) a key; with {@code ifAbsent} an existing value is kept. */
  record PutKeyValue(String namespace, String key, byte[] value, boolean ifAbsent) implements Write {}

  record AllocateProducerIds(NodeRef node) implements Write {}

  /**
   * Sets a user's salted SCRAM credential for one mechanism (1 SCRAM-SHA-256, 2 SCRAM-SHA-512), or
   * with {@code delete} removes it (the reply says whether there was one).
   */
  record AlterScramCredential(String user, byte mechanism, byte[] salt, byte[] storedKey, byte[] serverKey, int iterations,
      boolean delete) implements Write {}
  /** Adds ACLs (CreateAcls); one already present is kept as it is. */
  record CreateAcls(List<io.tidemark.metadata.record.MetadataRecord.AclEntry> entries) implements Write {}

  /** Removes exactly these ACLs (DeleteAcls, after the broker matched its filters); the reply says which were present. */
  record DeleteAcls(List<io.tidemark.metadata.record.MetadataRecord.AclEntry> entries) implements Write {}

  /** One client quota value of one entity (encoded by the broker); a null value removes it. */
  record QuotaChange(String entity, String key, String value) {}

  /** Changes client quotas (AlterClientQuotas), all in one entry. */
  record AlterClientQuotas(List<QuotaChange> changes) implements Write {}

  /** One config value of one resource (a dynamic broker config, a client-metrics subscription); a null value removes it. */
  record ConfigChange(byte resourceType, String resourceName, String key, String value) {}

  /** Sets and removes config values of one or more resources, all in one entry (IncrementalAlterConfigs, AlterConfigs). */
  record AlterConfigs(List<ConfigChange> changes) implements Write {}

  /**
   * A broker's heartbeat as it was answered until the session write below: read by the leader,
   * recorded in its session table alone. Kept answerable for clients of older builds.
   */
  record Heartbeat(NodeRef node) implements Read {}

  /**
   * A broker's heartbeat through the log: it changes no metadata, but every voter that applies it
   * records the broker's session at its own clock ({@code BrokerSessions}), so a new leader knows
   * each broker's last heartbeat. The reply says whether the node is fenced; a node whose epoch is
   * not current is rejected with {@code NODE_FENCED}.
   */
  record SessionHeartbeat(NodeRef node) implements Write {}

  /** The quorum as the Raft leader sees it (Kafka's DescribeQuorum), answered by the leader's state machine. */
  record DescribeQuorum() implements Read {}

  /** A node's load as it measured it, kept by the leader in {@link NodeLoads} (not replicated). */
  record ReportLoad(NodeRef node, NodeLoad load) implements Read {}

  /** The load every registered node last reported to the leader ({@link NodeLoads}). */
  record DescribeLoads() implements Read {}

  record GetStreams(List<Long> streamIds) implements Read {}

  record GetOpeningStreams(NodeRef node) implements Read {}

  record GetObjects(long streamId, long startOffset, long endOffset, int limit) implements Read {}

  record GetStreamSetObjects(int nodeId) implements Read {}

  record GetStreamObjects(long streamId) implements Read {}

  record GetKeyValue(String namespace, String key) implements Read {}

  record GetBroker(int nodeId) implements Read {}
}
