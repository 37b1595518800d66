package io.tidemark.metadata.controller;

import io.tidemark.metadata.controller.ControllerRequest.*;
import io.tidemark.metadata.image.BrokerEntry;
import io.tidemark.metadata.image.LongPair;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.image.PersistentMap;
import io.tidemark.metadata.record.FieldWriter;
import io.tidemark.metadata.record.MetadataRecord.StorageObject;
import io.tidemark.metadata.record.MetadataRecord.Stream;
import io.tidemark.stream.metadata.ObjectMetadata;
import io.tidemark.stream.metadata.ObjectMetadata.ObjectKind;
import io.tidemark.stream.metadata.StreamMetadata;
import io.tidemark.stream.metadata.StreamMetadata.StreamState;
import io.tidemark.stream.metadata.StreamRange;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The controller's logic: computes, for a write request against an image at a given time, the
 * records to append and the reply ({@link #handle}); answers reads from an image
 * ({@link #read}). It never changes anything itself: the caller replays the returned records
 * (see {@code MetadataImage.Builder#replay}). A rejected request returns no records.
 *
 * <p>Deterministic: the same image, request and time always give the same result, which is what
 * lets every replica of the log compute the same records. Stateless and thread-safe.
 */
public final class Controller {
  private final ControllerLimits limits;

  public Controller(ControllerLimits limits) {
    this.limits = limits;
  }

  public ControllerResult handle(MetadataImage image, Write request, long nowMs) {
    try {
      return switch (request) {
        case RegisterBroker r -> ClusterControl.register(image, r, nowMs);
        case FenceBroker r -> ClusterControl.fence(image, r.nodeId(), r.nodeEpoch(), true);
        case UnfenceBroker r -> ClusterControl.fence(image, r.nodeId(), r.nodeEpoch(), false);
        case CreateStream r -> StreamControl.create(image, r.node(), r.tags());
        case OpenStream r -> StreamControl.open(image, r.node(), r.streamId(), r.epoch());
        case CloseStream r -> StreamControl.close(image, r.node(), r.streamId(), r.epoch());
        case StreamOps r -> StreamControl.batch(image, r.node(), r.ops());
        case TrimStream r -> StreamControl.trim(image, r.node(), r.streamId(), r.epoch(), r.newStartOffset(), nowMs);
        case DeleteStream r -> StreamControl.delete(image, r.node(), r.streamId(), r.epoch(), nowMs);
        case PrepareObjects r -> ObjectControl.prepare(image, r.node(), r.count(), r.ttlMs(), nowMs, limits);
        case CommitStreamSetObject r -> ObjectControl.commitStreamSetObject(image, r.node(), r.request(), nowMs, limits);
        case CommitStreamObject r -> ObjectControl.commitStreamObject(image, r.node(), r.request(), nowMs, limits);
        case ExpireObjects r -> ObjectControl.expire(image, r.maxObjects(), nowMs);
        case RemoveDeletedObjects r -> ObjectControl.removeDeleted(image, r.objectIds());
        case CreateTopic r -> ClusterControl.createTopic(image, r);
        case DeleteTopic r -> ClusterControl.deleteTopic(image, r.topicId());
        case GrowTopic r -> ClusterControl.growTopic(image, r);
        case UpdatePartition r -> ClusterControl.updatePartition(image, r);
        case UpdatePartitions r -> ClusterControl.updatePartitions(image, r.updates());
        case SetConfig r -> ClusterControl.setConfig(r);
        case PutKeyValue r -> ClusterControl.putKeyValue(image, r);
        case AllocateProducerIds r -> ClusterControl.allocateProducerIds(image, r.node(), limits);
        case AlterScramCredential r -> ClusterControl.alterScramCredential(image, r);
        case ReassignPartitions r -> PartitionControl.reassign(image, r);
        case ElectLeaders r -> PartitionControl.electLeaders(image, r);
        case CompleteReassignment r -> PartitionControl.complete(image, r);
        case DrainBroker r -> PartitionControl.drain(image, r.node());
        case FailoverBroker r -> FailoverControl.failover(image, r, nowMs);
        case CompleteFailover r -> FailoverControl.complete(image, r);
        case SessionHeartbeat r -> ClusterControl.heartbeat(image, r.node());
        case CreateAcls r -> AccessControl.createAcls(image, r.entries());
        case DeleteAcls r -> AccessControl.deleteAcls(image, r.entries());
        case AlterClientQuotas r -> AccessControl.alterClientQuotas(r.changes());
        case AlterConfigs r -> AccessControl.alterConfigs(r.changes());
      };
    } catch (Rejection rejection) {
      return ControllerResult.rejected(rejection);
    }
  }

  /** Answers a read from {@code image}. Heartbeats are handled by the leader's session table, not here. */
  public ControllerReply read(MetadataImage image, Read request) {
    try {
      byte[] body = switch (request) {
        case GetStreams r -> {
          List<StreamMetadata> out = new ArrayList<>(r.streamIds().size());
          for (long id : r.streamIds()) {
            Stream s = image.stream(id);
            if (s != null) {
              out.add(ReplyBodies.toMetadata(s));
            }
          }
          yield ReplyBodies.ofStreams(out);
        }
        case GetOpeningStreams r -> {
          Checks.requireCurrent(image, r.node());
          List<StreamMetadata> out = new ArrayList<>();
          for (Stream s : image.streams().values()) {
            if (s.state() == StreamState.OPEN && s.ownerNodeId() == r.node().nodeId()) {
              out.add(ReplyBodies.toMetadata(s));
            }
          }
          yield ReplyBodies.ofStreams(out);
        }
        case GetObjects r -> ReplyBodies.ofObjects(objects(image, r.streamId(), r.startOffset(), r.endOffset(), r.limit()));
        case GetStreamSetObjects r -> {
          List<ObjectMetadata> out = new ArrayList<>();
          for (Long id : image.streamSetObjectsOfNode(r.nodeId()).values()) {
            out.add(ReplyBodies.toMetadata(image.object(id)));
          }
          yield ReplyBodies.ofObjects(out);
        }
        case GetStreamObjects r -> {
          List<ObjectMetadata> out = new ArrayList<>();
          for (Long id : image.objectsOfStream(r.streamId()).values()) {
            StorageObject o = image.object(id);
            if (o.kind() == ObjectKind.STREAM) {
              out.add(ReplyBodies.toMetadata(o));
            }
          }
          yield ReplyBodies.ofObjects(out);
        }
        case GetKeyValue r -> new FieldWriter().writeBytes(image.keyValue(r.namespace(), r.key())).toByteArray();
        case GetBroker r -> {
          BrokerEntry b = image.broker(r.nodeId());
          Checks.require(b != null, ErrorCode.NOT_FOUND, "node " + r.nodeId() + " is not registered");
          yield new FieldWriter().writeLong(b.nodeEpoch()).writeBoolean(b.fenced()).toByteArray();
        }
        case Heartbeat r -> throw new Rejection(ErrorCode.INVALID_REQUEST, "heartbeats go to the leader's sessions");
        case DescribeQuorum r -> throw new Rejection(ErrorCode.INVALID_REQUEST, "the quorum is described by the Raft leader");
        case ReportLoad r -> throw new Rejection(ErrorCode.INVALID_REQUEST, "loads go to the leader's table");
        case DescribeLoads r -> throw new Rejection(ErrorCode.INVALID_REQUEST, "loads are described by the leader");
      };
      return ControllerReply.ok(body, image.offset());
    } catch (Rejection rejection) {
      return ControllerReply.error(rejection.code, rejection.getMessage(), image.offset());
    }
  }

  /** Committed objects with data of {@code streamId} in {@code [start, end)}, in offset order, at most {@code limit}. */
  public static List<ObjectMetadata> objects(MetadataImage image, long streamId, long start, long end, int limit) {
    List<ObjectMetadata> out = new ArrayList<>();
    PersistentMap<LongPair, Long> index = image.objectsOfStream(streamId);
    Map.Entry<LongPair, Long> floor = index.floor(new LongPair(start, Long.MAX_VALUE));
    Iterator<Map.Entry<LongPair, Long>> it = index.iteratorFrom(floor == null ? null : floor.getKey());
    while (it.hasNext() && out.size() < limit) {
      StorageObject o = image.object(it.next().getValue());
      StreamRange r = o.rangeOf(streamId);
      if (r.startOffset() >= end) {
        break;
      }
      if (r.endOffset() > start && r.endOffset() > r.startOffset()) {
        out.add(ReplyBodies.toMetadata(o));
      }
    }
    return out;
  }
}
