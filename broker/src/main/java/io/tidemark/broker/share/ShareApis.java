package io.tidemark.broker.share;

import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.protocol.ErrorMapping;
import io.tidemark.broker.protocol.RequestContext;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.broker.topic.TopicRegistry;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.AlterShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.AlterShareGroupOffsetsResponseData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatResponseData;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.DeleteShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.DeleteShareGroupOffsetsResponseData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsResponseData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.ShareGroupDescribeResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AlterShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatRequest;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DeleteShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.DescribeShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.ListGroupsRequest;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.ShareAcknowledgeRequest;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareGroupDescribeRequest;
import org.apache.kafka.common.requests.ShareGroupHeartbeatRequest;

/**
 * The share-group APIs (KIP-932) on the wire: ShareGroupHeartbeat (v1) and ShareGroupDescribe (v1)
 * to {@link ShareGroupCoordinator}; ShareFetch and ShareAcknowledge (v1–2) to
 * {@link SharePartitionManager}; DescribeShareGroupOffsets (v0–1), AlterShareGroupOffsets (v0) and
 * DeleteShareGroupOffsets (v0) through both; and the share groups' part of ListGroups (type
 * "share"), DescribeGroups (not a classic group) and DeleteGroups (state deleted with the group).
 * A share group's id is refused to the other protocols as Kafka 4.4 refuses it: JoinGroup
 * answers INCONSISTENT_GROUP_PROTOCOL, ConsumerGroupHeartbeat GROUP_ID_NOT_FOUND, OffsetCommit
 * GROUP_ID_NOT_FOUND for every partition (no classic or consumer group is created beside the
 * share group). Holds no state of its own.
 */
public final class ShareApis {

  private final ShareGroupCoordinator groups;
  private final SharePartitionManager shares;
  private final TopicRegistry registry;

  public ShareApis(ShareGroupCoordinator groups, SharePartitionManager shares, TopicRegistry registry) {
    this.groups = groups;
    this.shares = shares;
    this.registry = registry;
  }

  public CompletableFuture<ApiMessage> heartbeat(RequestContext ctx, AbstractRequest request) {
    return groups.heartbeat(((ShareGroupHeartbeatRequest) request).data(), ctx.clientId(), ctx.clientHost()).thenApply(r -> r);
  }

  public CompletableFuture<ApiMessage> describe(RequestContext ctx, AbstractRequest request) {
    return groups.describe(((ShareGroupDescribeRequest) request).data().groupIds()).thenApply(list -> {
      ShareGroupDescribeResponseData resp = new ShareGroupDescribeResponseData();
      resp.groups().addAll(list);
      return resp;
    });
  }

  public CompletableFuture<ApiMessage> fetch(RequestContext ctx, AbstractRequest request) {
    return shares.fetch(((ShareFetchRequest) request).data(), request.version(), ctx.connectionId()).thenApply(r -> r);
  }

  public CompletableFuture<ApiMessage> acknowledge(RequestContext ctx, AbstractRequest request) {
    return shares.acknowledge(((ShareAcknowledgeRequest) request).data(), request.version()).thenApply(r -> r);
  }

  // ---------------------------------------------------------------- offsets

  public CompletableFuture<ApiMessage> describeOffsets(RequestContext ctx, AbstractRequest request) {
    DescribeShareGroupOffsetsRequestData d = ((DescribeShareGroupOffsetsRequest) request).data();
    short v = request.version();
    DescribeShareGroupOffsetsResponseData resp = new DescribeShareGroupOffsetsResponseData();
    List<CompletableFuture<Void>> waits = new ArrayList<>();
    for (DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestGroup g : d.groups()) {
      DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseGroup out =
          new DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseGroup().setGroupId(g.groupId());
      resp.groups().add(out);
      // As Kafka: a group that does not exist is described as a share group without state (start offsets -1).
      waits.add(groups.isOtherGroup(g.groupId()).thenCompose(other -> {
        if (other) {
          out.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code()).setErrorMessage("Group " + g.groupId() + " is not a share group.");
          return CompletableFuture.completedFuture(null);
        }
        Map<String, DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseTopic> topics = new LinkedHashMap<>();
        List<SharePartitionManager.TopicIdPartition> asked = null;
        if (g.topics() != null) {
          asked = new ArrayList<>();
          for (DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestTopic t : g.topics()) {
            Optional<TopicInfo> info = registry.topic(t.topicName());
            DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseTopic rt = topics.computeIfAbsent(t.topicName(),
                n -> new DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseTopic().setTopicName(n)
                    .setTopicId(info.map(TopicInfo::id).orElse(Uuid.ZERO_UUID)));
            for (int p : t.partitions()) {
              if (info.isEmpty() || p < 0 || p >= info.get().partitions().size()) {
                // as Kafka: a partition the group has no state for, whether or not it exists
                rt.partitions().add(new DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponsePartition().setPartitionIndex(p)
                    .setStartOffset(-1).setLeaderEpoch(0).setLag(-1));
              } else {
                asked.add(new SharePartitionManager.TopicIdPartition(info.get().id(), p));
              }
            }
          }
        }
        return shares.startOffsets(g.groupId(), asked).handle((offsets, e) -> {
          if (e != null) {
            out.setErrorCode(ErrorMapping.toErrors(e).code()).setErrorMessage(ErrorMapping.message(e));
            return null;
          }
          Map<Uuid, String> names = registry.topicNamesById();
          offsets.forEach((tip, so) -> {
            String name = names.get(tip.topicId());
            if (name == null) {
              return; // state of a deleted topic
            }
            topics.computeIfAbsent(name, n -> new DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseTopic()
                .setTopicName(n).setTopicId(tip.topicId())).partitions()
                .add(new DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponsePartition().setPartitionIndex(tip.partition())
                    .setStartOffset(so.startOffset()).setLeaderEpoch(so.startOffset() < 0 ? 0 : leaderEpoch(tip)).setLag(v >= 1 ? so.lag() : -1));
          });
          out.topics().addAll(topics.values());
          return null;
        });
      }));
    }
    return CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new)).thenApply(x -> resp);
  }

  private int leaderEpoch(SharePartitionManager.TopicIdPartition tip) {
    return registry.topic(tip.topicId()).flatMap(t -> t.partitions().stream().filter(p -> p.partition() == tip.partition()).findFirst())
        .map(TopicInfo.PartitionInfo::leaderEpoch).orElse(0);
  }

  public CompletableFuture<ApiMessage> alterOffsets(RequestContext ctx, AbstractRequest request) {
    AlterShareGroupOffsetsRequestData d = ((AlterShareGroupOffsetsRequest) request).data();
    AlterShareGroupOffsetsResponseData resp = new AlterShareGroupOffsetsResponseData();
    // Bad input changes nothing: the group is created (offsets set before it ever ran) only when some partition is to be altered.
    boolean anyValid = d.topics().stream().anyMatch(t -> registry.topic(t.topicName()).filter(info -> t.partitions().stream().anyMatch(
        p -> p.partitionIndex() >= 0 && p.partitionIndex() < info.partitions().size() && p.startOffset() >= 0)).isPresent());
    CompletableFuture<Errors> exists = anyValid ? groups.ensureGroup(d.groupId())
        : groups.isOtherGroup(d.groupId()).thenApply(other -> other ? Errors.GROUP_ID_NOT_FOUND : Errors.NONE);
    return exists.thenCompose(e -> e != Errors.NONE ? CompletableFuture.completedFuture(e)
        : groups.checkEmpty(d.groupId())).thenCompose(err -> {
          if (err != Errors.NONE) {
            resp.setErrorCode(err.code()).setErrorMessage(err == Errors.NON_EMPTY_GROUP
                ? "The group has active members: stop them before altering its offsets." : "Group " + d.groupId() + " is not a share group.");
            return CompletableFuture.completedFuture((ApiMessage) resp);
          }
          Map<SharePartitionManager.TopicIdPartition, Long> offsets = new LinkedHashMap<>();
          Map<SharePartitionManager.TopicIdPartition, AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponsePartition> parts =
              new LinkedHashMap<>();
          for (AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestTopic t : d.topics()) {
            Optional<TopicInfo> info = registry.topic(t.topicName());
            AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponseTopic rt = new AlterShareGroupOffsetsResponseData
                .AlterShareGroupOffsetsResponseTopic().setTopicName(t.topicName()).setTopicId(info.map(TopicInfo::id).orElse(Uuid.ZERO_UUID));
            resp.responses().add(rt);
            for (AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestPartition p : t.partitions()) {
              AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponsePartition rp =
                  new AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponsePartition().setPartitionIndex(p.partitionIndex());
              rt.partitions().add(rp);
              if (info.isEmpty() || p.partitionIndex() < 0 || p.partitionIndex() >= info.get().partitions().size()) {
                rp.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code()).setErrorMessage("This server does not host this topic-partition.");
              } else if (p.startOffset() < 0) {
                rp.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("start offset " + p.startOffset() + " is negative");
              } else {
                SharePartitionManager.TopicIdPartition tip = new SharePartitionManager.TopicIdPartition(info.get().id(), p.partitionIndex());
                offsets.put(tip, p.startOffset());
                parts.put(tip, rp);
              }
            }
          }
          return shares.alterStartOffsets(d.groupId(), offsets).handle((result, e) -> {
            parts.forEach((tip, rp) -> {
              Errors pe = e != null ? ErrorMapping.toErrors(e) : result.getOrDefault(tip, Errors.NONE);
              rp.setErrorCode(pe.code()).setErrorMessage(pe == Errors.NONE ? null : e != null ? ErrorMapping.message(e) : pe.message());
            });
            return (ApiMessage) resp;
          });
        });
  }

  public CompletableFuture<ApiMessage> deleteOffsets(RequestContext ctx, AbstractRequest request) {
    DeleteShareGroupOffsetsRequestData d = ((DeleteShareGroupOffsetsRequest) request).data();
    DeleteShareGroupOffsetsResponseData resp = new DeleteShareGroupOffsetsResponseData();
    return groups.isShareGroup(d.groupId()).thenCompose(isShare -> isShare ? groups.checkEmpty(d.groupId())
        : CompletableFuture.completedFuture(Errors.GROUP_ID_NOT_FOUND)).thenCompose(err -> {
          if (err != Errors.NONE) {
            resp.setErrorCode(err.code()).setErrorMessage(err == Errors.NON_EMPTY_GROUP
                ? "The group has active members: stop them before deleting its offsets." : "Group " + d.groupId() + " not found.");
            return CompletableFuture.completedFuture((ApiMessage) resp);
          }
          Set<Uuid> ids = new HashSet<>();
          for (DeleteShareGroupOffsetsRequestData.DeleteShareGroupOffsetsRequestTopic t : d.topics()) {
            Optional<TopicInfo> info = registry.topic(t.topicName());
            DeleteShareGroupOffsetsResponseData.DeleteShareGroupOffsetsResponseTopic rt = new DeleteShareGroupOffsetsResponseData
                .DeleteShareGroupOffsetsResponseTopic().setTopicName(t.topicName()).setTopicId(info.map(TopicInfo::id).orElse(Uuid.ZERO_UUID));
            resp.responses().add(rt);
            if (info.isEmpty()) {
              rt.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code()).setErrorMessage("This server does not host this topic-partition.");
            } else {
              ids.add(info.get().id());
            }
          }
          return shares.deleteState(d.groupId(), ids).handle((x, e) -> {
            if (e != null) {
              resp.setErrorCode(ErrorMapping.toErrors(e).code()).setErrorMessage(ErrorMapping.message(e));
            }
            return (ApiMessage) resp;
          });
        });
  }

  // ---------------------------------------------------------------- the share part of the generic group APIs

  /** ListGroups: the classic and consumer groups of {@code inner}, plus the share groups (type "share"). */
  public ApiHandler listGroups(ApiHandler inner) {
    return (ctx, request) -> inner.handle(ctx, request).thenCombine(groups.list(), (msg, shareGroups) -> {
      ListGroupsRequestData d = ((ListGroupsRequest) request).data();
      short v = request.version();
      ListGroupsResponseData resp = (ListGroupsResponseData) msg;
      for (ShareGroupCoordinator.Listed g : shareGroups) {
        if (v >= 4 && !d.statesFilter().isEmpty() && d.statesFilter().stream().noneMatch(s -> s.equalsIgnoreCase(g.state()))) {
          continue;
        }
        if (v >= 5 && !d.typesFilter().isEmpty() && d.typesFilter().stream().noneMatch(s -> s.equalsIgnoreCase("share"))) {
          continue;
        }
        ListGroupsResponseData.ListedGroup lg = new ListGroupsResponseData.ListedGroup().setGroupId(g.groupId()).setProtocolType("share");
        if (v >= 4) {
          lg.setGroupState(g.state());
        }
        if (v >= 5) {
          lg.setGroupType("share");
        }
        resp.groups().add(lg);
      }
      return resp;
    });
  }

  /** DescribeGroups: a share group is "not a classic group" (v6 GROUP_ID_NOT_FOUND), as Kafka answers. */
  public ApiHandler describeGroups(ApiHandler inner) {
    return (ctx, request) -> inner.handle(ctx, request).thenCompose(msg -> {
      DescribeGroupsResponseData resp = (DescribeGroupsResponseData) msg;
      List<CompletableFuture<Void>> waits = new ArrayList<>();
      for (DescribeGroupsResponseData.DescribedGroup g : resp.groups()) {
        if (g.groupState().equals("Dead")) {
          waits.add(groups.isShareGroup(g.groupId()).thenAccept(isShare -> {
            if (isShare && request.version() >= 6) {
              g.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code()).setErrorMessage("Group " + g.groupId() + " is not a classic group.");
            }
          }));
        }
      }
      return CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new)).thenApply(x -> (ApiMessage) resp);
    });
  }

  /** JoinGroup: INCONSISTENT_GROUP_PROTOCOL for a share group's id, as Kafka; any other id goes to {@code inner}. */
  public ApiHandler joinGroup(ApiHandler inner) {
    return unlessShareGroup(inner, request -> ((JoinGroupRequest) request).data().groupId(), request -> {
      boolean nullable = request.version() >= 7;
      return new JoinGroupResponseData().setErrorCode(Errors.INCONSISTENT_GROUP_PROTOCOL.code()).setGenerationId(-1)
          .setMemberId(((JoinGroupRequest) request).data().memberId()).setProtocolType(nullable ? null : "")
          .setProtocolName(nullable ? null : "");
    });
  }

  /** ConsumerGroupHeartbeat: GROUP_ID_NOT_FOUND for a share group's id, as Kafka; any other id goes to {@code inner}. */
  public ApiHandler consumerGroupHeartbeat(ApiHandler inner) {
    java.util.function.Function<AbstractRequest, String> groupId = request -> ((ConsumerGroupHeartbeatRequest) request).data().groupId();
    return unlessShareGroup(inner, groupId, request -> new ConsumerGroupHeartbeatResponseData()
        .setErrorCode(Errors.GROUP_ID_NOT_FOUND.code()).setErrorMessage("Group " + groupId.apply(request) + " is not a consumer group."));
  }

  /**
   * OffsetCommit: a share group's committed offsets are its share-partition start offsets, so a
   * commit to its id is refused per partition as Kafka refuses it (GROUP_ID_NOT_FOUND from v9,
   * ILLEGAL_GENERATION before, which older clients know); any other id goes to {@code inner}.
   */
  public ApiHandler offsetCommit(ApiHandler inner) {
    return unlessShareGroup(inner, request -> ((OffsetCommitRequest) request).data().groupId(), request -> {
      Errors e = request.version() >= 9 ? Errors.GROUP_ID_NOT_FOUND : Errors.ILLEGAL_GENERATION;
      OffsetCommitResponseData resp = new OffsetCommitResponseData();
      for (OffsetCommitRequestData.OffsetCommitRequestTopic t : ((OffsetCommitRequest) request).data().topics()) {
        OffsetCommitResponseData.OffsetCommitResponseTopic rt = new OffsetCommitResponseData.OffsetCommitResponseTopic().setName(t.name());
        t.partitions().forEach(p -> rt.partitions().add(new OffsetCommitResponseData.OffsetCommitResponsePartition()
            .setPartitionIndex(p.partitionIndex()).setErrorCode(e.code())));
        resp.topics().add(rt);
      }
      return resp;
    });
  }

  /** {@code inner} for a request naming any group but a share group; {@code refusal}'s answer for a share group's id. */
  private ApiHandler unlessShareGroup(ApiHandler inner, java.util.function.Function<AbstractRequest, String> groupId,
      java.util.function.Function<AbstractRequest, ApiMessage> refusal) {
    return (ctx, request) -> groups.isShareGroup(groupId.apply(request)).thenCompose(isShare -> isShare
        ? CompletableFuture.completedFuture(refusal.apply(request)) : inner.handle(ctx, request));
  }

  /** DeleteGroups: a share group (empty) is deleted with its share-partition state and group configs. */
  public ApiHandler deleteGroups(ApiHandler inner) {
    return (ctx, request) -> {
      DeleteGroupsRequestData d = ((DeleteGroupsRequest) request).data();
      Map<String, CompletableFuture<Errors>> shareResults = new LinkedHashMap<>();
      for (String g : d.groupsNames()) {
        shareResults.put(g, groups.isShareGroup(g).thenCompose(isShare -> !isShare ? CompletableFuture.completedFuture((Errors) null)
            : groups.checkEmpty(g).thenCompose(err -> err != Errors.NONE ? CompletableFuture.completedFuture(err)
                : shares.deleteState(g, null).thenCompose(x -> groups.delete(g)))));
      }
      return CompletableFuture.allOf(shareResults.values().toArray(CompletableFuture[]::new))
          .thenCompose(x -> inner.handle(ctx, request)).thenApply(msg -> {
            DeleteGroupsResponseData resp = (DeleteGroupsResponseData) msg;
            for (DeleteGroupsResponseData.DeletableGroupResult r : resp.results()) {
              Errors share = shareResults.containsKey(r.groupId()) ? shareResults.get(r.groupId()).join() : null;
              if (share != null) {
                r.setErrorCode(share.code());
              }
            }
            return resp;
          });
    };
  }
}
