package io.tidemark.metadata.controller;

import static io.tidemark.metadata.controller.Checks.requireActive;
import static io.tidemark.metadata.controller.Checks.requireEpoch;
import static io.tidemark.metadata.controller.Checks.requireStream;

import io.tidemark.metadata.image.LongPair;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.FieldWriter;
import io.tidemark.metadata.record.MetadataRecord;
import io.tidemark.metadata.record.MetadataRecord.IdKind;
import io.tidemark.metadata.record.MetadataRecord.NextId;
import io.tidemark.metadata.record.MetadataRecord.OwnerRange;
import io.tidemark.metadata.record.MetadataRecord.RemoveStream;
import io.tidemark.metadata.record.MetadataRecord.StorageObject;
import io.tidemark.metadata.record.MetadataRecord.Stream;
import io.tidemark.metadata.record.ObjectState;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.ObjectMetadata.ObjectKind;
import io.tidemark.stream.metadata.StreamMetadata.StreamState;
import io.tidemark.stream.metadata.StreamRange;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Stream lifecycle handlers: create, open (epoch bump and a new owner range), close, trim and
 * delete. Pure functions of (image, request, time) returning records; stateless.
 *
 * <p>Open with an equal or higher epoch takes a stream, also from another node (that holder is
 * fenced), except the streams of a Kafka partition: while another node holds one of those, open
 * is refused with {@link ErrorCode#STREAM_NOT_CLOSED}. Their holder may still have acknowledged
 * records in its WAL; it uploads them and closes the stream when the partition moves away, or the
 * failover of a dead holder does, and only then may the new leader open it.
 */
final class StreamControl {
  private StreamControl() {}

  static ControllerResult create(MetadataImage image, NodeRef node, Map<String, String> tags) {
    requireActive(image, node);
    long id = image.nextStreamId();
    Stream s = new Stream(id, 0, 0, 0, StreamState.CLOSED, -1, List.of(), tags);
    return ControllerResult.of(List.of(new NextId(IdKind.STREAM, id + 1), s), ReplyBodies.ofLong(id));
  }

  static ControllerResult open(MetadataImage image, NodeRef node, long streamId, long epoch) {
    requireActive(image, node);
    Stream s = requireStream(image, streamId);
    if (epoch < s.epoch()) {
      throw new Rejection(ErrorCode.STREAM_FENCED, "stream " + streamId + " cannot open with epoch " + epoch
          + ": the current epoch is " + s.epoch());
    }
    if (epoch == s.epoch() && s.state() == StreamState.OPEN && s.ownerNodeId() == node.nodeId()) {
      return ControllerResult.of(List.of(), ReplyBodies.ofStream(ReplyBodies.toMetadata(s)));
    }
    if (s.state() == StreamState.OPEN && s.ownerNodeId() != node.nodeId() && ofPartition(image, streamId)) {
      // the holder may still have acknowledged data in its WAL: it closes the stream (flushing it) first, or
      // the failover of a dead holder does; taking the stream now would leave that data behind
      throw new Rejection(ErrorCode.STREAM_NOT_CLOSED, "stream " + streamId + " is still open on node "
          + s.ownerNodeId() + " at epoch " + s.epoch() + "; it opens elsewhere once that node closed it");
    }
    List<OwnerRange> ranges = new ArrayList<>(s.ranges());
    ranges.add(new OwnerRange(epoch, node.nodeId(), s.endOffset()));
    Stream opened = new Stream(streamId, epoch, s.startOffset(), s.endOffset(), StreamState.OPEN, node.nodeId(),
        ranges, s.tags());
    return ControllerResult.of(List.of(opened), ReplyBodies.ofStream(ReplyBodies.toMetadata(opened)));
  }

  /**
   * Whether a partition keeps its data in the stream. Only on the contended path (the stream is open
   * on another node), so a scan of the partitions is affordable: it runs during moves and failovers.
   */
  private static boolean ofPartition(MetadataImage image, long streamId) {
    for (MetadataRecord.Partition p : image.partitions().values()) {
      if (p.streamIds().contains(streamId)) {
        return true;
      }
    }
    return false;
  }

  static ControllerResult close(MetadataImage image, NodeRef node, long streamId, long epoch) {
    requireActive(image, node);
    Stream s = requireStream(image, streamId);
    requireEpoch(s, epoch);
    if (s.state() == StreamState.CLOSED) {
      return ControllerResult.of(List.of(), ReplyBodies.empty());
    }
    if (s.ownerNodeId() != node.nodeId()) {
      throw new Rejection(ErrorCode.STREAM_FENCED, "stream " + streamId + " epoch " + epoch + " is open on node "
          + s.ownerNodeId() + ", not on node " + node.nodeId());
    }
    Stream closed = new Stream(streamId, s.epoch(), s.startOffset(), s.endOffset(), StreamState.CLOSED, -1,
        s.ranges(), s.tags());
    return ControllerResult.of(List.of(closed), ReplyBodies.empty());
  }

  /**
   * Opens and closes streams of one node in one entry ({@link ControllerRequest.StreamOps}): each
   * operation is checked and applied as a single open or close would be, against the image before
   * the request (the streams are distinct, so no operation sees another's effect); a refused one adds
   * no record and answers its own rejection. The whole request is refused, changing nothing, when the
   * node is not current, it holds more than {@link ControllerRequest.StreamOps#MAX_OPS} operations, or
   * names a stream twice. The reply body: the count, then per operation an encoded
   * {@link ControllerReply} (offset 0) whose body is the stream after an open, empty after a close.
   */
  static ControllerResult batch(MetadataImage image, NodeRef node, List<ControllerRequest.StreamOp> ops) {
    requireActive(image, node);
    if (ops.size() > ControllerRequest.StreamOps.MAX_OPS) {
      throw new Rejection(ErrorCode.INVALID_ARGUMENT, ops.size() + " stream operations in one request; at most "
          + ControllerRequest.StreamOps.MAX_OPS);
    }
    java.util.Set<Long> seen = new java.util.HashSet<>();
    for (ControllerRequest.StreamOp op : ops) {
      if (!seen.add(op.streamId())) {
        throw new Rejection(ErrorCode.INVALID_REQUEST, "stream " + op.streamId() + " appears twice in one request");
      }
    }
    return ControllerResult.eachWithOwnOutcome(ops,
        op -> op.open() ? open(image, node, op.streamId(), op.epoch()) : close(image, node, op.streamId(), op.epoch()));
  }

  static ControllerResult trim(MetadataImage image, NodeRef node, long streamId, long epoch, long newStart,
      long nowMs) {
    requireActive(image, node);
    Stream s = requireStream(image, streamId);
    requireEpoch(s, epoch);
    if (newStart > s.endOffset()) {
      throw new Rejection(ErrorCode.OFFSET_OUT_OF_RANGE, "cannot trim stream " + streamId + " to " + newStart
          + ": past its end offset " + s.endOffset());
    }
    if (newStart <= s.startOffset()) {
      return ControllerResult.of(List.of(), ReplyBodies.empty());
    }
    List<OwnerRange> kept = new ArrayList<>();
    List<OwnerRange> ranges = s.ranges();
    for (int i = 0; i < ranges.size(); i++) {
      long end = i + 1 < ranges.size() ? ranges.get(i + 1).startOffset() : Long.MAX_VALUE;
      if (end > newStart || i == ranges.size() - 1) {
        kept.add(ranges.get(i));
      }
    }
    Stream trimmed = new Stream(streamId, s.epoch(), newStart, s.endOffset(), s.state(), s.ownerNodeId(), kept,
        s.tags());
    List<MetadataRecord> records = new ArrayList<>();
    records.add(trimmed);
    markDeadObjects(image, streamId, newStart, nowMs, records);
    return ControllerResult.of(records, ReplyBodies.empty());
  }

  static ControllerResult delete(MetadataImage image, NodeRef node, long streamId, long epoch, long nowMs) {
    requireActive(image, node);
    Stream s = requireStream(image, streamId);
    requireEpoch(s, epoch);
    List<MetadataRecord> records = new ArrayList<>();
    records.add(new RemoveStream(streamId));
    markDeadObjects(image, streamId, Long.MAX_VALUE, nowMs, records);
    return ControllerResult.of(records, ReplyBodies.empty());
  }

  /**
   * Marks for deletion the committed objects of {@code streamId} that hold nothing live once the
   * stream starts at {@code newStart} ({@code Long.MAX_VALUE}: the stream is deleted). A stream-set
   * object is marked only when every stream in it is dead too.
   */
  private static void markDeadObjects(MetadataImage image, long streamId, long newStart, long nowMs,
      List<MetadataRecord> out) {
    for (Map.Entry<LongPair, Long> e : image.objectsOfStream(streamId)) {
      StorageObject o = image.object(e.getValue());
      StreamRange r = o.rangeOf(streamId);
      if (r == null || r.endOffset() > newStart) {
        if (newStart != Long.MAX_VALUE) {
          break; // ranges are in offset order: the rest is live
        }
        continue;
      }
      if (o.kind() == ObjectKind.STREAM || allRangesDead(image, o, streamId, newStart)) {
        out.add(o.marked(nowMs));
      }
    }
  }

  static boolean allRangesDead(MetadataImage image, StorageObject o, long changedStream, long changedStart) {
    for (StreamRange r : o.ranges()) {
      long start;
      if (r.streamId() == changedStream) {
        start = changedStart;
      } else {
        Stream other = image.stream(r.streamId());
        start = other == null ? Long.MAX_VALUE : other.startOffset();
      }
      if (r.endOffset() > start && r.endOffset() > r.startOffset()) {
        return false;
      }
    }
    return o.state() == ObjectState.COMMITTED;
  }
}
