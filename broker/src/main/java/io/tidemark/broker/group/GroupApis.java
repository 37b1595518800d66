package io.tidemark.broker.group;

import io.tidemark.broker.protocol.ErrorMapping;
import io.tidemark.broker.protocol.RequestContext;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ConsumerGroupDescribeRequestData;
import org.apache.kafka.common.message.ConsumerGroupDescribeResponseData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatRequestData;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetDeleteResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
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
import org.apache.kafka.common.requests.ListGroupsRequest;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetDeleteRequest;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.utils.Time;
import io.tidemark.broker.partition.Partitions;
import io.tidemark.broker.topic.TopicRegistry;

/**
 * The group APIs: classic JoinGroup (v0–9), SyncGroup (v0–5), Heartbeat (v0–4), LeaveGroup
 * (v0–5); consumer protocol (KIP-848) ConsumerGroupHeartbeat (v0–1), ConsumerGroupDescribe
 * (v0–1); OffsetCommit (v2–9), OffsetFetch (v1–9), DescribeGroups (v0–6), ListGroups (v0–5),
 * DeleteGroups (v0–2), OffsetDelete (v0) for both. Translates requests to
 * {@link GroupCoordinator} calls and results back to responses; holds no state of its own.
 */
public final class GroupApis implements AutoCloseable {

  private final GroupCoordinator coordinator;
  private final TopicView topics;
  /** The controller lease: a broker whose lease lapsed acknowledges no offset commit (its log may have failed over). */
  private final TopicRegistry registry;

  public GroupApis(Partitions partitions, TopicRegistry topics, int offsetsPartitions, Time time, GroupCoordinator.Settings settings) {
    this.registry = topics;
    this.topics = TopicView.of(topics);
    this.coordinator = new GroupCoordinator(settings, time, new OffsetLog(partitions, offsetsPartitions, time), this.topics);
    // the coordinator of a group follows the leadership of its offsets partition (start-up, moves, failover)
    partitions.addListener(new Partitions.Listener() {
      @Override
      public void opened(io.tidemark.broker.partition.PartitionLog log) {
        if (log.topicPartition().topic().equals(OffsetLog.TOPIC)) {
          coordinator.loader().partitionOpened(log.topicPartition().partition());
        }
      }

      @Override
      public void closed(io.tidemark.broker.partition.PartitionLog log) {
        if (log.topicPartition().topic().equals(OffsetLog.TOPIC)) {
          coordinator.loader().partitionClosed(log.topicPartition().partition());
        }
      }
    });
  }

  /** The committed offsets of every group coordinated here, by group (for the consumer-lag meters). */
  public CompletableFuture<Map<String, Map<TopicPartition, Long>>> committedOffsets() {
    return coordinator.offsets().committedOffsets();
  }

  /** Whether the groups kept in {@code partition} of the offsets topic are being loaded here. */
  public boolean loading(int partition) {
    return coordinator.loader().loading(partition);
  }

  /**
   * A transaction ended in {@code offsetsPartition} of the offsets topic (its marker is durable
   * there): the pending TxnOffsetCommit offsets of {@code producerId} become visible or are dropped.
   */
  public void completeTransaction(int offsetsPartition, long producerId, boolean commit) {
    coordinator.offsets().completeTransaction(offsetsPartition, producerId, commit);
  }

  /**
   * TxnOffsetCommit (v0–4): like OffsetCommit, but the offsets become visible only when the
   * producer's transaction commits. Unknown partitions are answered UNKNOWN_TOPIC_OR_PARTITION.
   */
  public CompletableFuture<ApiMessage> txnOffsetCommit(RequestContext ctx, AbstractRequest request) {
    org.apache.kafka.common.message.TxnOffsetCommitRequestData d =
        ((org.apache.kafka.common.requests.TxnOffsetCommitRequest) request).data();
    short v = request.version();
    List<GroupOffsets.Commit> commits = new ArrayList<>();
    List<TopicPartition> order = new ArrayList<>();
    for (org.apache.kafka.common.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic t : d.topics()) {
      Optional<TopicView.Topic> topic = topics.byName(t.name());
      for (org.apache.kafka.common.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition p : t.partitions()) {
        TopicPartition tp = new TopicPartition(t.name(), p.partitionIndex());
        order.add(tp);
        if (topic.isPresent() && p.partitionIndex() >= 0 && p.partitionIndex() < topic.get().partitions()) {
          commits.add(new GroupOffsets.Commit(tp, p.committedOffset(), v >= 2 ? p.committedLeaderEpoch() : -1,
              p.committedMetadata()));
        }
      }
    }
    CompletableFuture<List<Errors>> committed = commits.isEmpty() ? CompletableFuture.completedFuture(List.of())
        : coordinator.offsets().txnCommit(d.groupId(), d.producerId(), d.producerEpoch(), v >= 3 ? d.memberId() : null,
            v >= 3 ? d.groupInstanceId() : null, v >= 3 ? d.generationIdOrMemberEpoch() : -1, commits);
    return coordinatorErrors(committed, commits.size()).thenApply(errors -> {
      Map<TopicPartition, Errors> byPartition = new HashMap<>();
      for (int i = 0; i < commits.size(); i++) {
        byPartition.put(commits.get(i).partition(), errors.get(i));
      }
      org.apache.kafka.common.message.TxnOffsetCommitResponseData resp = new org.apache.kafka.common.message.TxnOffsetCommitResponseData();
      Map<String, org.apache.kafka.common.message.TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic> byTopic = new LinkedHashMap<>();
      for (TopicPartition tp : order) {
        Errors error = byPartition.getOrDefault(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION);
        if (error == Errors.PRODUCER_FENCED && v < 3) {
          error = Errors.INVALID_PRODUCER_EPOCH;
        }
        Errors e = error;
        byTopic.computeIfAbsent(tp.topic(), n -> {
          var t = new org.apache.kafka.common.message.TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic().setName(n);
          resp.topics().add(t);
          return t;
        }).partitions().add(new org.apache.kafka.common.message.TxnOffsetCommitResponseData.TxnOffsetCommitResponsePartition()
            .setPartitionIndex(tp.partition()).setErrorCode(e.code()));
      }
      return resp;
    });
  }

  public static String offsetsTopic() {
    return OffsetLog.TOPIC;
  }

  /** The partition of the offsets topic (of {@code partitions} partitions) that holds {@code group}. */
  public static int offsetsPartitionFor(String group, int partitions) {
    return OffsetLog.partitionFor(group, partitions);
  }

  /**
   * Completes once the groups of every offsets partition open here are loaded (start-up; later
   * partitions that open or close here are followed as they do).
   */
  public CompletableFuture<Void> load() {
    return coordinator.loader().load();
  }

  /** Whether a classic or consumer group {@code group} exists here (the share coordinator keeps the namespace shared). */
  public CompletableFuture<Boolean> exists(String group) {
    return coordinator.describe(List.of(group)).thenApply(views -> views.get(0) != null);
  }

  @Override
  public void close() {
    coordinator.close();
  }

  public CompletableFuture<ApiMessage> joinGroup(RequestContext ctx, AbstractRequest request) {
    JoinGroupRequestData d = ((JoinGroupRequest) request).data();
    short v = request.version();
    List<Member.Protocol> protocols = new ArrayList<>();
    d.protocols().forEach(p -> protocols.add(new Member.Protocol(p.name(), p.metadata())));
    int rebalanceTimeout = v >= 1 ? d.rebalanceTimeoutMs() : d.sessionTimeoutMs();
    ClassicGroupCoordinator.JoinRequest r = new ClassicGroupCoordinator.JoinRequest(d.groupId(), d.memberId(), d.groupInstanceId(),
        ctx.clientId(), ctx.clientHost(), d.sessionTimeoutMs(), rebalanceTimeout, d.protocolType(), protocols, v, v >= 4);
    return coordinator.classic().join(r).thenApply(resp -> {
      if (v < 7) {
        resp.setProtocolType(null);
      }
      if (resp.protocolName() == null && v < 7) {
        resp.setProtocolName("");
      }
      if (resp.errorCode() != Errors.NONE.code() && v >= 7) {
        resp.setProtocolName(null);
      }
      return resp;
    });
  }

  public CompletableFuture<ApiMessage> syncGroup(RequestContext ctx, AbstractRequest request) {
    SyncGroupRequestData d = ((SyncGroupRequest) request).data();
    Map<String, byte[]> assignments = new HashMap<>();
    d.assignments().forEach(a -> assignments.put(a.memberId(), a.assignment()));
    short v = request.version();
    return coordinator.classic().sync(d.groupId(), d.memberId(), d.groupInstanceId(), d.generationId(), v >= 5 ? d.protocolType() : null,
        v >= 5 ? d.protocolName() : null, assignments).thenApply(resp -> {
          if (v < 5) {
            resp.setProtocolType(null).setProtocolName(null);
          }
          return resp;
        });
  }

  public CompletableFuture<ApiMessage> heartbeat(RequestContext ctx, AbstractRequest request) {
    HeartbeatRequestData d = ((HeartbeatRequest) request).data();
    return coordinator.classic().heartbeat(d.groupId(), d.memberId(), d.groupInstanceId(), d.generationId()).thenApply(r -> r);
  }

  public CompletableFuture<ApiMessage> leaveGroup(RequestContext ctx, AbstractRequest request) {
    LeaveGroupRequestData d = ((LeaveGroupRequest) request).data();
    short v = request.version();
    List<ClassicGroupCoordinator.Leaving> leaving = new ArrayList<>();
    if (v < 3) {
      leaving.add(new ClassicGroupCoordinator.Leaving(d.memberId(), null));
    } else {
      d.members().forEach(m -> leaving.add(new ClassicGroupCoordinator.Leaving(m.memberId(), m.groupInstanceId())));
    }
    return coordinator.classic().leave(d.groupId(), leaving).thenApply(errors -> {
      LeaveGroupResponseData resp = new LeaveGroupResponseData();
      if (v < 3) {
        return resp.setErrorCode(errors.get(0).code());
      }
      for (int i = 0; i < leaving.size(); i++) {
        resp.members().add(new LeaveGroupResponseData.MemberResponse().setMemberId(leaving.get(i).memberId())
            .setGroupInstanceId(leaving.get(i).groupInstanceId()).setErrorCode(errors.get(i).code()));
      }
      return resp;
    });
  }

  /**
   * OffsetCommit: as Kafka's request handler does, a partition of a topic that does not exist (or
   * beyond its partition count) is answered UNKNOWN_TOPIC_OR_PARTITION on its own and never reaches
   * the group; the rest is committed (or refused) by the coordinator, group-wide.
   */
  /**
   * The per-commit errors of {@code committed}, or, when it failed as a whole (the offsets partition
   * closed under the write), that failure as a coordinator error for every commit: OffsetCommit and
   * TxnOffsetCommit never answer a partition error such as NOT_LEADER_OR_FOLLOWER, which consumers
   * do not retry ("Unexpected error in commit"; seen in MoveChaosTest as the offsets partition moved).
   */
  private static CompletableFuture<List<Errors>> coordinatorErrors(CompletableFuture<List<Errors>> committed, int count) {
    return committed.handle((errors, e) -> e == null ? errors
        : new ArrayList<>(java.util.Collections.nCopies(count, OffsetLog.toCoordinatorError(e))));
  }

  public CompletableFuture<ApiMessage> offsetCommit(RequestContext ctx, AbstractRequest request) {
    OffsetCommitRequestData d = ((OffsetCommitRequest) request).data();
    short v = request.version();
    List<GroupOffsets.Commit> commits = new ArrayList<>();
    List<TopicPartition> order = new ArrayList<>();
    for (OffsetCommitRequestData.OffsetCommitRequestTopic t : d.topics()) {
      Optional<TopicView.Topic> topic = topics.byName(t.name());
      for (OffsetCommitRequestData.OffsetCommitRequestPartition p : t.partitions()) {
        TopicPartition tp = new TopicPartition(t.name(), p.partitionIndex());
        order.add(tp);
        if (topic.isPresent() && p.partitionIndex() >= 0 && p.partitionIndex() < topic.get().partitions()) {
          commits.add(new GroupOffsets.Commit(tp, p.committedOffset(), v >= 6 ? p.committedLeaderEpoch() : -1, p.committedMetadata()));
        }
      }
    }
    CompletableFuture<List<Errors>> committed = commits.isEmpty() ? CompletableFuture.completedFuture(List.of())
        : registry.metadata().leaseLost() != null
            ? CompletableFuture.completedFuture(commits.stream().map(c -> Errors.NOT_COORDINATOR).toList())
            : coordinator.offsets().commit(d.groupId(), d.memberId(), v >= 7 ? d.groupInstanceId() : null, d.generationIdOrMemberEpoch(), v, commits);
    return coordinatorErrors(committed, commits.size()).thenApply(errors -> {
      boolean leaseLost = registry.metadata().leaseLost() != null; // durable here, but this broker may have failed over
      Map<TopicPartition, Errors> byPartition = new HashMap<>();
      for (int i = 0; i < commits.size(); i++) {
        Errors e = errors.get(i);
        byPartition.put(commits.get(i).partition(), leaseLost && e == Errors.NONE ? Errors.NOT_COORDINATOR : e);
      }
      OffsetCommitResponseData resp = new OffsetCommitResponseData();
      Map<String, OffsetCommitResponseData.OffsetCommitResponseTopic> byTopic = new LinkedHashMap<>();
      // Kafka's order: the partitions refused for their topic first, then the coordinator's answers, grouped by topic.
      for (boolean refused : new boolean[] {true, false}) {
        for (TopicPartition tp : order) {
          Errors error = byPartition.get(tp);
          if ((error == null) != refused) {
            continue;
          }
          byTopic.computeIfAbsent(tp.topic(), n -> {
            OffsetCommitResponseData.OffsetCommitResponseTopic t = new OffsetCommitResponseData.OffsetCommitResponseTopic().setName(n);
            resp.topics().add(t);
            return t;
          }).partitions().add(new OffsetCommitResponseData.OffsetCommitResponsePartition().setPartitionIndex(tp.partition())
              .setErrorCode((error == null ? Errors.UNKNOWN_TOPIC_OR_PARTITION : error).code()));
        }
      }
      return resp;
    });
  }

  public CompletableFuture<ApiMessage> offsetFetch(RequestContext ctx, AbstractRequest request) {
    OffsetFetchRequestData d = ((OffsetFetchRequest) request).data();
    short v = request.version();
    if (v < 8) {
      List<TopicPartition> asked = toPartitions(d.topics() == null ? null
          : d.topics().stream().map(t -> new OffsetFetchRequestData.OffsetFetchRequestTopics().setName(t.name())
              .setPartitionIndexes(t.partitionIndexes())).toList());
      return coordinator.offsets().committed(d.groupId(), null, -1, asked, v >= 7 && d.requireStable()).thenApply(found -> {
        OffsetFetchResponseData resp = new OffsetFetchResponseData().setErrorCode(Errors.NONE.code());
        Map<String, OffsetFetchResponseData.OffsetFetchResponseTopic> topics = new LinkedHashMap<>();
        for (TopicPartition tp : asked == null ? new ArrayList<>(found.keySet()) : asked) {
          ClassicGroup.Committed c = found.get(tp);
          topics.computeIfAbsent(tp.topic(), n -> {
            OffsetFetchResponseData.OffsetFetchResponseTopic t = new OffsetFetchResponseData.OffsetFetchResponseTopic().setName(n);
            resp.topics().add(t);
            return t;
          }).partitions().add(new OffsetFetchResponseData.OffsetFetchResponsePartition().setPartitionIndex(tp.partition())
              .setCommittedOffset(c == null ? -1 : c.offset()).setCommittedLeaderEpoch(c == null ? -1 : c.leaderEpoch())
              .setMetadata(c == null ? "" : c.metadata()).setErrorCode(fetchError(c).code()));
        }
        return resp;
      });
    }
    OffsetFetchResponseData resp = new OffsetFetchResponseData();
    List<CompletableFuture<?>> waits = new ArrayList<>();
    for (OffsetFetchRequestData.OffsetFetchRequestGroup g : d.groups()) {
      OffsetFetchResponseData.OffsetFetchResponseGroup gr = new OffsetFetchResponseData.OffsetFetchResponseGroup().setGroupId(g.groupId());
      resp.groups().add(gr);
      List<TopicPartition> asked = toPartitions(g.topics());
      String memberId = v >= 9 ? g.memberId() : null;
      int memberEpoch = v >= 9 ? g.memberEpoch() : -1;
      waits.add(coordinator.offsets().committed(g.groupId(), memberId, memberEpoch, asked, d.requireStable()).handle((found, error) -> {
        if (error != null) {
          gr.setErrorCode(ErrorMapping.toErrors(error).code());
          return null;
        }
        Map<String, OffsetFetchResponseData.OffsetFetchResponseTopics> topics = new LinkedHashMap<>();
        for (TopicPartition tp : asked == null ? new ArrayList<>(found.keySet()) : asked) {
          ClassicGroup.Committed c = found.get(tp);
          topics.computeIfAbsent(tp.topic(), n -> {
            OffsetFetchResponseData.OffsetFetchResponseTopics t = new OffsetFetchResponseData.OffsetFetchResponseTopics().setName(n);
            gr.topics().add(t);
            return t;
          }).partitions().add(new OffsetFetchResponseData.OffsetFetchResponsePartitions().setPartitionIndex(tp.partition())
              .setCommittedOffset(c == null ? -1 : c.offset()).setCommittedLeaderEpoch(c == null ? -1 : c.leaderEpoch())
              .setMetadata(c == null ? "" : c.metadata()).setErrorCode(fetchError(c).code()));
        }
        return null;
      }));
    }
    return CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new)).thenApply(x -> resp);
  }

  private static Errors fetchError(ClassicGroup.Committed c) {
    return c == ClassicGroup.UNSTABLE ? Errors.UNSTABLE_OFFSET_COMMIT : Errors.NONE;
  }

  private static List<TopicPartition> toPartitions(List<OffsetFetchRequestData.OffsetFetchRequestTopics> topics) {
    if (topics == null) {
      return null;
    }
    List<TopicPartition> out = new ArrayList<>();
    for (OffsetFetchRequestData.OffsetFetchRequestTopics t : topics) {
      for (int p : t.partitionIndexes()) {
        out.add(new TopicPartition(t.name(), p));
      }
    }
    return out;
  }

  public CompletableFuture<ApiMessage> consumerGroupHeartbeat(RequestContext ctx, AbstractRequest request) {
    ConsumerGroupHeartbeatRequestData d = ((ConsumerGroupHeartbeatRequest) request).data();
    short v = request.version();
    Assignment owned = null;
    if (d.topicPartitions() != null) {
      Map<Uuid, List<Integer>> byTopic = new HashMap<>();
      d.topicPartitions().forEach(t -> byTopic.computeIfAbsent(t.topicId(), x -> new ArrayList<>()).addAll(t.partitions()));
      owned = Assignment.of(byTopic);
    }
    ConsumerGroupCoordinator.Heartbeat h = new ConsumerGroupCoordinator.Heartbeat(v, d.groupId(), d.memberId(), d.memberEpoch(),
        d.instanceId(), d.rackId(), d.rebalanceTimeoutMs(), d.subscribedTopicNames(), v >= 1 ? d.subscribedTopicRegex() : null,
        d.serverAssignor(), owned, ctx.clientId(), ctx.clientHost());
    return coordinator.consumerHeartbeat(h).thenApply(r -> r);
  }

  public CompletableFuture<ApiMessage> consumerGroupDescribe(RequestContext ctx, AbstractRequest request) {
    ConsumerGroupDescribeRequestData d = ((ConsumerGroupDescribeRequest) request).data();
    return coordinator.consumerDescribe(d.groupIds(), request.version()).thenApply(groups -> {
      ConsumerGroupDescribeResponseData resp = new ConsumerGroupDescribeResponseData();
      resp.groups().addAll(groups);
      return resp;
    });
  }

  public CompletableFuture<ApiMessage> describeGroups(RequestContext ctx, AbstractRequest request) {
    DescribeGroupsRequestData d = ((DescribeGroupsRequest) request).data();
    short v = request.version();
    return coordinator.describe(d.groups()).thenApply(views -> {
      DescribeGroupsResponseData resp = new DescribeGroupsResponseData();
      for (int i = 0; i < d.groups().size(); i++) {
        GroupCoordinator.GroupView g = views.get(i);
        DescribeGroupsResponseData.DescribedGroup out = new DescribeGroupsResponseData.DescribedGroup().setGroupId(d.groups().get(i));
        if (g == null || !g.type().equals("classic")) {
          out.setGroupState("Dead").setProtocolType("").setProtocolData("");
          if (v >= 6) {
            out.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code()).setErrorMessage(g == null
                ? "group " + d.groups().get(i) + " does not exist"
                : "Group " + d.groups().get(i) + " is not a classic group.");
          }
        } else {
          out.setGroupState(g.state()).setProtocolType(g.protocolType()).setProtocolData(g.protocolName());
          for (GroupCoordinator.MemberView m : g.members()) {
            out.members().add(new DescribeGroupsResponseData.DescribedGroupMember().setMemberId(m.memberId())
                .setGroupInstanceId(v >= 4 ? m.groupInstanceId() : null).setClientId(m.clientId()).setClientHost(m.clientHost())
                .setMemberMetadata(m.metadata()).setMemberAssignment(m.assignment()));
          }
        }
        resp.groups().add(out);
      }
      return resp;
    });
  }

  public CompletableFuture<ApiMessage> listGroups(RequestContext ctx, AbstractRequest request) {
    ListGroupsRequestData d = ((ListGroupsRequest) request).data();
    short v = request.version();
    return coordinator.list().thenApply(views -> {
      ListGroupsResponseData resp = new ListGroupsResponseData();
      for (GroupCoordinator.GroupView g : views) {
        if (v >= 4 && !d.statesFilter().isEmpty() && d.statesFilter().stream().noneMatch(s -> s.equalsIgnoreCase(g.state()))) {
          continue;
        }
        if (v >= 5 && !d.typesFilter().isEmpty() && d.typesFilter().stream().noneMatch(s -> s.equalsIgnoreCase(g.type()))) {
          continue;
        }
        ListGroupsResponseData.ListedGroup lg = new ListGroupsResponseData.ListedGroup().setGroupId(g.groupId())
            .setProtocolType(g.protocolType());
        if (v >= 4) {
          lg.setGroupState(g.state());
        }
        if (v >= 5) {
          lg.setGroupType(g.type());
        }
        resp.groups().add(lg);
      }
      return resp;
    });
  }

  public CompletableFuture<ApiMessage> deleteGroups(RequestContext ctx, AbstractRequest request) {
    DeleteGroupsRequestData d = ((DeleteGroupsRequest) request).data();
    return coordinator.deleteGroups(d.groupsNames()).thenApply(results -> {
      DeleteGroupsResponseData resp = new DeleteGroupsResponseData();
      for (String g : d.groupsNames()) {
        resp.results().add(new DeleteGroupsResponseData.DeletableGroupResult().setGroupId(g).setErrorCode(results.get(g).code()));
      }
      return resp;
    });
  }

  public CompletableFuture<ApiMessage> offsetDelete(RequestContext ctx, AbstractRequest request) {
    OffsetDeleteRequestData d = ((OffsetDeleteRequest) request).data();
    List<TopicPartition> partitions = new ArrayList<>();
    d.topics().forEach(t -> t.partitions().forEach(p -> partitions.add(new TopicPartition(t.name(), p.partitionIndex()))));
    return coordinator.offsets().deleteOffsets(d.groupId(), partitions, GroupApis::subscribes).handle((results, e) -> {
      OffsetDeleteResponseData resp = new OffsetDeleteResponseData();
      if (e != null) {
        return resp.setErrorCode(ErrorMapping.toErrors(e).code());
      }
      Map<String, OffsetDeleteResponseData.OffsetDeleteResponseTopic> topics = new LinkedHashMap<>();
      for (TopicPartition tp : partitions) {
        OffsetDeleteResponseData.OffsetDeleteResponseTopic t = topics.computeIfAbsent(tp.topic(), n -> {
          OffsetDeleteResponseData.OffsetDeleteResponseTopic x = new OffsetDeleteResponseData.OffsetDeleteResponseTopic().setName(n);
          resp.topics().add(x);
          return x;
        });
        t.partitions().add(new OffsetDeleteResponseData.OffsetDeleteResponsePartition().setPartitionIndex(tp.partition())
            .setErrorCode(results.get(tp).code()));
      }
      return resp;
    });
  }

  /** Whether consumer-protocol subscription metadata names {@code topic}; unreadable metadata counts as subscribed. */
  private static boolean subscribes(byte[] metadata, String topic) {
    try {
      return ConsumerProtocol.deserializeSubscription(ByteBuffer.wrap(metadata)).topics().contains(topic);
    } catch (RuntimeException e) {
      return true;
    }
  }
}
