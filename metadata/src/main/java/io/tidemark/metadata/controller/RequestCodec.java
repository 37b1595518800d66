package io.tidemark.metadata.controller;

import io.tidemark.metadata.controller.ControllerRequest.*;
import io.tidemark.metadata.record.CorruptRecordException;
import io.tidemark.metadata.record.FieldReader;
import io.tidemark.metadata.record.FieldWriter;
import io.tidemark.metadata.record.MetadataRecord;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.metadata.record.RecordCodec;
import io.tidemark.stream.metadata.CommitStreamObjectRequest;
import io.tidemark.stream.metadata.CommitStreamSetObjectRequest;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.StreamRange;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Binary encoding of controller requests: {@code type (1) | version (1) | fields}. Log entries
 * carry the encoded request after the leader's timestamp; the same rule as for records applies
 * (fields are only appended, with defaults).
 *
 * <p>Threading: stateless.
 */
public final class RequestCodec {
  private static final int VERSION = 1;
  /** The first byte of an encoded {@link SessionHeartbeat} (voters recognise heartbeat entries by it). */
  public static final byte SESSION_HEARTBEAT_TYPE = 27;

  private RequestCodec() {}

  public static byte[] encode(ControllerRequest request) {
    FieldWriter w = new FieldWriter(64);
    w.writeByte(typeOf(request)).writeByte(VERSION);
    switch (request) {
      case RegisterBroker r -> {
        w.writeInt(r.nodeId()).writeInt(r.endpoints().size());
        for (Endpoint e : r.endpoints()) {
          w.writeString(e.name()).writeString(e.host()).writeInt(e.port());
        }
        w.writeString(r.rack());
      }
      case FenceBroker r -> w.writeInt(r.nodeId()).writeLong(r.nodeEpoch());
      case UnfenceBroker r -> w.writeInt(r.nodeId()).writeLong(r.nodeEpoch());
      case CreateStream r -> node(w, r.node()).writeStringMap(r.tags());
      case OpenStream r -> node(w, r.node()).writeLong(r.streamId()).writeLong(r.epoch());
      case CloseStream r -> node(w, r.node()).writeLong(r.streamId()).writeLong(r.epoch());
      case StreamOps r -> {
        node(w, r.node()).writeInt(r.ops().size());
        for (StreamOp op : r.ops()) {
          w.writeLong(op.streamId()).writeLong(op.epoch()).writeBoolean(op.open());
        }
      }
      case TrimStream r -> node(w, r.node()).writeLong(r.streamId()).writeLong(r.epoch()).writeLong(r.newStartOffset());
      case DeleteStream r -> node(w, r.node()).writeLong(r.streamId()).writeLong(r.epoch());
      case PrepareObjects r -> node(w, r.node()).writeInt(r.count()).writeLong(r.ttlMs());
      case CommitStreamSetObject r -> {
        node(w, r.node());
        CommitStreamSetObjectRequest c = r.request();
        w.writeLong(c.objectId()).writeLong(c.objectSizeBytes());
        RecordCodec.writeRanges(w, c.ranges());
        w.writeInt(c.streamObjects().size());
        for (CommitStreamSetObjectRequest.StreamObject so : c.streamObjects()) {
          w.writeLong(so.objectId()).writeLong(so.sizeBytes());
          RecordCodec.writeRanges(w, List.of(so.range()));
        }
        RecordCodec.writeLongs(w, c.compactedObjectIds());
      }
      case CommitStreamObject r -> {
        node(w, r.node());
        CommitStreamObjectRequest c = r.request();
        w.writeLong(c.objectId()).writeLong(c.sizeBytes());
        RecordCodec.writeRanges(w, List.of(c.range()));
        RecordCodec.writeLongs(w, c.sourceObjectIds());
      }
      case ExpireObjects r -> w.writeInt(r.maxObjects());
      case RemoveDeletedObjects r -> RecordCodec.writeLongs(w, r.objectIds());
      case CreateTopic r -> w.writeUuid(r.topicId()).writeString(r.name()).writeInt(r.partitionCount());
      case DeleteTopic r -> w.writeUuid(r.topicId());
      case GrowTopic r -> w.writeUuid(r.topicId()).writeInt(r.partitionCount());
      case UpdatePartition r -> writeUpdate(w, r);
      case UpdatePartitions r -> {
        w.writeInt(r.updates().size());
        r.updates().forEach(u -> writeUpdate(w, u));
      }
      case SetConfig r -> w.writeByte(r.resourceType()).writeString(r.resourceName()).writeString(r.key())
          .writeString(r.value());
      case PutKeyValue r -> w.writeString(r.namespace()).writeString(r.key()).writeBytes(r.value())
          .writeBoolean(r.ifAbsent());
      case AllocateProducerIds r -> node(w, r.node());
      case AlterScramCredential r -> w.writeString(r.user()).writeByte(r.mechanism()).writeBytes(r.salt())
          .writeBytes(r.storedKey()).writeBytes(r.serverKey()).writeInt(r.iterations()).writeBoolean(r.delete());
      case CreateAcls r -> writeAcls(w, r.entries());
      case DeleteAcls r -> writeAcls(w, r.entries());
      case AlterConfigs r -> {
        w.writeInt(r.changes().size());
        for (ConfigChange c : r.changes()) {
          w.writeByte(c.resourceType()).writeString(c.resourceName()).writeString(c.key()).writeString(c.value());
        }
      }
      case AlterClientQuotas r -> {
        w.writeInt(r.changes().size());
        for (QuotaChange c : r.changes()) {
          w.writeString(c.entity()).writeString(c.key()).writeString(c.value());
        }
      }
      case ReassignPartitions r -> {
        w.writeInt(r.reassignments().size());
        for (Reassignment m : r.reassignments()) {
          w.writeUuid(m.topicId()).writeInt(m.partition()).writeBoolean(m.targetReplicas() != null);
          if (m.targetReplicas() != null) {
            RecordCodec.writeInts(w, m.targetReplicas());
          }
        }
      }
      case ElectLeaders r -> {
        w.writeInt(r.partitions().size());
        for (PartitionRef p : r.partitions()) {
          w.writeUuid(p.topicId()).writeInt(p.partition());
        }
        w.writeBoolean(r.unclean());
      }
      case CompleteReassignment r -> w.writeUuid(r.topicId()).writeInt(r.partition()).writeInt(r.leaderEpoch());
      case DrainBroker r -> node(w, r.node());
      case FailoverBroker r -> w.writeInt(r.nodeId()).writeLong(r.nodeEpoch());
      case CompleteFailover r -> node(w, r.recovery());
      case SessionHeartbeat r -> node(w, r.node());
      case Heartbeat r -> node(w, r.node());
      case DescribeQuorum r -> { } // no fields
      case ReportLoad r -> {
        node(w, r.node());
        r.load().write(w);
      }
      case DescribeLoads r -> { } // no fields
      case GetStreams r -> RecordCodec.writeLongs(w, r.streamIds());
      case GetOpeningStreams r -> node(w, r.node());
      case GetObjects r -> w.writeLong(r.streamId()).writeLong(r.startOffset()).writeLong(r.endOffset())
          .writeInt(r.limit());
      case GetStreamSetObjects r -> w.writeInt(r.nodeId());
      case GetStreamObjects r -> w.writeLong(r.streamId());
      case GetKeyValue r -> w.writeString(r.namespace()).writeString(r.key());
      case GetBroker r -> w.writeInt(r.nodeId());
    }
    return w.toByteArray();
  }

  public static ControllerRequest decode(ByteBuffer buf) {
    FieldReader r = new FieldReader(buf);
    int type = r.readByte();
    int version = r.readByte();
    if (version < 1) {
      throw new CorruptRecordException("request version " + version);
    }
    return switch (type) {
      case 1 -> {
        int nodeId = r.readInt();
        int n = r.readCount(12);
        List<Endpoint> eps = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          eps.add(new Endpoint(r.readString(), r.readString(), r.readInt()));
        }
        yield new RegisterBroker(nodeId, eps, r.readString());
      }
      case 2 -> new FenceBroker(r.readInt(), r.readLong());
      case 3 -> new UnfenceBroker(r.readInt(), r.readLong());
      case 4 -> new CreateStream(node(r), r.readStringMap());
      case 5 -> new OpenStream(node(r), r.readLong(), r.readLong());
      case 6 -> new CloseStream(node(r), r.readLong(), r.readLong());
      case 81 -> {
        NodeRef node = node(r);
        int n = r.readCount(17);
        List<StreamOp> ops = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          ops.add(new StreamOp(r.readLong(), r.readLong(), r.readBoolean()));
        }
        yield new StreamOps(node, ops);
      }
      case 7 -> new TrimStream(node(r), r.readLong(), r.readLong(), r.readLong());
      case 8 -> new DeleteStream(node(r), r.readLong(), r.readLong());
      case 9 -> new PrepareObjects(node(r), r.readInt(), r.readLong());
      case 10 -> {
        NodeRef node = node(r);
        long objectId = r.readLong();
        long size = r.readLong();
        List<StreamRange> ranges = RecordCodec.readRanges(r);
        int n = r.readCount(24);
        List<CommitStreamSetObjectRequest.StreamObject> sos = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          long id = r.readLong();
          long soSize = r.readLong();
          sos.add(new CommitStreamSetObjectRequest.StreamObject(id, soSize, single(RecordCodec.readRanges(r))));
        }
        yield new CommitStreamSetObject(node,
            new CommitStreamSetObjectRequest(objectId, size, ranges, sos, RecordCodec.readLongs(r)));
      }
      case 11 -> {
        NodeRef node = node(r);
        long id = r.readLong();
        long size = r.readLong();
        StreamRange range = single(RecordCodec.readRanges(r));
        yield new CommitStreamObject(node, new CommitStreamObjectRequest(id, size, range, RecordCodec.readLongs(r)));
      }
      case 12 -> new ExpireObjects(r.readInt());
      case 13 -> new RemoveDeletedObjects(RecordCodec.readLongs(r));
      case 14 -> new CreateTopic(r.readUuid(), r.readString(), r.readInt());
      case 15 -> new DeleteTopic(r.readUuid());
      case 16 -> readUpdate(r);
      case 82 -> {
        int n = r.readCount(32);
        List<UpdatePartition> updates = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          updates.add(readUpdate(r));
        }
        yield new UpdatePartitions(updates);
      }
      case 17 -> new SetConfig(r.readByte(), r.readString(), r.readString(), r.readString());
      case 18 -> new PutKeyValue(r.readString(), r.readString(), r.readBytes(), r.readBoolean());
      case 19 -> new AllocateProducerIds(node(r));
      case 60 -> new AlterScramCredential(r.readString(), r.readByte(), r.readBytes(), r.readBytes(), r.readBytes(),
          r.readInt(), r.readBoolean());
      case 20 -> new GrowTopic(r.readUuid(), r.readInt());
      case 21 -> {
        int n = r.readCount(21);
        List<Reassignment> moves = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          java.util.UUID topicId = r.readUuid();
          int partition = r.readInt();
          moves.add(new Reassignment(topicId, partition, r.readBoolean() ? RecordCodec.readInts(r) : null));
        }
        yield new ReassignPartitions(moves);
      }
      case 22 -> {
        int n = r.readCount(20);
        List<PartitionRef> parts = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          parts.add(new PartitionRef(r.readUuid(), r.readInt()));
        }
        yield new ElectLeaders(parts, r.readBoolean());
      }
      case 23 -> new CompleteReassignment(r.readUuid(), r.readInt(), r.readInt());
      case 24 -> new DrainBroker(node(r));
      case 25 -> new FailoverBroker(r.readInt(), r.readLong());
      case 26 -> new CompleteFailover(node(r));
      case 27 -> new SessionHeartbeat(node(r));
      case 65 -> new CreateAcls(readAcls(r));
      case 66 -> new DeleteAcls(readAcls(r));
      case 67 -> {
        int n = r.readCount(12);
        List<QuotaChange> changes = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          changes.add(new QuotaChange(r.readString(), r.readString(), r.readString()));
        }
        yield new AlterClientQuotas(changes);
      }
      case 73 -> {
        int n = r.readCount(13);
        List<ConfigChange> changes = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          changes.add(new ConfigChange(r.readByte(), r.readString(), r.readString(), r.readString()));
        }
        yield new AlterConfigs(changes);
      }
      case 40 -> new Heartbeat(node(r));
      case 74 -> new DescribeQuorum();
      case 79 -> new ReportLoad(node(r), NodeLoad.read(r));
      case 80 -> new DescribeLoads();
      case 41 -> new GetStreams(RecordCodec.readLongs(r));
      case 42 -> new GetOpeningStreams(node(r));
      case 43 -> new GetObjects(r.readLong(), r.readLong(), r.readLong(), r.readInt());
      case 44 -> new GetStreamSetObjects(r.readInt());
      case 45 -> new GetStreamObjects(r.readLong());
      case 46 -> new GetKeyValue(r.readString(), r.readString());
      case 47 -> new GetBroker(r.readInt());
      default -> throw new CorruptRecordException("unknown request type " + type);
    };
  }

  private static int typeOf(ControllerRequest request) {
    return switch (request) {
      case RegisterBroker r -> 1;
      case FenceBroker r -> 2;
      case UnfenceBroker r -> 3;
      case CreateStream r -> 4;
      case OpenStream r -> 5;
      case CloseStream r -> 6;
      case StreamOps r -> 81;
      case TrimStream r -> 7;
      case DeleteStream r -> 8;
      case PrepareObjects r -> 9;
      case CommitStreamSetObject r -> 10;
      case CommitStreamObject r -> 11;
      case ExpireObjects r -> 12;
      case RemoveDeletedObjects r -> 13;
      case CreateTopic r -> 14;
      case DeleteTopic r -> 15;
      case UpdatePartition r -> 16;
      case UpdatePartitions r -> 82;
      case SetConfig r -> 17;
      case PutKeyValue r -> 18;
      case AllocateProducerIds r -> 19;
      case AlterScramCredential r -> 60;
      case GrowTopic r -> 20;
      case ReassignPartitions r -> 21;
      case ElectLeaders r -> 22;
      case CompleteReassignment r -> 23;
      case DrainBroker r -> 24;
      case FailoverBroker r -> 25;
      case CompleteFailover r -> 26;
      case SessionHeartbeat r -> SESSION_HEARTBEAT_TYPE;
      case CreateAcls r -> 65;
      case DeleteAcls r -> 66;
      case AlterClientQuotas r -> 67;
      case AlterConfigs r -> 73;
      case DescribeQuorum r -> 74;
      case ReportLoad r -> 79;
      case DescribeLoads r -> 80;
      case Heartbeat r -> 40;
      case GetStreams r -> 41;
      case GetOpeningStreams r -> 42;
      case GetObjects r -> 43;
      case GetStreamSetObjects r -> 44;
      case GetStreamObjects r -> 45;
      case GetKeyValue r -> 46;
      case GetBroker r -> 47;
    };
  }

  private static void writeAcls(FieldWriter w, List<MetadataRecord.AclEntry> entries) {
    w.writeInt(entries.size());
    for (MetadataRecord.AclEntry e : entries) {
      RecordCodec.writeAcl(w, e);
    }
  }

  private static List<MetadataRecord.AclEntry> readAcls(FieldReader r) {
    int n = r.readCount(16);
    List<MetadataRecord.AclEntry> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(RecordCodec.readAcl(r));
    }
    return out;
  }

  private static void writeUpdate(FieldWriter w, UpdatePartition r) {
    w.writeUuid(r.topicId()).writeInt(r.partition()).writeInt(r.leaderNodeId()).writeInt(r.leaderEpoch());
    RecordCodec.writeLongs(w, r.streamIds());
  }

  private static UpdatePartition readUpdate(FieldReader r) {
    return new UpdatePartition(r.readUuid(), r.readInt(), r.readInt(), r.readInt(), RecordCodec.readLongs(r));
  }

  private static FieldWriter node(FieldWriter w, NodeRef node) {
    return w.writeInt(node.nodeId()).writeLong(node.nodeEpoch());
  }

  private static NodeRef node(FieldReader r) {
    return new NodeRef(r.readInt(), r.readLong());
  }

  private static StreamRange single(List<StreamRange> ranges) {
    if (ranges.size() != 1) {
      throw new CorruptRecordException("expected one range, found " + ranges.size());
    }
    return ranges.get(0);
  }
}
