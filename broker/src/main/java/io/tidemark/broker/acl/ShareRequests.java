package io.tidemark.broker.acl;

import static io.tidemark.broker.acl.RequestAuthorizer.denied;

import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.protocol.RequestContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.message.ShareGroupDescribeResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AlterShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.DeleteShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.DescribeShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.ShareAcknowledgeRequest;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareGroupHeartbeatRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Authorization of the share-group APIs (KIP-932) with Kafka's operations: ShareGroupHeartbeat,
 * ShareFetch, ShareAcknowledge and AlterShareGroupOffsets READ on the group, ShareGroupDescribe
 * and DescribeShareGroupOffsets DESCRIBE on it, DeleteShareGroupOffsets DELETE on it; the topics
 * need DESCRIBE (heartbeat subscriptions, offsets description) or READ (fetch, acknowledge, offset
 * changes). Simplification against Kafka: a request naming any denied topic is refused whole with
 * TOPIC_AUTHORIZATION_FAILED (Kafka answers the other topics); ShareGroupDescribe answers each
 * denied group GROUP_AUTHORIZATION_FAILED as Kafka does. The share-state APIs brokers send each
 * other (Initialize/Read/Write/DeleteShareGroupState, ReadShareGroupStateSummary) need
 * CLUSTER_ACTION on the cluster, as in Kafka. Stateless.
 */
final class ShareRequests {
  private final Authorizer authorizer;
  private final RequestAuthorizer.Topics topics;

  ShareRequests(Authorizer authorizer, RequestAuthorizer.Topics topics) {
    this.authorizer = authorizer;
    this.topics = topics;
  }

  void addTo(Map<ApiKeys, RequestAuthorizer.Rule> rules) {
    for (ApiKeys state : List.of(ApiKeys.INITIALIZE_SHARE_GROUP_STATE, ApiKeys.READ_SHARE_GROUP_STATE, ApiKeys.WRITE_SHARE_GROUP_STATE,
        ApiKeys.DELETE_SHARE_GROUP_STATE, ApiKeys.READ_SHARE_GROUP_STATE_SUMMARY)) {
      rules.put(state, (c, r, inner) -> authorizer.allowedOnCluster(c, AclOperation.CLUSTER_ACTION) ? inner.handle(c, r)
          : CompletableFuture.failedFuture(new org.apache.kafka.common.errors.ClusterAuthorizationException(
              "CLUSTER_ACTION on the cluster is needed for " + state.name)));
    }
    rules.put(ApiKeys.SHARE_GROUP_HEARTBEAT, (c, r, inner) -> {
      var d = ((ShareGroupHeartbeatRequest) r).data();
      return check(c, r, inner, d.groupId(), AclOperation.READ, AclOperation.DESCRIBE,
          d.subscribedTopicNames() == null ? List.of() : d.subscribedTopicNames());
    });
    rules.put(ApiKeys.SHARE_GROUP_DESCRIBE, (c, r, inner) -> inner.handle(c, r).thenApply(body -> {
      for (ShareGroupDescribeResponseData.DescribedGroup g : ((ShareGroupDescribeResponseData) body).groups()) {
        if (!authorizer.allowed(c, AclOperation.DESCRIBE, ResourceType.GROUP, g.groupId())) {
          g.setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code()).setErrorMessage("DESCRIBE on group " + g.groupId()
              + " is needed").setGroupState("").setAssignorName("").setMembers(new ArrayList<>());
        }
      }
      return body;
    }));
    rules.put(ApiKeys.SHARE_FETCH, (c, r, inner) -> {
      var d = ((ShareFetchRequest) r).data();
      List<String> names = new ArrayList<>();
      d.topics().forEach(t -> names.add(nameOf(t.topicId())));
      return check(c, r, inner, d.groupId(), AclOperation.READ, AclOperation.READ, names);
    });
    rules.put(ApiKeys.SHARE_ACKNOWLEDGE, (c, r, inner) -> {
      var d = ((ShareAcknowledgeRequest) r).data();
      List<String> names = new ArrayList<>();
      d.topics().forEach(t -> names.add(nameOf(t.topicId())));
      return check(c, r, inner, d.groupId(), AclOperation.READ, AclOperation.READ, names);
    });
    rules.put(ApiKeys.DESCRIBE_SHARE_GROUP_OFFSETS, (c, r, inner) -> {
      for (var g : ((DescribeShareGroupOffsetsRequest) r).data().groups()) {
        List<String> names = g.topics() == null ? List.of() : g.topics().stream().map(t -> t.topicName()).toList();
        CompletableFuture<ApiMessage> refused = refusal(c, g.groupId(), AclOperation.DESCRIBE, AclOperation.DESCRIBE, names);
        if (refused != null) {
          return refused;
        }
      }
      return inner.handle(c, r);
    });
    rules.put(ApiKeys.ALTER_SHARE_GROUP_OFFSETS, (c, r, inner) -> {
      var d = ((AlterShareGroupOffsetsRequest) r).data();
      List<String> names = new ArrayList<>();
      d.topics().forEach(t -> names.add(t.topicName()));
      return check(c, r, inner, d.groupId(), AclOperation.READ, AclOperation.READ, names);
    });
    rules.put(ApiKeys.DELETE_SHARE_GROUP_OFFSETS, (c, r, inner) -> {
      var d = ((DeleteShareGroupOffsetsRequest) r).data();
      return check(c, r, inner, d.groupId(), AclOperation.DELETE, AclOperation.READ,
          d.topics().stream().map(t -> t.topicName()).toList());
    });
  }

  private String nameOf(Uuid id) {
    return id == null ? null : topics.nameOf(id);
  }

  private CompletableFuture<ApiMessage> check(RequestContext c, AbstractRequest r, ApiHandler inner, String groupId,
      AclOperation groupOp, AclOperation topicOp, List<String> topicNames) {
    CompletableFuture<ApiMessage> refused = refusal(c, groupId, groupOp, topicOp, topicNames);
    return refused != null ? refused : inner.handle(c, r);
  }

  /** The refusal of a request whose group or any topic is denied, or null. */
  private CompletableFuture<ApiMessage> refusal(RequestContext c, String groupId, AclOperation groupOp,
      AclOperation topicOp, List<String> topicNames) {
    if (!authorizer.allowed(c, groupOp, ResourceType.GROUP, groupId)) {
      return CompletableFuture.failedFuture(new GroupAuthorizationException(groupOp + " on group " + groupId + " is needed"));
    }
    Set<String> denied = denied(authorizer, c, topicOp, ResourceType.TOPIC, topicNames);
    if (!denied.isEmpty()) {
      return CompletableFuture.failedFuture(new TopicAuthorizationException(topicOp + " is needed on topics "
          + new java.util.TreeSet<>(denied)));
    }
    return null;
  }
}
