package io.tidemark.metadata.controller;

import static io.tidemark.metadata.controller.Checks.require;
import static io.tidemark.metadata.controller.Checks.requireActive;

import io.tidemark.metadata.controller.ControllerRequest.CreateTopic;
import io.tidemark.metadata.controller.ControllerRequest.GrowTopic;
import io.tidemark.metadata.controller.ControllerRequest.PutKeyValue;
import io.tidemark.metadata.controller.ControllerRequest.RegisterBroker;
import io.tidemark.metadata.controller.ControllerRequest.SetConfig;
import io.tidemark.metadata.controller.ControllerRequest.UpdatePartition;
import io.tidemark.metadata.image.BrokerEntry;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.MetadataRecord;
import io.tidemark.metadata.record.MetadataRecord.BrokerFencing;
import io.tidemark.metadata.record.MetadataRecord.BrokerRegistration;
import io.tidemark.metadata.record.MetadataRecord.Config;
import io.tidemark.metadata.record.MetadataRecord.KeyValue;
import io.tidemark.metadata.record.MetadataRecord.Partition;
import io.tidemark.metadata.record.MetadataRecord.ProducerIdBlock;
import io.tidemark.metadata.record.MetadataRecord.RemoveTopic;
import io.tidemark.metadata.record.MetadataRecord.Topic;
import io.tidemark.metadata.record.FieldWriter;
import io.tidemark.stream.metadata.NodeRef;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

/**
 * Handlers for brokers (registration with a growing node epoch, fencing; an epoch that failed over
 * to another broker is replaced, never unfenced: see {@link FailoverControl}), topics and partitions,
 * configs, the key-value space and producer-id blocks. Pure; stateless.
 */
final class ClusterControl {
  static final int MAX_PARTITIONS = 100_000;

  private ClusterControl() {}

  static ControllerResult register(MetadataImage image, RegisterBroker r, long nowMs) {
    require(r.nodeId() >= 0, ErrorCode.INVALID_REQUEST, "node id " + r.nodeId() + " must not be negative");
    BrokerEntry prev = image.broker(r.nodeId());
    long epoch = prev == null ? 1 : prev.nodeEpoch() + 1;
    BrokerRegistration reg = new BrokerRegistration(r.nodeId(), epoch, r.endpoints(), nowMs, r.rack());
    return ControllerResult.of(List.of(reg), ReplyBodies.ofLong(epoch));
  }

  /**
   * A heartbeat through the log: no records; the reply says whether the node is fenced. An epoch
   * that is not the registered one is rejected ({@code NODE_FENCED}): that node instance was replaced.
   * The session itself is soft state each voter records when it applies the entry.
   */
  static ControllerResult heartbeat(MetadataImage image, NodeRef node) {
    BrokerEntry b = Checks.requireCurrent(image, node);
    return ControllerResult.of(List.of(), new FieldWriter(1).writeBoolean(b.fenced()).toByteArray());
  }

  static ControllerResult fence(MetadataImage image, int nodeId, long nodeEpoch, boolean fenced) {
    BrokerEntry b = image.broker(nodeId);
    if (b == null || b.nodeEpoch() != nodeEpoch || b.fenced() == fenced) {
      return ControllerResult.of(List.of(), ReplyBodies.empty());
    }
    FailoverControl.Failover failover = FailoverControl.failoverOf(image, nodeId);
    boolean failedOver = failover != null && failover.recoveryEpoch() == nodeEpoch;
    if (!fenced && failedOver && failover.recovererId() >= 0) {
      // a recovery incarnation that was fenced (its recoverer fell silent) fails over again; it never serves again
      return ControllerResult.of(List.of(), ReplyBodies.empty());
    }
    if (!fenced && failedOver) {
      // fenced while it held nothing, so nobody recovered it: it may serve again, and fail over if fenced again
      return ControllerResult.of(List.of(new BrokerFencing(nodeId, nodeEpoch, false),
          new KeyValue(FailoverControl.NAMESPACE, Integer.toString(nodeId), null)), ReplyBodies.empty());
    }
    return ControllerResult.of(List.of(new BrokerFencing(nodeId, nodeEpoch, fenced)), ReplyBodies.empty());
  }

  static ControllerResult createTopic(MetadataImage image, CreateTopic r) {
    require(r.name() != null && !r.name().isBlank(), ErrorCode.INVALID_REQUEST, "topic name is empty");
    require(r.partitionCount() >= 1 && r.partitionCount() <= MAX_PARTITIONS, ErrorCode.INVALID_REQUEST,
        "partition count " + r.partitionCount() + " must be between 1 and " + MAX_PARTITIONS);
    require(image.topicByName(r.name()) == null, ErrorCode.ALREADY_EXISTS, "topic " + r.name() + " exists");
    require(image.topics().get(r.topicId()) == null, ErrorCode.ALREADY_EXISTS, "topic id " + r.topicId() + " exists");
    List<MetadataRecord> records = new ArrayList<>(r.partitionCount() + 1);
    records.add(new Topic(r.topicId(), r.name(), r.partitionCount()));
    for (int p = 0; p < r.partitionCount(); p++) {
      records.add(new Partition(r.topicId(), p, -1, 0, List.of()));
    }
    return ControllerResult.of(records, ReplyBodies.empty());
  }

  static ControllerResult growTopic(MetadataImage image, GrowTopic r) {
    Topic topic = image.topics().get(r.topicId());
    require(topic != null, ErrorCode.NOT_FOUND, "topic id " + r.topicId() + " does not exist");
    require(r.partitionCount() > topic.partitionCount() && r.partitionCount() <= MAX_PARTITIONS, ErrorCode.INVALID_REQUEST,
        "topic " + topic.name() + " has " + topic.partitionCount() + " partitions; the new count " + r.partitionCount()
            + " must be larger and at most " + MAX_PARTITIONS);
    List<MetadataRecord> records = new ArrayList<>(r.partitionCount() - topic.partitionCount() + 1);
    records.add(new Topic(r.topicId(), topic.name(), r.partitionCount()));
    for (int p = topic.partitionCount(); p < r.partitionCount(); p++) {
      records.add(new Partition(r.topicId(), p, -1, 0, List.of()));
    }
    return ControllerResult.of(records, ReplyBodies.empty());
  }

  static ControllerResult deleteTopic(MetadataImage image, UUID topicId) {
    require(image.topics().get(topicId) != null, ErrorCode.NOT_FOUND, "topic id " + topicId + " does not exist");
    return ControllerResult.of(List.of(new RemoveTopic(topicId)), ReplyBodies.empty());
  }

  static ControllerResult updatePartition(MetadataImage image, UpdatePartition r) {
    Partition p = image.partition(r.topicId(), r.partition());
    require(p != null, ErrorCode.NOT_FOUND, "partition " + r.topicId() + "-" + r.partition() + " does not exist");
    require(r.leaderEpoch() >= p.leaderEpoch(), ErrorCode.INVALID_REQUEST, "partition " + r.topicId() + "-"
        + r.partition() + " leader epoch " + r.leaderEpoch() + " is below the current " + p.leaderEpoch());
    require(r.leaderNodeId() < 0 || image.broker(r.leaderNodeId()) != null, ErrorCode.INVALID_REQUEST,
        "leader node " + r.leaderNodeId() + " is not registered");
    // a leader change bumps the epoch: a broker that computed its change from an older image (a restart
    // racing a move) must not take back a partition that moved meanwhile
    require(r.leaderEpoch() > p.leaderEpoch() || p.leaderNodeId() < 0 || r.leaderNodeId() == p.leaderNodeId(),
        ErrorCode.INVALID_REQUEST, "partition " + r.topicId() + "-" + r.partition() + " is led by node "
            + p.leaderNodeId() + " at epoch " + r.leaderEpoch() + "; a new leader needs a higher epoch");
    // the assignment is kept while it includes the leader (a restart, a placement); otherwise it is the leader alone
    List<Integer> replicas = r.leaderNodeId() < 0 || p.replicas().contains(r.leaderNodeId()) ? p.replicas()
        : List.of(r.leaderNodeId());
    Partition updated = new Partition(r.topicId(), r.partition(), r.leaderNodeId(), r.leaderEpoch(), r.streamIds(),
        replicas, p.previousReplicas());
    return ControllerResult.of(List.of(updated), ReplyBodies.empty());
  }

  /**
   * Updates many partitions in one entry ({@link ControllerRequest.UpdatePartitions}): each update is
   * checked and applied as a single {@link UpdatePartition} would be, against the image before the
   * request (each partition appears once, so no update sees another's effect); a refused one adds no
   * record and answers its own rejection. The whole request is refused, changing nothing, when it
   * holds more than {@link ControllerRequest.UpdatePartitions#MAX_UPDATES} updates or names a
   * partition twice. The reply body: the count, then per update an encoded {@link ControllerReply}.
   */
  static ControllerResult updatePartitions(MetadataImage image, List<UpdatePartition> updates) {
    if (updates.size() > ControllerRequest.UpdatePartitions.MAX_UPDATES) {
      throw new Rejection(ErrorCode.INVALID_ARGUMENT, updates.size() + " partition updates in one request; at most "
          + ControllerRequest.UpdatePartitions.MAX_UPDATES);
    }
    java.util.Set<ControllerRequest.PartitionRef> seen = new java.util.HashSet<>();
    for (UpdatePartition u : updates) {
      if (!seen.add(new ControllerRequest.PartitionRef(u.topicId(), u.partition()))) {
        throw new Rejection(ErrorCode.INVALID_REQUEST, "partition " + u.topicId() + "-" + u.partition()
            + " appears twice in one request");
      }
    }
    return ControllerResult.eachWithOwnOutcome(updates, u -> updatePartition(image, u));
  }

  static ControllerResult setConfig(SetConfig r) {
    require(r.key() != null && !r.key().isEmpty(), ErrorCode.INVALID_REQUEST, "config key is empty");
    return ControllerResult.of(List.of(new Config(r.resourceType(), r.resourceName(), r.key(), r.value())),
        ReplyBodies.empty());
  }

  static ControllerResult putKeyValue(MetadataImage image, PutKeyValue r) {
    require(r.namespace() != null && r.key() != null && !r.key().isEmpty(), ErrorCode.INVALID_REQUEST,
        "key-value namespace and key must be given");
    byte[] current = image.keyValue(r.namespace(), r.key());
    if ((r.ifAbsent() && current != null) || (r.value() == null && current == null)
        || (current != null && Arrays.equals(current, r.value()))) {
      return ControllerResult.of(List.of(), new FieldWriter().writeBytes(current).toByteArray());
    }
    return ControllerResult.of(List.of(new KeyValue(r.namespace(), r.key(), r.value())),
        new FieldWriter().writeBytes(r.value()).toByteArray());
  }

  /**
   * A SCRAM credential set or removed. The caller (the broker's AlterUserScramCredentials) has
   * checked mechanism and iterations as Kafka does; here only what keeps the image sound is
   * enforced. Reply: one boolean, whether the user had a credential for that mechanism before.
   */
  static ControllerResult alterScramCredential(MetadataImage image, ControllerRequest.AlterScramCredential r) {
    require(r.user() != null && !r.user().isEmpty(), ErrorCode.INVALID_REQUEST, "SCRAM user name is empty");
    require(r.mechanism() == 1 || r.mechanism() == 2, ErrorCode.INVALID_REQUEST,
        "unknown SCRAM mechanism type " + r.mechanism());
    boolean existed = image.scramCredential(r.user(), r.mechanism()) != null;
    byte[] reply = new FieldWriter().writeBoolean(existed).toByteArray();
    if (r.delete()) {
      return ControllerResult.of(existed
          ? List.of(new MetadataRecord.RemoveUserScramCredential(r.user(), r.mechanism())) : List.of(), reply);
    }
    require(r.salt() != null && r.storedKey() != null && r.serverKey() != null && r.iterations() > 0,
        ErrorCode.INVALID_REQUEST, "SCRAM credential needs salt, stored key, server key and iterations");
    return ControllerResult.of(List.of(new MetadataRecord.UserScramCredential(r.user(), r.mechanism(), r.salt(),
        r.storedKey(), r.serverKey(), r.iterations())), reply);
  }

  static ControllerResult allocateProducerIds(MetadataImage image, NodeRef node, ControllerLimits limits) {
    requireActive(image, node);
    long first = image.nextProducerId();
    return ControllerResult.of(List.of(new ProducerIdBlock(node.nodeId(), first, limits.producerIdBlockSize())),
        new FieldWriter().writeLong(first).writeInt(limits.producerIdBlockSize()).toByteArray());
  }
}
