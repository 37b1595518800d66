package io.tidemark.metadata.controller;

import static io.tidemark.metadata.controller.Checks.require;
import static io.tidemark.metadata.controller.Checks.requireActive;

import io.tidemark.metadata.image.LongPair;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.MetadataRecord;
import io.tidemark.metadata.record.MetadataRecord.EndOffset;
import io.tidemark.metadata.record.MetadataRecord.IdKind;
import io.tidemark.metadata.record.MetadataRecord.NextId;
import io.tidemark.metadata.record.MetadataRecord.RemoveObject;
import io.tidemark.metadata.record.MetadataRecord.StorageObject;
import io.tidemark.metadata.record.MetadataRecord.Stream;
import io.tidemark.metadata.record.MetadataRecord.StreamEndOffsets;
import io.tidemark.metadata.record.ObjectState;
import io.tidemark.stream.metadata.CommitStreamObjectRequest;
import io.tidemark.stream.metadata.CommitStreamSetObjectRequest;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.ObjectMetadata.ObjectKind;
import io.tidemark.stream.metadata.StreamMetadata.StreamState;
import io.tidemark.stream.metadata.StreamRange;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Object lifecycle handlers: prepare (ids with a time-to-live), commit of uploads and of
 * compactions (checked and atomic), expiry of prepared objects, removal after physical deletion.
 * Pure functions of (image, request, time); stateless.
 */
final class ObjectControl {
  private ObjectControl() {}

  static ControllerResult prepare(MetadataImage image, NodeRef node, int count, long ttlMs, long nowMs,
      ControllerLimits limits) {
    requireActive(image, node);
    require(count >= 1 && count <= limits.maxPrepareCount(), ErrorCode.INVALID_ARGUMENT,
        "prepare count " + count + " must be between 1 and " + limits.maxPrepareCount());
    require(ttlMs >= 1 && ttlMs <= limits.maxPrepareTtlMs(), ErrorCode.INVALID_ARGUMENT,
        "prepare ttl " + ttlMs + " ms must be between 1 and " + limits.maxPrepareTtlMs());
    long first = image.nextObjectId();
    List<MetadataRecord> records = new ArrayList<>(count + 1);
    records.add(new NextId(IdKind.OBJECT, first + count));
    for (long id = first; id < first + count; id++) {
      records.add(new StorageObject(id, ObjectState.PREPARED, ObjectKind.STREAM_SET, node.nodeId(), 0, nowMs,
          nowMs + ttlMs, 0, 0, 0, List.of()));
    }
    return ControllerResult.of(records, ReplyBodies.ofLong(first));
  }

  static ControllerResult commitStreamSetObject(MetadataImage image, NodeRef node, CommitStreamSetObjectRequest req,
      long nowMs, ControllerLimits limits) {
    requireActive(image, node);
    require(req.streamObjects().size() + req.compactedObjectIds().size() <= limits.maxObjectsPerCommit(),
        ErrorCode.INVALID_ARGUMENT, "a commit may write or replace at most " + limits.maxObjectsPerCommit()
        + " objects; this one has " + req.streamObjects().size() + " stream objects and "
        + req.compactedObjectIds().size() + " replaced objects");
    require(req.ranges().size() <= limits.maxRangesPerObject(), ErrorCode.INVALID_ARGUMENT,
        "a stream-set object may hold at most " + limits.maxRangesPerObject() + " ranges; this one has "
        + req.ranges().size());
    Set<Long> seen = new HashSet<>();
    List<StorageObject> outputs = new ArrayList<>();
    if (req.objectId() == -1) {
      require(req.ranges().isEmpty(), ErrorCode.INVALID_COMMIT,
          "stream-set object id -1 (none) but " + req.ranges().size() + " ranges given");
    } else {
      require(!req.ranges().isEmpty(), ErrorCode.INVALID_COMMIT,
          "stream-set object " + req.objectId() + " has no stream ranges");
      requireOneRangePerStream(req.objectId(), req.ranges());
      StorageObject p = requirePrepared(image, req.objectId(), node, nowMs, seen);
      outputs.add(committed(p, ObjectKind.STREAM_SET, req.objectSizeBytes(), req.ranges(), req.objectId(), nowMs));
    }
    for (CommitStreamSetObjectRequest.StreamObject so : req.streamObjects()) {
      StorageObject p = requirePrepared(image, so.objectId(), node, nowMs, seen);
      outputs.add(committed(p, ObjectKind.STREAM, so.sizeBytes(), List.of(so.range()), so.objectId(), nowMs));
    }
    require(!outputs.isEmpty() || !req.compactedObjectIds().isEmpty(), ErrorCode.INVALID_COMMIT,
        "the commit holds no object: stream-set object id -1 and no stream objects");
    if (req.compactedObjectIds().isEmpty()) {
      return upload(image, node, outputs);
    }
    return compaction(image, node, req, outputs, nowMs);
  }

  static ControllerResult commitStreamObject(MetadataImage image, NodeRef node, CommitStreamObjectRequest req,
      long nowMs, ControllerLimits limits) {
    requireActive(image, node);
    require(req.sourceObjectIds().size() <= limits.maxObjectsPerCommit(), ErrorCode.INVALID_ARGUMENT,
        "a commit may replace at most " + limits.maxObjectsPerCommit() + " objects; this one replaces "
        + req.sourceObjectIds().size());
    StorageObject p = requirePrepared(image, req.objectId(), node, nowMs, new HashSet<>());
    StorageObject output = committed(p, ObjectKind.STREAM, req.sizeBytes(), List.of(req.range()), req.objectId(),
        nowMs);
    if (req.sourceObjectIds().isEmpty()) {
      return upload(image, node, List.of(output));
    }
    long streamId = req.range().streamId();
    Checks.requireStream(image, streamId);
    List<StorageObject> sources = new ArrayList<>();
    Set<Long> seen = new HashSet<>();
    for (long id : req.sourceObjectIds()) {
      StorageObject o = image.object(id);
      require(seen.add(id), ErrorCode.INVALID_COMMIT, "source object " + id + " appears twice");
      require(o != null && o.state() == ObjectState.COMMITTED, ErrorCode.INVALID_COMMIT,
          "source object " + id + " is not a committed object");
      require(rangeOf(o, streamId) != null, ErrorCode.INVALID_COMMIT,
          "source object " + id + " holds no data of stream " + streamId);
      sources.add(o);
    }
    sources.sort(Comparator.comparingLong(o -> rangeOf(o, streamId).startOffset()));
    long expected = req.range().startOffset();
    for (StorageObject o : sources) {
      StreamRange r = rangeOf(o, streamId);
      require(r.startOffset() == expected, ErrorCode.INVALID_COMMIT, "source object " + o.objectId()
          + " of stream " + streamId + " starts at " + r.startOffset() + ", expected " + expected
          + ": sources must exactly cover " + req.range());
      expected = r.endOffset();
    }
    require(expected == req.range().endOffset(), ErrorCode.INVALID_COMMIT, "sources of stream " + streamId
        + " end at " + expected + " but the new object " + req.objectId() + " ends at " + req.range().endOffset());
    List<MetadataRecord> records = new ArrayList<>();
    for (StorageObject o : sources) {
      // a stream-set object (of any node) only loses this stream's range; the rest of it stays readable
      List<StreamRange> left = o.ranges().stream().filter(r -> r.streamId() != streamId).toList();
      records.add(left.isEmpty() ? o.marked(nowMs) : new StorageObject(o.objectId(), o.state(), o.kind(), o.nodeId(),
          o.sizeBytes(), o.preparedAtMs(), o.expiresAtMs(), o.committedAtMs(), o.markedAtMs(), o.orderId(), left));
    }
    records.add(output);
    return ControllerResult.of(records, ReplyBodies.empty());
  }

  private static StreamRange rangeOf(StorageObject o, long streamId) {
    for (StreamRange r : o.ranges()) {
      if (r.streamId() == streamId) {
        return r;
      }
    }
    return null;
  }

  /** An upload from the WAL: every range continues its stream at the stream's end offset, under its epoch. */
  private static ControllerResult upload(MetadataImage image, NodeRef node, List<StorageObject> outputs) {
    Map<Long, List<StreamRange>> byStream = new TreeMap<>();
    for (StorageObject o : outputs) {
      for (StreamRange r : o.ranges()) {
        byStream.computeIfAbsent(r.streamId(), k -> new ArrayList<>()).add(r);
      }
    }
    List<EndOffset> ends = new ArrayList<>();
    for (Map.Entry<Long, List<StreamRange>> e : byStream.entrySet()) {
      Stream s = Checks.requireStream(image, e.getKey());
      List<StreamRange> ranges = e.getValue();
      ranges.sort(Comparator.comparingLong(StreamRange::startOffset));
      long expected = s.endOffset();
      for (StreamRange r : ranges) {
        require(r.epoch() <= s.epoch(), ErrorCode.INVALID_COMMIT, "stream " + s.streamId() + " range epoch "
            + r.epoch() + " is above the current epoch " + s.epoch());
        if (r.epoch() < s.epoch()) {
          throw new Rejection(ErrorCode.STREAM_FENCED, "stream " + s.streamId() + " range " + r + " carries epoch "
              + r.epoch() + " but the stream was reopened with epoch " + s.epoch());
        }
        if (s.state() != StreamState.OPEN || s.ownerNodeId() != node.nodeId()) {
          throw new Rejection(ErrorCode.STREAM_FENCED, "stream " + s.streamId() + " is "
              + (s.state() == StreamState.OPEN ? "open on node " + s.ownerNodeId() : "closed")
              + "; node " + node.nodeId() + " cannot commit to it");
        }
        require(r.startOffset() == expected, ErrorCode.INVALID_COMMIT, "stream " + s.streamId() + " range ["
            + r.startOffset() + ", " + r.endOffset() + ") does not continue at offset " + expected
            + (r.startOffset() > expected ? " (gap)" : " (overlap)"));
        expected = r.endOffset();
      }
      ends.add(new EndOffset(s.streamId(), expected));
    }
    List<MetadataRecord> records = new ArrayList<>(outputs);
    if (!ends.isEmpty()) {
      records.add(new StreamEndOffsets(ends));
    }
    return ControllerResult.of(records, ReplyBodies.empty());
  }

  /** A stream-set compaction: outputs cover exactly the live data of the inputs, which are marked. */
  private static ControllerResult compaction(MetadataImage image, NodeRef node, CommitStreamSetObjectRequest req,
      List<StorageObject> outputs, long nowMs) {
    List<StorageObject> inputs = new ArrayList<>();
    Set<Long> seen = new HashSet<>();
    long minOrder = Long.MAX_VALUE;
    for (long id : req.compactedObjectIds()) {
      StorageObject o = image.object(id);
      require(seen.add(id), ErrorCode.INVALID_COMMIT, "compacted object " + id + " appears twice");
      require(o != null && o.state() == ObjectState.COMMITTED, ErrorCode.INVALID_COMMIT,
          "compacted object " + id + " is not a committed object");
      require(o.kind() == ObjectKind.STREAM_SET && o.nodeId() == node.nodeId(), ErrorCode.INVALID_COMMIT,
          "compacted object " + id + " is not a stream-set object of node " + node.nodeId());
      inputs.add(o);
      minOrder = Math.min(minOrder, o.orderId());
    }
    Map<Long, List<long[]>> in = intervals(inputs, "compacted objects");
    Map<Long, List<long[]>> out = intervals(outputs, "compaction outputs");
    for (Long streamId : out.keySet()) {
      require(in.containsKey(streamId), ErrorCode.INVALID_COMMIT,
          "compaction output holds stream " + streamId + " which no compacted object holds");
    }
    for (Map.Entry<Long, List<long[]>> e : in.entrySet()) {
      List<long[]> produced = out.get(e.getKey());
      if (produced == null) {
        Stream s = image.stream(e.getKey());
        long lastEnd = e.getValue().get(e.getValue().size() - 1)[1];
        require(s == null || lastEnd <= s.startOffset(), ErrorCode.INVALID_COMMIT, "compaction dropped live data of"
            + " stream " + e.getKey() + " up to offset " + lastEnd + " (stream starts at " + s.startOffset() + ")");
        continue;
      }
      require(sameIntervals(e.getValue(), produced), ErrorCode.INVALID_COMMIT, "compaction outputs of stream "
          + e.getKey() + " cover " + show(produced) + " but the inputs cover " + show(e.getValue()));
    }
    List<MetadataRecord> records = new ArrayList<>();
    for (StorageObject o : inputs) {
      records.add(o.marked(nowMs));
    }
    for (StorageObject o : outputs) {
      records.add(o.kind() == ObjectKind.STREAM_SET ? withOrder(o, minOrder) : o);
    }
    return ControllerResult.of(records, ReplyBodies.empty());
  }

  static ControllerResult expire(MetadataImage image, int maxObjects, long nowMs) {
    List<MetadataRecord> records = new ArrayList<>();
    Iterator<Map.Entry<LongPair, Long>> it = image.preparedByExpiry().iterator();
    while (it.hasNext() && records.size() < maxObjects) {
      Map.Entry<LongPair, Long> e = it.next();
      if (e.getKey().first() > nowMs) {
        break;
      }
      records.add(image.object(e.getValue()).marked(nowMs));
    }
    return ControllerResult.of(records, ReplyBodies.ofLong(records.size()));
  }

  static ControllerResult removeDeleted(MetadataImage image, List<Long> ids) {
    List<MetadataRecord> records = new ArrayList<>();
    for (long id : ids) {
      StorageObject o = image.object(id);
      if (o != null && o.state() == ObjectState.MARKED_FOR_DELETION) {
        records.add(new RemoveObject(id));
      }
    }
    return ControllerResult.of(records, ReplyBodies.ofLong(records.size()));
  }

  private static StorageObject requirePrepared(MetadataImage image, long id, NodeRef node, long nowMs, Set<Long> seen) {
    require(seen.add(id), ErrorCode.INVALID_COMMIT, "object " + id + " appears twice in one commit");
    StorageObject o = image.object(id);
    require(o != null, ErrorCode.INVALID_COMMIT, "object " + id + " is unknown (never prepared, or deleted)");
    require(o.state() != ObjectState.COMMITTED, ErrorCode.INVALID_COMMIT, "object " + id + " is already committed");
    require(o.state() == ObjectState.PREPARED, ErrorCode.INVALID_COMMIT,
        "object " + id + " expired or was marked for deletion");
    require(o.expiresAtMs() > nowMs, ErrorCode.INVALID_COMMIT,
        "object " + id + " expired at " + o.expiresAtMs() + " ms (now " + nowMs + " ms)");
    require(o.nodeId() == node.nodeId(), ErrorCode.INVALID_COMMIT,
        "object " + id + " was prepared by node " + o.nodeId() + ", not node " + node.nodeId());
    return o;
  }

  private static void requireOneRangePerStream(long objectId, List<StreamRange> ranges) {
    Set<Long> streams = new HashSet<>();
    for (StreamRange r : ranges) {
      require(streams.add(r.streamId()), ErrorCode.INVALID_COMMIT,
          "stream-set object " + objectId + " holds two ranges of stream " + r.streamId());
    }
  }

  private static StorageObject committed(StorageObject p, ObjectKind kind, long size, List<StreamRange> ranges,
      long orderId, long nowMs) {
    for (StreamRange r : ranges) {
      require(r.endOffset() > r.startOffset(), ErrorCode.INVALID_COMMIT, "object " + p.objectId()
          + " holds an empty range [" + r.startOffset() + ", " + r.endOffset() + ") of stream " + r.streamId());
    }
    require(size >= 0, ErrorCode.INVALID_COMMIT, "object " + p.objectId() + " has negative size " + size);
    return new StorageObject(p.objectId(), ObjectState.COMMITTED, kind, p.nodeId(), size, p.preparedAtMs(),
        p.expiresAtMs(), nowMs, 0, orderId, ranges);
  }

  private static StorageObject withOrder(StorageObject o, long orderId) {
    return new StorageObject(o.objectId(), o.state(), o.kind(), o.nodeId(), o.sizeBytes(), o.preparedAtMs(),
        o.expiresAtMs(), o.committedAtMs(), o.markedAtMs(), orderId, o.ranges());
  }

  /** Per stream, the merged offset intervals the objects hold; overlapping ranges are rejected. */
  private static Map<Long, List<long[]>> intervals(List<StorageObject> objects, String what) {
    Map<Long, List<StreamRange>> byStream = new TreeMap<>();
    for (StorageObject o : objects) {
      for (StreamRange r : o.ranges()) {
        if (r.endOffset() > r.startOffset()) {
          byStream.computeIfAbsent(r.streamId(), k -> new ArrayList<>()).add(r);
        }
      }
    }
    Map<Long, List<long[]>> out = new TreeMap<>();
    for (Map.Entry<Long, List<StreamRange>> e : byStream.entrySet()) {
      List<StreamRange> rs = e.getValue();
      rs.sort(Comparator.comparingLong(StreamRange::startOffset));
      List<long[]> merged = new ArrayList<>();
      for (StreamRange r : rs) {
        long[] last = merged.isEmpty() ? null : merged.get(merged.size() - 1);
        require(last == null || r.startOffset() >= last[1], ErrorCode.INVALID_COMMIT,
            what + " overlap in stream " + e.getKey() + " at offset " + r.startOffset());
        if (last != null && last[1] == r.startOffset()) {
          last[1] = r.endOffset();
        } else {
          merged.add(new long[] {r.startOffset(), r.endOffset()});
        }
      }
      out.put(e.getKey(), merged);
    }
    return out;
  }

  private static boolean sameIntervals(List<long[]> a, List<long[]> b) {
    if (a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      if (a.get(i)[0] != b.get(i)[0] || a.get(i)[1] != b.get(i)[1]) {
        return false;
      }
    }
    return true;
  }

  private static String show(List<long[]> intervals) {
    StringBuilder sb = new StringBuilder();
    for (long[] i : intervals) {
      sb.append('[').append(i[0]).append(", ").append(i[1]).append(')');
    }
    return sb.toString();
  }
}
