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
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData;
import org.apache.kafka.common.message.DescribeTransactionsRequestData;
import org.apache.kafka.common.message.DescribeTransactionsResponseData;
import org.apache.kafka.common.message.ListTransactionsResponseData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AddOffsetsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.DescribeTransactionsRequest;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Authorization of the transaction APIs, with Kafka's operations: AddPartitionsToTxn WRITE on the
 * transactional id and WRITE on every topic (a denied topic fails the whole request: its
 * partitions get TOPIC_AUTHORIZATION_FAILED, the others OPERATION_NOT_ATTEMPTED, and nothing is
 * added), AddOffsetsToTxn WRITE on the transactional id and READ on the group, EndTxn WRITE on the
 * transactional id, TxnOffsetCommit WRITE on the transactional id, READ on the group and READ on
 * each topic (denied topics answered, the rest committed), WriteTxnMarkers CLUSTER_ACTION on the
 * cluster (so a cluster with an authorizer lists its brokers' principal in {@code super.users}),
 * DescribeTransactions DESCRIBE per transactional id, ListTransactions only the ids the principal
 * may describe. Errors: TRANSACTIONAL_ID_, GROUP_, TOPIC_ and CLUSTER_AUTHORIZATION_FAILED.
 * Stateless.
 */
final class TransactionRequests {
  private final Authorizer authorizer;

  TransactionRequests(Authorizer authorizer) {
    this.authorizer = authorizer;
  }

  void addTo(Map<ApiKeys, RequestAuthorizer.Rule> rules) {
    rules.put(ApiKeys.ADD_PARTITIONS_TO_TXN, this::addPartitionsToTxn);
    rules.put(ApiKeys.ADD_OFFSETS_TO_TXN, this::addOffsetsToTxn);
    rules.put(ApiKeys.END_TXN, (c, r, inner) -> {
      String id = ((EndTxnRequest) r).data().transactionalId();
      return writable(c, id) ? inner.handle(c, r) : deniedId(id);
    });
    rules.put(ApiKeys.WRITE_TXN_MARKERS, (c, r, inner) -> authorizer.allowedOnCluster(c, AclOperation.CLUSTER_ACTION)
        ? inner.handle(c, r)
        : CompletableFuture.failedFuture(new ClusterAuthorizationException("CLUSTER_ACTION on the cluster is needed for "
            + "WriteTxnMarkers")));
    rules.put(ApiKeys.TXN_OFFSET_COMMIT, this::txnOffsetCommit);
    rules.put(ApiKeys.DESCRIBE_TRANSACTIONS, this::describeTransactions);
    rules.put(ApiKeys.LIST_TRANSACTIONS, (c, r, inner) -> inner.handle(c, r).thenApply(b -> listTransactions(c, b)));
  }

  private boolean writable(RequestContext c, String transactionalId) {
    return authorizer.allowed(c, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactionalId);
  }

  private static CompletableFuture<ApiMessage> deniedId(String transactionalId) {
    return CompletableFuture.failedFuture(new TransactionalIdAuthorizationException(
        "WRITE on transactional id " + transactionalId + " is needed"));
  }

  private CompletableFuture<ApiMessage> addPartitionsToTxn(RequestContext c, AbstractRequest r, ApiHandler inner) {
    var request = (AddPartitionsToTxnRequest) r;
    if (request.version() > 3) { // the broker-to-broker verification of KIP-890
      return authorizer.allowedOnCluster(c, AclOperation.CLUSTER_ACTION) ? inner.handle(c, r)
          : CompletableFuture.failedFuture(new ClusterAuthorizationException("CLUSTER_ACTION on the cluster is needed"));
    }
    String id = request.data().v3AndBelowTransactionalId();
    if (!writable(c, id)) {
      return deniedId(id);
    }
    List<TopicPartition> partitions = AddPartitionsToTxnRequest.getPartitions(request.data().v3AndBelowTopics());
    Set<String> topics = new TreeSet<>();
    partitions.forEach(tp -> topics.add(tp.topic()));
    Set<String> denied = denied(authorizer, c, AclOperation.WRITE, ResourceType.TOPIC, topics);
    if (denied.isEmpty()) {
      return inner.handle(c, r);
    }
    Map<TopicPartition, Errors> errors = new HashMap<>();
    for (TopicPartition tp : partitions) {
      errors.put(tp, denied.contains(tp.topic()) ? Errors.TOPIC_AUTHORIZATION_FAILED : Errors.OPERATION_NOT_ATTEMPTED);
    }
    return CompletableFuture.completedFuture(new AddPartitionsToTxnResponseData().setResultsByTopicV3AndBelow(
        AddPartitionsToTxnResponse.resultForTransaction(AddPartitionsToTxnResponse.V3_AND_BELOW_TXN_ID, errors).topicResults()));
  }

  private CompletableFuture<ApiMessage> addOffsetsToTxn(RequestContext c, AbstractRequest r, ApiHandler inner) {
    var data = ((AddOffsetsToTxnRequest) r).data();
    if (!writable(c, data.transactionalId())) {
      return deniedId(data.transactionalId());
    }
    if (!authorizer.allowed(c, AclOperation.READ, ResourceType.GROUP, data.groupId())) {
      return CompletableFuture.failedFuture(new GroupAuthorizationException("READ on group " + data.groupId() + " is needed"));
    }
    return inner.handle(c, r);
  }

  private CompletableFuture<ApiMessage> txnOffsetCommit(RequestContext c, AbstractRequest r, ApiHandler inner) {
    TxnOffsetCommitRequestData data = ((TxnOffsetCommitRequest) r).data();
    if (!writable(c, data.transactionalId())) {
      return deniedId(data.transactionalId());
    }
    if (!authorizer.allowed(c, AclOperation.READ, ResourceType.GROUP, data.groupId())) {
      return CompletableFuture.failedFuture(new GroupAuthorizationException("READ on group " + data.groupId() + " is needed"));
    }
    Set<String> denied = denied(authorizer, c, AclOperation.READ, ResourceType.TOPIC,
        data.topics().stream().map(TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic::name).toList());
    if (denied.isEmpty()) {
      return inner.handle(c, r);
    }
    TxnOffsetCommitRequestData kept = data.duplicate();
    List<TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic> refused = new ArrayList<>();
    kept.topics().removeIf(t -> denied.contains(t.name()) && refused.add(t));
    return partial(c, r, inner, kept, kept.topics().isEmpty(), TxnOffsetCommitResponseData::new,
        (TxnOffsetCommitResponseData response) -> {
          for (var t : refused) {
            var topic = new TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic().setName(t.name());
            for (var p : t.partitions()) {
              topic.partitions().add(new TxnOffsetCommitResponseData.TxnOffsetCommitResponsePartition()
                  .setPartitionIndex(p.partitionIndex()).setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
            }
            response.topics().add(topic);
          }
        });
  }

  private CompletableFuture<ApiMessage> describeTransactions(RequestContext c, AbstractRequest r, ApiHandler inner) {
    DescribeTransactionsRequestData data = ((DescribeTransactionsRequest) r).data();
    Set<String> denied = denied(authorizer, c, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, data.transactionalIds());
    if (denied.isEmpty()) {
      return inner.handle(c, r);
    }
    DescribeTransactionsRequestData kept = data.duplicate();
    kept.transactionalIds().removeIf(denied::contains);
    return partial(c, r, inner, kept, kept.transactionalIds().isEmpty(), DescribeTransactionsResponseData::new,
        (DescribeTransactionsResponseData response) -> {
          for (String id : new TreeSet<>(denied)) {
            response.transactionStates().add(new DescribeTransactionsResponseData.TransactionState().setTransactionalId(id)
                .setErrorCode(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code()));
          }
        });
  }

  private ApiMessage listTransactions(RequestContext c, ApiMessage body) {
    if (body instanceof ListTransactionsResponseData response) {
      response.transactionStates().removeIf(s ->
          !authorizer.allowed(c, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, s.transactionalId()));
    }
    return body;
  }
}
