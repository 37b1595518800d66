package io.tidemark.metadata.record;

import io.tidemark.metadata.record.MetadataRecord.AccessControlEntry;
import io.tidemark.metadata.record.MetadataRecord.AclEntry;
import io.tidemark.metadata.record.MetadataRecord.BrokerFencing;
import io.tidemark.metadata.record.MetadataRecord.BrokerRegistration;
import io.tidemark.metadata.record.MetadataRecord.Config;
import io.tidemark.metadata.record.MetadataRecord.EndOffset;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.metadata.record.MetadataRecord.IdKind;
import io.tidemark.metadata.record.MetadataRecord.KeyValue;
import io.tidemark.metadata.record.MetadataRecord.NextId;
import io.tidemark.metadata.record.MetadataRecord.OwnerRange;
import io.tidemark.metadata.record.MetadataRecord.Partition;
import io.tidemark.metadata.record.MetadataRecord.ProducerIdBlock;
import io.tidemark.metadata.record.MetadataRecord.RemoveAccessControlEntry;
import io.tidemark.metadata.record.MetadataRecord.RemoveObject;
import io.tidemark.metadata.record.MetadataRecord.RemoveStream;
import io.tidemark.metadata.record.MetadataRecord.RemoveTopic;
import io.tidemark.metadata.record.MetadataRecord.StorageObject;
import io.tidemark.metadata.record.MetadataRecord.Stream;
import io.tidemark.metadata.record.MetadataRecord.StreamEndOffsets;
import io.tidemark.metadata.record.MetadataRecord.Topic;
import io.tidemark.stream.metadata.ObjectMetadata.ObjectKind;
import io.tidemark.stream.metadata.StreamMetadata.StreamState;
import io.tidemark.stream.metadata.StreamRange;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Binary encoding of metadata records. A frame is {@code type id (2) | version (2) | body length
 * (4) | body}; the body holds the fields in declaration order.
 *
 * <p>Evolution rule: a new version may only append fields at the end of a body, each with a
 * default. A reader that knows fewer fields than the writer skips the rest of the body (the
 * length says where it ends); a reader that knows more fields than the writer uses the defaults
 * ({@link FieldReader#readStringOr} and friends). Ids and existing fields never change meaning.
 *
 * <p>Threading: stateless.
 */
public final class RecordCodec {

  /** Header bytes before the body. */
  public static final int HEADER_BYTES = 8;

  private RecordCodec() {}

  public static byte[] encode(MetadataRecord record) {
    FieldWriter w = new FieldWriter(64);
    write(record, w);
    return w.toByteArray();
  }

  /** Appends one frame to {@code w}. */
  public static void write(MetadataRecord record, FieldWriter w) {
    RecordType type = record.type();
    w.writeShort(type.id()).writeShort(type.currentVersion());
    int lenAt = w.reserveInt();
    int start = w.position();
    writeBody(record, w);
    w.patchInt(lenAt, w.position() - start);
  }

  /** Writes a frame with an explicit body, for tests of other versions. */
  public static byte[] frame(RecordType type, int version, byte[] body) {
    FieldWriter w = new FieldWriter(body.length + HEADER_BYTES);
    w.writeShort(type.id()).writeShort(version).writeBytes(body);
    return w.toByteArray();
  }

  public static MetadataRecord decode(byte[] bytes) {
    ByteBuffer buf = ByteBuffer.wrap(bytes);
    MetadataRecord r = read(buf);
    if (buf.hasRemaining()) {
      throw new CorruptRecordException(buf.remaining() + " bytes after the record frame");
    }
    return r;
  }

  /** Reads one frame starting at the buffer's position and advances past it. */
  public static MetadataRecord read(ByteBuffer buf) {
    if (buf.remaining() < HEADER_BYTES) {
      throw new CorruptRecordException("record header truncated: " + buf.remaining() + " bytes");
    }
    RecordType type = RecordType.ofId(buf.getShort());
    short version = buf.getShort();
    int len = buf.getInt();
    if (version < 1 || len < 0 || len > buf.remaining()) {
      throw new CorruptRecordException("bad frame for " + type + ": version " + version + ", body length " + len
          + ", " + buf.remaining() + " bytes left");
    }
    ByteBuffer body = buf.slice(buf.position(), len);
    buf.position(buf.position() + len);
    return readBody(type, new FieldReader(body));
  }

  private static void writeBody(MetadataRecord record, FieldWriter w) {
    switch (record) {
      case BrokerRegistration r -> {
        w.writeInt(r.nodeId()).writeLong(r.nodeEpoch());
        w.writeInt(r.endpoints().size());
        for (Endpoint e : r.endpoints()) {
          w.writeString(e.name()).writeString(e.host()).writeInt(e.port());
        }
        w.writeLong(r.registeredAtMs());
        w.writeString(r.rack()); // version 2
      }
      case BrokerFencing r -> w.writeInt(r.nodeId()).writeLong(r.nodeEpoch()).writeBoolean(r.fenced());
      case Topic r -> w.writeUuid(r.topicId()).writeString(r.name()).writeInt(r.partitionCount());
      case RemoveTopic r -> w.writeUuid(r.topicId());
      case Partition r -> {
        w.writeUuid(r.topicId()).writeInt(r.partition()).writeInt(r.leaderNodeId()).writeInt(r.leaderEpoch());
        writeLongs(w, r.streamIds());
        writeInts(w, r.replicas()); // version 2
        writeInts(w, r.previousReplicas()); // version 2
      }
      case Config r -> w.writeByte(r.resourceType()).writeString(r.resourceName()).writeString(r.key())
          .writeString(r.value());
      case Stream r -> {
        w.writeLong(r.streamId()).writeLong(r.epoch()).writeLong(r.startOffset()).writeLong(r.endOffset())
            .writeByte(r.state().ordinal()).writeInt(r.ownerNodeId());
        w.writeInt(r.ranges().size());
        for (OwnerRange o : r.ranges()) {
          w.writeLong(o.epoch()).writeInt(o.nodeId()).writeLong(o.startOffset());
        }
        w.writeStringMap(r.tags());
      }
      case StreamEndOffsets r -> {
        w.writeInt(r.offsets().size());
        for (EndOffset e : r.offsets()) {
          w.writeLong(e.streamId()).writeLong(e.endOffset());
        }
      }
      case RemoveStream r -> w.writeLong(r.streamId());
      case StorageObject r -> {
        w.writeLong(r.objectId()).writeByte(r.state().ordinal()).writeByte(r.kind().ordinal()).writeInt(r.nodeId())
            .writeLong(r.sizeBytes()).writeLong(r.preparedAtMs()).writeLong(r.expiresAtMs())
            .writeLong(r.committedAtMs()).writeLong(r.markedAtMs()).writeLong(r.orderId());
        writeRanges(w, r.ranges());
      }
      case RemoveObject r -> w.writeLong(r.objectId());
      case NextId r -> w.writeByte(r.kind().ordinal()).writeLong(r.nextId());
      case ProducerIdBlock r -> w.writeInt(r.nodeId()).writeLong(r.firstProducerId()).writeInt(r.size());
      case KeyValue r -> w.writeString(r.namespace()).writeString(r.key()).writeBytes(r.value());
      case MetadataRecord.UserScramCredential r -> w.writeString(r.user()).writeByte(r.mechanism()).writeBytes(r.salt())
          .writeBytes(r.storedKey()).writeBytes(r.serverKey()).writeInt(r.iterations());
      case MetadataRecord.RemoveUserScramCredential r -> w.writeString(r.user()).writeByte(r.mechanism());
      case AccessControlEntry r -> writeAcl(w, r.entry());
      case RemoveAccessControlEntry r -> writeAcl(w, r.entry());
    }
  }

  private static MetadataRecord readBody(RecordType type, FieldReader r) {
    return switch (type) {
      case BROKER_REGISTRATION -> {
        int nodeId = r.readInt();
        long epoch = r.readLong();
        int n = r.readCount(12);
        List<Endpoint> eps = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          eps.add(new Endpoint(r.readString(), r.readString(), r.readInt()));
        }
        long at = r.readLong();
        String rack = r.readStringOr(""); // added in version 2
        yield new BrokerRegistration(nodeId, epoch, eps, at, rack);
      }
      case BROKER_FENCING -> new BrokerFencing(r.readInt(), r.readLong(), r.readBoolean());
      case TOPIC -> new Topic(r.readUuid(), r.readString(), r.readInt());
      case REMOVE_TOPIC -> new RemoveTopic(r.readUuid());
      case PARTITION -> {
        UUID topicId = r.readUuid();
        int partition = r.readInt();
        int leader = r.readInt();
        int epoch = r.readInt();
        List<Long> streams = readLongs(r);
        // version 1 bodies end here: the assignment is the leader alone, no reassignment
        yield r.hasMore()
            ? new Partition(topicId, partition, leader, epoch, streams, readInts(r), readInts(r))
            : new Partition(topicId, partition, leader, epoch, streams);
      }
      case CONFIG -> new Config(r.readByte(), r.readString(), r.readString(), r.readString());
      case STREAM -> {
        long id = r.readLong();
        long epoch = r.readLong();
        long start = r.readLong();
        long end = r.readLong();
        StreamState state = enumOf(StreamState.values(), r.readByte(), "stream state");
        int owner = r.readInt();
        int n = r.readCount(20);
        List<OwnerRange> ranges = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          ranges.add(new OwnerRange(r.readLong(), r.readInt(), r.readLong()));
        }
        yield new Stream(id, epoch, start, end, state, owner, ranges, r.readStringMap());
      }
      case STREAM_END_OFFSETS -> {
        int n = r.readCount(16);
        List<EndOffset> list = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          list.add(new EndOffset(r.readLong(), r.readLong()));
        }
        yield new StreamEndOffsets(list);
      }
      case REMOVE_STREAM -> new RemoveStream(r.readLong());
      case STORAGE_OBJECT -> new StorageObject(r.readLong(), ObjectState.of(r.readByte()),
          enumOf(ObjectKind.values(), r.readByte(), "object kind"), r.readInt(), r.readLong(), r.readLong(),
          r.readLong(), r.readLong(), r.readLong(), r.readLong(), readRanges(r));
      case REMOVE_OBJECT -> new RemoveObject(r.readLong());
      case NEXT_ID -> new NextId(enumOf(IdKind.values(), r.readByte(), "id kind"), r.readLong());
      case PRODUCER_ID_BLOCK -> new ProducerIdBlock(r.readInt(), r.readLong(), r.readInt());
      case KEY_VALUE -> new KeyValue(r.readString(), r.readString(), r.readBytes());
      case USER_SCRAM_CREDENTIAL -> new MetadataRecord.UserScramCredential(r.readString(), r.readByte(), r.readBytes(),
          r.readBytes(), r.readBytes(), r.readInt());
      case REMOVE_USER_SCRAM_CREDENTIAL -> new MetadataRecord.RemoveUserScramCredential(r.readString(), r.readByte());
      case ACCESS_CONTROL_ENTRY -> new AccessControlEntry(readAcl(r));
      case REMOVE_ACCESS_CONTROL_ENTRY -> new RemoveAccessControlEntry(readAcl(r));
    };
  }

  public static void writeAcl(FieldWriter w, AclEntry e) {
    w.writeByte(e.resourceType()).writeString(e.resourceName()).writeByte(e.patternType()).writeString(e.principal())
        .writeString(e.host()).writeByte(e.operation()).writeByte(e.permission());
  }

  public static AclEntry readAcl(FieldReader r) {
    byte resourceType = r.readByte();
    String name = r.readString();
    byte pattern = r.readByte();
    String principal = r.readString();
    String host = r.readString();
    byte operation = r.readByte();
    byte permission = r.readByte();
    if (name == null || principal == null || host == null) {
      throw new CorruptRecordException("ACL entry without resource name, principal or host");
    }
    return new AclEntry(resourceType, name, pattern, principal, host, operation, permission);
  }

  static <E> E enumOf(E[] values, int code, String what) {
    if (code < 0 || code >= values.length) {
      throw new CorruptRecordException("unknown " + what + " " + code);
    }
    return values[code];
  }

  public static void writeLongs(FieldWriter w, List<Long> values) {
    w.writeInt(values.size());
    for (long v : values) {
      w.writeLong(v);
    }
  }

  public static List<Long> readLongs(FieldReader r) {
    int n = r.readCount(8);
    List<Long> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(r.readLong());
    }
    return out;
  }

  public static void writeInts(FieldWriter w, List<Integer> values) {
    w.writeInt(values.size());
    for (int v : values) {
      w.writeInt(v);
    }
  }

  public static List<Integer> readInts(FieldReader r) {
    int n = r.readCount(4);
    List<Integer> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(r.readInt());
    }
    return out;
  }

  public static void writeRanges(FieldWriter w, List<StreamRange> ranges) {
    w.writeInt(ranges.size());
    for (StreamRange s : ranges) {
      w.writeLong(s.streamId()).writeLong(s.epoch()).writeLong(s.startOffset()).writeLong(s.endOffset());
    }
  }

  public static List<StreamRange> readRanges(FieldReader r) {
    int n = r.readCount(32);
    List<StreamRange> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      long id = r.readLong();
      long epoch = r.readLong();
      long start = r.readLong();
      long end = r.readLong();
      if (end < start) {
        throw new CorruptRecordException("range end " + end + " below start " + start + " for stream " + id);
      }
      out.add(new StreamRange(id, epoch, start, end));
    }
    return out;
  }
}
