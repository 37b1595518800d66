package io.tidemark.broker.acl;

import static io.tidemark.broker.acl.RequestAuthorizer.denied;
import static io.tidemark.broker.acl.RequestAuthorizer.partial;

import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.protocol.RequestContext;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.message.ConsumerGroupDescribeResponseData;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetDeleteResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatRequest;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetDeleteRequest;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Authorization of the coordinator APIs, with Kafka's operations: JoinGroup, SyncGroup,
 * Heartbeat, LeaveGroup, ConsumerGroupHeartbeat and OffsetCommit READ on the group (OffsetCommit
 * and OffsetDelete also READ on each topic), OffsetFetch, DescribeGroups, ConsumerGroupDescribe
 * and FindCoordinator DESCRIBE on the group (FindCoordinator of a transaction DESCRIBE on the
 * transactional id), DeleteGroups and OffsetDelete DELETE on the group, ListGroups every group
 * with DESCRIBE on the cluster or only the groups the principal may describe, InitProducerId
 * WRITE on the transactional id or, without one, IDEMPOTENT_WRITE on the cluster or WRITE on some
 * topic (KIP-679). Errors: GROUP_, TOPIC_, TRANSACTIONAL_ID_ and CLUSTER_AUTHORIZATION_FAILED.
 * Stateless.
 */
final class GroupRequests {
  private final Authorizer authorizer;

  GroupRequests(Authorizer authorizer) {
    this.authorizer = authorizer;
  }

  void addTo(Map<ApiKeys, RequestAuthorizer.Rule> rules) {
    rules.put(ApiKeys.JOIN_GROUP, single(AclOperation.READ, r -> ((JoinGroupRequest) r).data().groupId()));
    rules.put(ApiKeys.SYNC_GROUP, single(AclOperation.READ, r -> ((SyncGroupRequest) r).data().groupId()));
    rules.put(ApiKeys.HEARTBEAT, single(AclOperation.READ, r -> ((HeartbeatRequest) r).data().groupId()));
    rules.put(ApiKeys.LEAVE_GROUP, single(AclOperation.READ, r -> ((LeaveGroupRequest) r).data().groupId()));
    rules.put(ApiKeys.CONSUMER_GROUP_HEARTBEAT, this::consumerGroupHeartbeat);
    rules.put(ApiKeys.OFFSET_COMMIT, this::offsetCommit);
    rules.put(ApiKeys.OFFSET_DELETE, this::offsetDelete);
    rules.put(ApiKeys.OFFSET_FETCH, this::offsetFetch);
    rules.put(ApiKeys.DESCRIBE_GROUPS, (c, r, inner) -> inner.handle(c, r).thenApply(b -> describeGroups(c, b)));
    rules.put(ApiKeys.CONSUMER_GROUP_DESCRIBE, (c, r, inner) -> inner.handle(c, r).thenApply(b -> consumerGroupDescribe(c, b)));
    rules.put(ApiKeys.LIST_GROUPS, (c, r, inner) -> inner.handle(c, r).thenApply(b -> listGroups(c, b)));
    rules.put(ApiKeys.DELETE_GROUPS, this::deleteGroups);
    rules.put(ApiKeys.FIND_COORDINATOR, this::findCoordinator);
    rules.put(ApiKeys.INIT_PRODUCER_ID, this::initProducerId);
  }

  private boolean group(RequestContext c, AclOperation op, String groupId) {
    return authorizer.allowed(c, op, ResourceType.GROUP, groupId);
  }

  private RequestAuthorizer.Rule single(AclOperation op, Function<AbstractRequest, String> groupId) {
    return (c, r, inner) -> group(c, op, groupId.apply(r)) ? inner.handle(c, r) : deniedGroup(op, groupId.apply(r));
  }

  private static CompletableFuture<ApiMessage> deniedGroup(AclOperation op, String groupId) {
    return CompletableFuture.failedFuture(new GroupAuthorizationException(op + " on group " + groupId + " is needed"));
  }

  private CompletableFuture<ApiMessage> consumerGroupHeartbeat(RequestContext c, AbstractRequest r, ApiHandler inner) {
    var data = ((ConsumerGroupHeartbeatRequest) r).data();
    if (!group(c, AclOperation.READ, data.groupId())) {
      return deniedGroup(AclOperation.READ, data.groupId());
    }
    if (data.subscribedTopicNames() != null) {
      Set<String> denied = denied(authorizer, c, AclOperation.DESCRIBE, ResourceType.TOPIC, data.subscribedTopicNames());
      if (!denied.isEmpty()) {
        return CompletableFuture.failedFuture(new TopicAuthorizationException("DESCRIBE is needed on the subscribed topics "
            + new java.util.TreeSet<>(denied)));
      }
    }
    return inner.handle(c, r);
  }

  private CompletableFuture<ApiMessage> offsetCommit(RequestContext c, AbstractRequest r, ApiHandler inner) {
    OffsetCommitRequestData data = ((OffsetCommitRequest) r).data();
    if (!group(c, AclOperation.READ, data.groupId())) {
      return deniedGroup(AclOperation.READ, data.groupId());
    }
    Set<String> denied = denied(authorizer, c, AclOperation.READ, ResourceType.TOPIC,
        data.topics().stream().map(OffsetCommitRequestData.OffsetCommitRequestTopic::name).toList());
    if (denied.isEmpty()) {
      return inner.handle(c, r);
    }
    OffsetCommitRequestData kept = data.duplicate();
    kept.topics().removeIf(t -> denied.contains(t.name()));
    return partial(c, r, inner, kept, kept.topics().isEmpty(), OffsetCommitResponseData::new, response -> {
      for (OffsetCommitRequestData.OffsetCommitRequestTopic t : data.topics()) {
        if (denied.contains(t.name())) {
          var tr = new OffsetCommitResponseData.OffsetCommitResponseTopic().setName(t.name());
          t.partitions().forEach(p -> tr.partitions().add(new OffsetCommitResponseData.OffsetCommitResponsePartition()
              .setPartitionIndex(p.partitionIndex()).setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())));
          response.topics().add(tr);
        }
      }
    });
  }

  private CompletableFuture<ApiMessage> offsetDelete(RequestContext c, AbstractRequest r, ApiHandler inner) {
    OffsetDeleteRequestData data = ((OffsetDeleteRequest) r).data();
    if (!group(c, AclOperation.DELETE, data.groupId())) {
      return deniedGroup(AclOperation.DELETE, data.groupId());
    }
    Set<String> denied = denied(authorizer, c, AclOperation.READ, ResourceType.TOPIC,
        data.topics().stream().map(OffsetDeleteRequestData.OffsetDeleteRequestTopic::name).toList());
    if (denied.isEmpty()) {
      return inner.handle(c, r);
    }
    OffsetDeleteRequestData kept = data.duplicate();
    kept.topics().removeIf(t -> denied.contains(t.name()));
    return partial(c, r, inner, kept, kept.topics().isEmpty(), OffsetDeleteResponseData::new, response -> {
      for (OffsetDeleteRequestData.OffsetDeleteRequestTopic t : data.topics()) {
        if (denied.contains(t.name())) {
          var tr = new OffsetDeleteResponseData.OffsetDeleteResponseTopic().setName(t.name());
          t.partitions().forEach(p -> tr.partitions().add(new OffsetDeleteResponseData.OffsetDeleteResponsePartition()
              .setPartitionIndex(p.partitionIndex()).setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())));
          response.topics().add(tr);
        }
      }
    });
  }

  private CompletableFuture<ApiMessage> offsetFetch(RequestContext c, AbstractRequest r, ApiHandler inner) {
    OffsetFetchRequestData data = ((OffsetFetchRequest) r).data();
    short topicDenied = Errors.TOPIC_AUTHORIZATION_FAILED.code();
    if (r.version() < 8) {
      if (!group(c, AclOperation.DESCRIBE, data.groupId())) {
        return deniedGroup(AclOperation.DESCRIBE, data.groupId());
      }
      boolean all = data.topics() == null;
      return inner.handle(c, r).thenApply(body -> {
        var response = (OffsetFetchResponseData) body;
        if (all) {
          response.topics().removeIf(t -> !authorizer.allowed(c, AclOperation.DESCRIBE, ResourceType.TOPIC, t.name()));
        } else {
          response.topics().stream().filter(t -> !authorizer.allowed(c, AclOperation.DESCRIBE, ResourceType.TOPIC, t.name()))
              .forEach(t -> t.partitions().forEach(p -> p.setErrorCode(topicDenied).setCommittedOffset(-1)
                  .setCommittedLeaderEpoch(-1).setMetadata("")));
        }
        return body;
      });
    }
    Map<String, Boolean> allTopics = new HashMap<>();
    data.groups().forEach(g -> allTopics.put(g.groupId(), g.topics() == null));
    return inner.handle(c, r).thenApply(body -> {
      for (OffsetFetchResponseData.OffsetFetchResponseGroup g : ((OffsetFetchResponseData) body).groups()) {
        if (!group(c, AclOperation.DESCRIBE, g.groupId())) {
          g.setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code()).setTopics(new ArrayList<>());
        } else if (Boolean.TRUE.equals(allTopics.get(g.groupId()))) {
          g.topics().removeIf(t -> !authorizer.allowed(c, AclOperation.DESCRIBE, ResourceType.TOPIC, t.name()));
        } else {
          g.topics().stream().filter(t -> !authorizer.allowed(c, AclOperation.DESCRIBE, ResourceType.TOPIC, t.name()))
              .forEach(t -> t.partitions().forEach(p -> p.setErrorCode(topicDenied).setCommittedOffset(-1)
                  .setCommittedLeaderEpoch(-1).setMetadata("")));
        }
      }
      return body;
    });
  }

  private ApiMessage describeGroups(RequestContext c, ApiMessage body) {
    for (DescribeGroupsResponseData.DescribedGroup g : ((DescribeGroupsResponseData) body).groups()) {
      if (!group(c, AclOperation.DESCRIBE, g.groupId())) {
        g.setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code()).setGroupState("").setProtocolType("").setProtocolData("")
            .setMembers(new ArrayList<>());
      }
    }
    return body;
  }

  private ApiMessage consumerGroupDescribe(RequestContext c, ApiMessage body) {
    for (ConsumerGroupDescribeResponseData.DescribedGroup g : ((ConsumerGroupDescribeResponseData) body).groups()) {
      if (!group(c, AclOperation.DESCRIBE, g.groupId())) {
        g.setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code()).setErrorMessage("DESCRIBE on group " + g.groupId()
            + " is needed").setGroupState("").setAssignorName("").setMembers(new ArrayList<>());
      }
    }
    return body;
  }

  private ApiMessage listGroups(RequestContext c, ApiMessage body) {
    if (!authorizer.allowedOnCluster(c, AclOperation.DESCRIBE)) {
      ((ListGroupsResponseData) body).groups().removeIf(g -> !group(c, AclOperation.DESCRIBE, g.groupId()));
    }
    return body;
  }

  private CompletableFuture<ApiMessage> deleteGroups(RequestContext c, AbstractRequest r, ApiHandler inner) {
    DeleteGroupsRequestData data = ((DeleteGroupsRequest) r).data();
    Set<String> denied = denied(authorizer, c, AclOperation.DELETE, ResourceType.GROUP, data.groupsNames());
    if (denied.isEmpty()) {
      return inner.handle(c, r);
    }
    DeleteGroupsRequestData kept = data.duplicate();
    kept.groupsNames().removeIf(denied::contains);
    return partial(c, r, inner, kept, kept.groupsNames().isEmpty(), DeleteGroupsResponseData::new, response -> {
      for (String g : new java.util.TreeSet<>(denied)) {
        response.results().add(new DeleteGroupsResponseData.DeletableGroupResult().setGroupId(g)
            .setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code()));
      }
    });
  }

  private CompletableFuture<ApiMessage> findCoordinator(RequestContext c, AbstractRequest r, ApiHandler inner) {
    FindCoordinatorRequestData data = ((FindCoordinatorRequest) r).data();
    boolean transaction = data.keyType() == FindCoordinatorRequest.CoordinatorType.TRANSACTION.id();
    ResourceType type = transaction ? ResourceType.TRANSACTIONAL_ID : ResourceType.GROUP;
    Errors error = transaction ? Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED : Errors.GROUP_AUTHORIZATION_FAILED;
    if (r.version() < 4) {
      return authorizer.allowed(c, AclOperation.DESCRIBE, type, data.key()) ? inner.handle(c, r)
          : CompletableFuture.failedFuture(error.exception("DESCRIBE on " + data.key() + " is needed"));
    }
    return inner.handle(c, r).thenApply(body -> {
      for (FindCoordinatorResponseData.Coordinator co : ((FindCoordinatorResponseData) body).coordinators()) {
        if (!authorizer.allowed(c, AclOperation.DESCRIBE, type, co.key())) {
          co.setErrorCode(error.code()).setErrorMessage(error.message()).setNodeId(-1).setHost("").setPort(-1);
        }
      }
      return body;
    });
  }

  private CompletableFuture<ApiMessage> initProducerId(RequestContext c, AbstractRequest r, ApiHandler inner) {
    String transactionalId = ((InitProducerIdRequest) r).data().transactionalId();
    if (transactionalId != null) {
      return authorizer.allowed(c, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactionalId) ? inner.handle(c, r)
          : CompletableFuture.failedFuture(new TransactionalIdAuthorizationException("WRITE on transactional id "
              + transactionalId + " is needed"));
    }
    boolean allowed = authorizer.allowedOnCluster(c, AclOperation.IDEMPOTENT_WRITE)
        || authorizer.allowedOnAny(c, AclOperation.WRITE, ResourceType.TOPIC);
    return allowed ? inner.handle(c, r) : CompletableFuture.failedFuture(new ClusterAuthorizationException(
        "an idempotent producer needs IDEMPOTENT_WRITE on the cluster or WRITE on some topic"));
  }

}
