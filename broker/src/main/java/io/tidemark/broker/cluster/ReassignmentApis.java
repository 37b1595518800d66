package io.tidemark.broker.cluster;

import io.tidemark.broker.protocol.RequestContext;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.broker.topic.TopicLifecycle;
import io.tidemark.broker.topic.TopicRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData;
import org.apache.kafka.common.message.ElectLeadersRequestData;
import org.apache.kafka.common.message.ElectLeadersResponseData;
import org.apache.kafka.common.message.ListPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.ListPartitionReassignmentsResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.ElectLeadersRequest;
import org.apache.kafka.common.requests.ListPartitionReassignmentsRequest;

/**
 * Moving partitions with Kafka's APIs: AlterPartitionReassignments (v0–1), ListPartitionReassignments
 * (v0) and ElectLeaders (v0–2; preferred leader = first replica of the assignment, unclean = first
 * live replica when the leader is not live). Any broker answers them (Kafka clients send them to
 * the controller id from metadata; every broker writes through the controller quorum). A
 * reassignment is accepted once the controller wrote the new assignment; the data does not move
 * (every replica reads the same streams), the old leader closes the partition and the new leader
 * opens it, and the reassignment is listed until the new leader serves.
 *
 * <p>Per-partition errors as Kafka gives them: UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT
 * (unknown broker, a broker named twice, no live broker), INVALID_REPLICATION_FACTOR (a size change
 * with {@code allowReplicationFactorChange=false}), REASSIGNMENT_IN_PROGRESS,
 * NO_REASSIGNMENT_IN_PROGRESS (cancel of a partition not being reassigned), ELECTION_NOT_NEEDED,
 * PREFERRED_LEADER_NOT_AVAILABLE, ELIGIBLE_LEADERS_NOT_AVAILABLE. The controller writes run on
 * the topic lifecycle's thread (they wait for the quorum), never on a network thread. Stateless.
 */
public final class ReassignmentApis {

  private final TopicRegistry registry;
  private final TopicLifecycle lifecycle;

  public ReassignmentApis(TopicRegistry registry, TopicLifecycle lifecycle) {
    this.registry = registry;
    this.lifecycle = lifecycle;
  }

  public CompletableFuture<ApiMessage> alterPartitionReassignments(RequestContext context, AbstractRequest request) {
    AlterPartitionReassignmentsRequestData req = ((AlterPartitionReassignmentsRequest) request).data();
    boolean allowSizeChange = request.version() < 1 || req.allowReplicationFactorChange();
    AlterPartitionReassignmentsResponseData body = new AlterPartitionReassignmentsResponseData()
        .setErrorCode(Errors.NONE.code()).setAllowReplicationFactorChange(allowSizeChange);
    List<ClusterMetadata.Reassignment> asked = new ArrayList<>();
    List<AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse> askedResponses = new ArrayList<>();
    for (AlterPartitionReassignmentsRequestData.ReassignableTopic t : req.topics()) {
      AlterPartitionReassignmentsResponseData.ReassignableTopicResponse tr =
          new AlterPartitionReassignmentsResponseData.ReassignableTopicResponse().setName(t.name());
      body.responses().add(tr);
      Optional<TopicInfo> topic = registry.topic(t.name());
      for (AlterPartitionReassignmentsRequestData.ReassignablePartition p : t.partitions()) {
        AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse pr =
            new AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse().setPartitionIndex(p.partitionIndex());
        tr.partitions().add(pr);
        Optional<TopicInfo.PartitionInfo> info = partition(topic, p.partitionIndex());
        if (info.isEmpty()) {
          fail(pr, Errors.UNKNOWN_TOPIC_OR_PARTITION, "partition " + t.name() + "-" + p.partitionIndex() + " does not exist");
        } else if (p.replicas() != null && !allowSizeChange && p.replicas().size() != info.get().replicas().size()) {
          fail(pr, Errors.INVALID_REPLICATION_FACTOR, "the new assignment " + p.replicas() + " of " + t.name() + "-"
              + p.partitionIndex() + " changes the replication factor " + info.get().replicas().size()
              + ", which the request does not allow");
        } else {
          asked.add(new ClusterMetadata.Reassignment(new TopicPartition(t.name(), p.partitionIndex()), p.replicas()));
          askedResponses.add(pr);
        }
      }
    }
    if (asked.isEmpty()) {
      return CompletableFuture.completedFuture(body);
    }
    return lifecycle.submit(() -> registry.metadata().reassign(asked)).handle((results, error) -> {
      for (int i = 0; i < askedResponses.size(); i++) {
        if (error != null) {
          fail(askedResponses.get(i), Errors.REQUEST_TIMED_OUT, "the controller did not apply the reassignment: "
              + rootMessage(error));
        } else {
          ClusterMetadata.PartitionChange c = results.get(i);
          askedResponses.get(i).setErrorCode(c.error().code()).setErrorMessage(c.error() == Errors.NONE ? null : c.message());
        }
      }
      return body;
    });
  }

  public CompletableFuture<ApiMessage> listPartitionReassignments(RequestContext context, AbstractRequest request) {
    ListPartitionReassignmentsRequestData req = ((ListPartitionReassignmentsRequest) request).data();
    ListPartitionReassignmentsResponseData body = new ListPartitionReassignmentsResponseData().setErrorCode(Errors.NONE.code());
    if (req.topics() == null) {
      for (TopicInfo t : registry.state().topics().values()) {
        listed(body, t, t.partitions());
      }
    } else {
      for (ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics t : req.topics()) {
        Optional<TopicInfo> topic = registry.topic(t.name());
        List<TopicInfo.PartitionInfo> parts = new ArrayList<>();
        for (int index : t.partitionIndexes()) {
          partition(topic, index).ifPresent(parts::add);
        }
        topic.ifPresent(info -> listed(body, info, parts));
      }
    }
    return CompletableFuture.completedFuture(body);
  }

  private static void listed(ListPartitionReassignmentsResponseData body, TopicInfo t, List<TopicInfo.PartitionInfo> parts) {
    ListPartitionReassignmentsResponseData.OngoingTopicReassignment out =
        new ListPartitionReassignmentsResponseData.OngoingTopicReassignment().setName(t.name());
    for (TopicInfo.PartitionInfo p : parts) {
      if (p.reassigning()) {
        out.partitions().add(new ListPartitionReassignmentsResponseData.OngoingPartitionReassignment()
            .setPartitionIndex(p.partition()).setReplicas(p.allReplicas()).setAddingReplicas(p.addingReplicas())
            .setRemovingReplicas(p.removingReplicas()));
      }
    }
    if (!out.partitions().isEmpty()) {
      body.topics().add(out);
    }
  }

  public CompletableFuture<ApiMessage> electLeaders(RequestContext context, AbstractRequest request) {
    ElectLeadersRequestData req = ((ElectLeadersRequest) request).data();
    boolean unclean = request.version() >= 1 && req.electionType() == 1;
    boolean all = req.topicPartitions() == null;
    ElectLeadersResponseData body = new ElectLeadersResponseData().setErrorCode(Errors.NONE.code());
    List<TopicPartition> asked = new ArrayList<>();
    List<ElectLeadersResponseData.PartitionResult> askedResults = new ArrayList<>();
    List<ElectLeadersResponseData.ReplicaElectionResult> topics = new ArrayList<>();
    if (all) {
      for (TopicInfo t : registry.state().topics().values()) {
        ElectLeadersResponseData.ReplicaElectionResult r = new ElectLeadersResponseData.ReplicaElectionResult().setTopic(t.name());
        topics.add(r);
        for (TopicInfo.PartitionInfo p : t.partitions()) {
          ask(r, new TopicPartition(t.name(), p.partition()), asked, askedResults);
        }
      }
    } else {
      for (ElectLeadersRequestData.TopicPartitions tp : req.topicPartitions()) {
        ElectLeadersResponseData.ReplicaElectionResult r = new ElectLeadersResponseData.ReplicaElectionResult().setTopic(tp.topic());
        topics.add(r);
        Optional<TopicInfo> topic = registry.topic(tp.topic());
        for (int p : tp.partitions()) {
          if (partition(topic, p).isEmpty()) {
            r.partitionResult().add(new ElectLeadersResponseData.PartitionResult().setPartitionId(p)
                .setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code())
                .setErrorMessage("partition " + tp.topic() + "-" + p + " does not exist"));
          } else {
            ask(r, new TopicPartition(tp.topic(), p), asked, askedResults);
          }
        }
      }
    }
    CompletableFuture<List<ClusterMetadata.PartitionChange>> elected = asked.isEmpty()
        ? CompletableFuture.completedFuture(List.of())
        : lifecycle.submit(() -> registry.metadata().electLeaders(asked, unclean));
    return elected.handle((results, error) -> {
      for (int i = 0; i < askedResults.size(); i++) {
        ElectLeadersResponseData.PartitionResult r = askedResults.get(i);
        if (error != null) {
          r.setErrorCode(Errors.REQUEST_TIMED_OUT.code()).setErrorMessage("the controller did not apply the election: "
              + rootMessage(error));
        } else {
          ClusterMetadata.PartitionChange c = results.get(i);
          r.setErrorCode(c.error().code()).setErrorMessage(c.error() == Errors.NONE ? null : c.message());
        }
      }
      for (ElectLeadersResponseData.ReplicaElectionResult t : topics) {
        if (all) {
          // as Kafka: electing every partition reports only the partitions where an election was needed
          t.partitionResult().removeIf(r -> r.errorCode() == Errors.ELECTION_NOT_NEEDED.code());
        }
        if (!all || !t.partitionResult().isEmpty()) {
          body.replicaElectionResults().add(t);
        }
      }
      return body;
    });
  }

  private static void ask(ElectLeadersResponseData.ReplicaElectionResult r, TopicPartition tp, List<TopicPartition> asked,
      List<ElectLeadersResponseData.PartitionResult> askedResults) {
    ElectLeadersResponseData.PartitionResult pr = new ElectLeadersResponseData.PartitionResult().setPartitionId(tp.partition());
    r.partitionResult().add(pr);
    asked.add(tp);
    askedResults.add(pr);
  }

  private static Optional<TopicInfo.PartitionInfo> partition(Optional<TopicInfo> topic, int index) {
    return topic.filter(t -> index >= 0 && index < t.partitions().size()).map(t -> t.partitions().get(index));
  }

  private static void fail(AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse pr, Errors error, String message) {
    pr.setErrorCode(error.code()).setErrorMessage(message);
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return String.valueOf(t.getMessage());
  }
}
