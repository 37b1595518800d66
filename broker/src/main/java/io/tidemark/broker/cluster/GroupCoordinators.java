package io.tidemark.broker.cluster;

import io.tidemark.broker.group.GroupApis;
import io.tidemark.broker.partition.Partitions;
import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.broker.topic.TopicRegistry;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ConsumerGroupDescribeRequest;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatRequest;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetDeleteRequest;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.SyncGroupRequest;

/**
 * Which broker coordinates a group: the leader of the group's {@code __consumer_offsets}
 * partition (the same partition the coordinator keeps the group's offsets in). {@link #gate}
 * wraps a group API so that a broker answers only for groups it coordinates, and
 * {@code NOT_COORDINATOR} (another broker leads the partition) or
 * {@code COORDINATOR_NOT_AVAILABLE} (no leader yet, or the partition is still opening here) or
 * {@code COORDINATOR_LOAD_IN_PROGRESS} (its groups are loading: the broker listens while it loads
 * them at start, and a partition that moved here loads its groups) otherwise. A request naming
 * several groups is answered with that error for all of them when
 * any is coordinated elsewhere (Kafka clients send each coordinator only its own groups).
 * Stateless apart from its views; callable from any thread.
 */
public final class GroupCoordinators {

  private final TopicRegistry registry;
  private final Partitions partitions;
  private final int nodeId;
  private final int offsetsPartitions;
  private final java.util.function.IntPredicate loading;

  /** @param loading whether the groups of an offsets partition open here are still loading (at start, after a move) */
  public GroupCoordinators(TopicRegistry registry, Partitions partitions, int nodeId, int offsetsPartitions,
      java.util.function.IntPredicate loading) {
    this.loading = loading;
    this.registry = registry;
    this.partitions = partitions;
    this.nodeId = nodeId;
    this.offsetsPartitions = offsetsPartitions;
  }

  /** The node id coordinating {@code group}, when its offsets partition has a leader. */
  public Optional<Integer> coordinator(String group) {
    int p = GroupApis.offsetsPartitionFor(group, offsetsPartitions);
    return registry.topic(GroupApis.offsetsTopic())
        .filter(t -> p < t.partitions().size())
        .map(t -> t.partitions().get(p).leader())
        .filter(leader -> leader >= 0);
  }

  /** The error for a group not served here now, or NONE. */
  Errors check(String group) {
    Optional<Integer> leader = coordinator(group);
    if (leader.isEmpty()) {
      return Errors.COORDINATOR_NOT_AVAILABLE;
    }
    if (leader.get() != nodeId) {
      return Errors.NOT_COORDINATOR;
    }
    int partition = GroupApis.offsetsPartitionFor(group, offsetsPartitions);
    if (partitions.get(new TopicPartition(GroupApis.offsetsTopic(), partition)).isEmpty()) {
      return Errors.COORDINATOR_NOT_AVAILABLE;
    }
    return loading.test(partition) ? Errors.COORDINATOR_LOAD_IN_PROGRESS : Errors.NONE;
  }

  /** {@code api}, answered only for groups coordinated here. */
  public ApiHandler gate(ApiHandler api) {
    return (context, request) -> {
      for (String group : groups(request)) {
        Errors error = check(group);
        if (error != Errors.NONE) {
          return CompletableFuture.completedFuture((ApiMessage) request.getErrorResponse(0, error.exception()).data());
        }
      }
      return api.handle(context, request);
    };
  }

  private static List<String> groups(AbstractRequest request) {
    return switch (request) {
      case JoinGroupRequest r -> List.of(r.data().groupId());
      case SyncGroupRequest r -> List.of(r.data().groupId());
      case HeartbeatRequest r -> List.of(r.data().groupId());
      case LeaveGroupRequest r -> List.of(r.data().groupId());
      case OffsetCommitRequest r -> List.of(r.data().groupId());
      case OffsetDeleteRequest r -> List.of(r.data().groupId());
      case OffsetFetchRequest r -> r.version() < 8 ? List.of(r.data().groupId())
          : r.data().groups().stream().map(OffsetFetchRequestData.OffsetFetchRequestGroup::groupId).toList();
      case DescribeGroupsRequest r -> r.data().groups();
      case DeleteGroupsRequest r -> r.data().groupsNames();
      case ConsumerGroupHeartbeatRequest r -> List.of(r.data().groupId());
      case ConsumerGroupDescribeRequest r -> r.data().groupIds();
      case org.apache.kafka.common.requests.ShareGroupHeartbeatRequest r -> List.of(r.data().groupId());
      case org.apache.kafka.common.requests.ShareGroupDescribeRequest r -> r.data().groupIds();
      case org.apache.kafka.common.requests.DescribeShareGroupOffsetsRequest r -> r.data().groups().stream()
          .map(g -> g.groupId()).toList();
      case org.apache.kafka.common.requests.AlterShareGroupOffsetsRequest r -> List.of(r.data().groupId());
      case org.apache.kafka.common.requests.DeleteShareGroupOffsetsRequest r -> List.of(r.data().groupId());
      case org.apache.kafka.common.requests.TxnOffsetCommitRequest r -> List.of(r.data().groupId());
      default -> List.of();
    };
  }
}
