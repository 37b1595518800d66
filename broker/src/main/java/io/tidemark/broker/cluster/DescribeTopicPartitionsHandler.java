package io.tidemark.broker.cluster;

import io.tidemark.broker.partition.Partitions;
import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.protocol.RequestContext;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.broker.topic.TopicRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.DescribeTopicPartitionsRequestData;
import org.apache.kafka.common.message.DescribeTopicPartitionsResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DescribeTopicPartitionsRequest;

/**
 * DescribeTopicPartitions (v0): topics (the asked ones, or all) in name order with their
 * partitions, paged by a cursor: at most {@code ResponsePartitionLimit} partitions (capped at
 * {@value #MAX_PARTITIONS}) per response, and a next cursor when more remain.
 */
public final class DescribeTopicPartitionsHandler implements ApiHandler {

  static final int MAX_PARTITIONS = 2000;
  private final ClusterView cluster;
  private final TopicRegistry registry;
  private final Leaders leaders;

  public DescribeTopicPartitionsHandler(ClusterView cluster, TopicRegistry registry, Partitions partitions) {
    this.cluster = cluster;
    this.registry = registry;
    this.leaders = new Leaders(cluster, partitions);
  }

  /**
   * The topic operations a client may be granted (READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE,
   * DESCRIBE_CONFIGS, ALTER_CONFIGS), as bits by operation code: what Kafka reports for every topic
   * without an authorizer. With ACLs on, the ACL layer narrows it to the caller's.
   */
  public static final java.util.Set<org.apache.kafka.common.acl.AclOperation> TOPIC_OPERATIONS = java.util.EnumSet.of(
      org.apache.kafka.common.acl.AclOperation.READ, org.apache.kafka.common.acl.AclOperation.WRITE,
      org.apache.kafka.common.acl.AclOperation.CREATE, org.apache.kafka.common.acl.AclOperation.DELETE,
      org.apache.kafka.common.acl.AclOperation.ALTER, org.apache.kafka.common.acl.AclOperation.DESCRIBE,
      org.apache.kafka.common.acl.AclOperation.DESCRIBE_CONFIGS, org.apache.kafka.common.acl.AclOperation.ALTER_CONFIGS);

  private static final int ALL_TOPIC_OPERATIONS = org.apache.kafka.common.utils.Utils.to32BitField(
      TOPIC_OPERATIONS.stream().map(o -> o.code()).collect(java.util.stream.Collectors.toSet()));

  @Override
  public CompletableFuture<ApiMessage> handle(RequestContext context, AbstractRequest request) {
    DescribeTopicPartitionsRequestData req = ((DescribeTopicPartitionsRequest) request).data();
    TreeSet<String> names = new TreeSet<>();
    if (req.topics().isEmpty()) {
      names.addAll(registry.state().topics().keySet());
    } else {
      req.topics().forEach(t -> names.add(t.name()));
    }
    String startTopic = req.cursor() == null ? null : req.cursor().topicName();
    int startPartition = req.cursor() == null ? 0 : Math.max(0, req.cursor().partitionIndex());
    int budget = req.responsePartitionLimit() <= 0 ? MAX_PARTITIONS : Math.min(req.responsePartitionLimit(), MAX_PARTITIONS);
    DescribeTopicPartitionsResponseData body = new DescribeTopicPartitionsResponseData();
    for (String name : startTopic == null ? names : names.tailSet(startTopic, true)) {
      Optional<TopicInfo> topic = registry.topic(name);
      DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic out =
          new DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic().setName(name)
              .setTopicAuthorizedOperations(ALL_TOPIC_OPERATIONS);
      if (topic.isEmpty()) {
        body.topics().add(out.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code()).setTopicId(Uuid.ZERO_UUID));
        continue;
      }
      if (budget == 0) {
        body.setNextCursor(new DescribeTopicPartitionsResponseData.Cursor().setTopicName(name).setPartitionIndex(0));
        break;
      }
      TopicInfo t = topic.get();
      out.setTopicId(t.id()).setIsInternal(t.internal());
      List<DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponsePartition> parts = new ArrayList<>();
      int first = name.equals(startTopic) ? startPartition : 0;
      for (int p = first; p < t.partitions().size(); p++) {
        if (budget == 0) {
          body.setNextCursor(new DescribeTopicPartitionsResponseData.Cursor().setTopicName(name).setPartitionIndex(p));
          break;
        }
        TopicInfo.PartitionInfo info = t.partitions().get(p);
        boolean led = leaders.available(name, info);
        parts.add(new DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponsePartition().setPartitionIndex(p)
            .setErrorCode(led ? Errors.NONE.code() : Errors.LEADER_NOT_AVAILABLE.code()).setLeaderId(led ? info.leader() : -1)
            .setLeaderEpoch(info.leaderEpoch()).setReplicaNodes(leaders.replicas(info))
            .setIsrNodes(leaders.isr(info, led))
            .setEligibleLeaderReplicas(List.of()).setLastKnownElr(List.of()).setOfflineReplicas(List.of()));
        budget--;
      }
      out.setPartitions(parts);
      body.topics().add(out);
      if (body.nextCursor() != null) {
        break;
      }
    }
    return CompletableFuture.completedFuture(body);
  }
}
