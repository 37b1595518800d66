package io.tidemark.broker.cluster;

import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.protocol.RequestContext;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.DescribeQuorumRequestData;
import org.apache.kafka.common.message.DescribeQuorumResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DescribeQuorumRequest;

/**
 * DescribeQuorum (v0–2), what {@code kafka-metadata-quorum describe} sends: the metadata quorum
 * reported as Kafka reports its {@code __cluster_metadata-0} partition, as the Raft leader sees it
 * ({@link QuorumView}; a node that is not the leader, or not a voter at all, asks the leader, as a
 * Kafka broker forwards DescribeQuorum to the active controller): leader and epoch (Raft term), high
 * watermark (commit index), voters and observers (image followers) with their log ends and contact
 * times, and (v2) the voters' controller endpoints under the listener name {@code CONTROLLER}. Any
 * other partition is UNKNOWN_TOPIC_OR_PARTITION; a quorum that cannot answer gets
 * NOT_LEADER_OR_FOLLOWER. Never blocks the calling thread. Stateless.
 */
public final class DescribeQuorumHandler implements ApiHandler {

  /** The name Kafka gives its metadata log, which clients ask for. */
  static final String METADATA_TOPIC = "__cluster_metadata";
  static final String LISTENER = "CONTROLLER";

  private final QuorumView quorum;

  public DescribeQuorumHandler(QuorumView quorum) {
    this.quorum = quorum;
  }

  @Override
  public CompletableFuture<ApiMessage> handle(RequestContext context, AbstractRequest request) {
    return quorum.statusAsync().handle((status, e) -> answer(((DescribeQuorumRequest) request).data(), request.version(),
        e == null ? status : null));
  }

  private static ApiMessage answer(DescribeQuorumRequestData req, short v, QuorumView.Status status) {
    DescribeQuorumResponseData body = new DescribeQuorumResponseData();
    for (DescribeQuorumRequestData.TopicData t : req.topics()) {
      DescribeQuorumResponseData.TopicData topic = new DescribeQuorumResponseData.TopicData().setTopicName(t.topicName());
      body.topics().add(topic);
      for (DescribeQuorumRequestData.PartitionData p : t.partitions()) {
        DescribeQuorumResponseData.PartitionData out = new DescribeQuorumResponseData.PartitionData().setPartitionIndex(p.partitionIndex());
        topic.partitions().add(out);
        if (!t.topicName().equals(METADATA_TOPIC) || p.partitionIndex() != 0) {
          error(out, Errors.UNKNOWN_TOPIC_OR_PARTITION, "only " + METADATA_TOPIC + "-0 (the metadata quorum) can be described", v);
        } else if (status == null) {
          error(out, Errors.NOT_LEADER_OR_FOLLOWER, "the controller quorum has no leader to describe it now", v);
        } else {
          out.setErrorCode(Errors.NONE.code()).setLeaderId(status.leaderId()).setLeaderEpoch(status.leaderEpoch())
              .setHighWatermark(status.highWatermark()).setCurrentVoters(replicas(status.voters())).setObservers(replicas(status.observers()));
        }
      }
    }
    if (v >= 2 && status != null) {
      for (QuorumView.Replica r : status.voters()) {
        if (r.host() != null) {
          DescribeQuorumResponseData.Node node = new DescribeQuorumResponseData.Node().setNodeId(r.id());
          node.listeners().add(new DescribeQuorumResponseData.Listener().setName(LISTENER).setHost(r.host()).setPort(r.port()));
          body.nodes().add(node);
        }
      }
    }
    return body;
  }

  private static List<DescribeQuorumResponseData.ReplicaState> replicas(List<QuorumView.Replica> replicas) {
    return replicas.stream().map(r -> new DescribeQuorumResponseData.ReplicaState().setReplicaId(r.id())
        .setReplicaDirectoryId(Uuid.ZERO_UUID).setLogEndOffset(r.logEndOffset()).setLastFetchTimestamp(r.lastFetchTimestampMs())
        .setLastCaughtUpTimestamp(r.lastCaughtUpTimestampMs())).toList();
  }

  private static void error(DescribeQuorumResponseData.PartitionData out, Errors error, String message, short v) {
    out.setErrorCode(error.code()).setLeaderId(-1).setLeaderEpoch(-1).setHighWatermark(-1);
    if (v >= 2) {
      out.setErrorMessage(message);
    }
  }
}
