package io.tidemark.stream.metadata;

import io.tidemark.stream.metadata.MetadataRecord.NodeRegistered;
import io.tidemark.stream.metadata.MetadataRecord.ObjectCommitted;
import io.tidemark.stream.metadata.MetadataRecord.ObjectsDeleted;
import io.tidemark.stream.metadata.MetadataRecord.ObjectsMarkedForDeletion;
import io.tidemark.stream.metadata.MetadataRecord.ObjectsPrepared;
import io.tidemark.stream.metadata.MetadataRecord.StreamClosed;
import io.tidemark.stream.metadata.MetadataRecord.StreamCreated;
import io.tidemark.stream.metadata.MetadataRecord.StreamDeleted;
import io.tidemark.stream.metadata.MetadataRecord.StreamEndAdvanced;
import io.tidemark.stream.metadata.MetadataRecord.StreamOpened;
import io.tidemark.stream.metadata.MetadataRecord.StreamTrimmed;
import io.tidemark.stream.metadata.ObjectMetadata.ObjectKind;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Binary form of a group of {@link MetadataRecord}s (one journal frame): count, then type byte + fields. Stateless. */
final class MetadataRecordCodec {

  private MetadataRecordCodec() {}

  static byte[] encode(List<MetadataRecord> records) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(records.size());
      for (MetadataRecord record : records) {
        write(out, record);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  static List<MetadataRecord> decode(byte[] frame) throws IOException {
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(frame));
    int count = in.readInt();
    if (count < 0 || count > frame.length) {
      throw new IOException("invalid record count " + count);
    }
    List<MetadataRecord> records = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      records.add(read(in));
    }
    if (in.available() != 0) {
      throw new IOException(in.available() + " trailing bytes after " + count + " records");
    }
    return records;
  }

  private static void write(DataOutputStream out, MetadataRecord record) throws IOException {
    switch (record) {
      case NodeRegistered r -> {
        out.writeByte(1);
        out.writeInt(r.nodeId());
        out.writeLong(r.nodeEpoch());
      }
      case StreamCreated r -> {
        out.writeByte(2);
        out.writeLong(r.streamId());
        out.writeInt(r.tags().size());
        for (Map.Entry<String, String> e : r.tags().entrySet()) {
          out.writeUTF(e.getKey());
          out.writeUTF(e.getValue());
        }
      }
      case StreamOpened r -> {
        out.writeByte(3);
        out.writeLong(r.streamId());
        out.writeLong(r.epoch());
        out.writeInt(r.nodeId());
      }
      case StreamClosed r -> {
        out.writeByte(4);
        out.writeLong(r.streamId());
      }
      case StreamTrimmed r -> {
        out.writeByte(5);
        out.writeLong(r.streamId());
        out.writeLong(r.startOffset());
      }
      case StreamDeleted r -> {
        out.writeByte(6);
        out.writeLong(r.streamId());
      }
      case StreamEndAdvanced r -> {
        out.writeByte(7);
        out.writeLong(r.streamId());
        out.writeLong(r.endOffset());
      }
      case ObjectsPrepared r -> {
        out.writeByte(8);
        out.writeLong(r.firstObjectId());
        out.writeInt(r.count());
        out.writeInt(r.nodeId());
        out.writeLong(r.expiresAtMs());
      }
      case ObjectCommitted r -> {
        out.writeByte(9);
        out.writeLong(r.objectId());
        out.writeLong(r.sizeBytes());
        out.writeByte(r.kind().ordinal());
        out.writeInt(r.nodeId());
        out.writeInt(r.ranges().size());
        for (StreamRange range : r.ranges()) {
          out.writeLong(range.streamId());
          out.writeLong(range.epoch());
          out.writeLong(range.startOffset());
          out.writeLong(range.endOffset());
        }
        out.writeLong(r.orderId());
        out.writeLong(r.committedAtMs());
      }
      case ObjectsMarkedForDeletion r -> {
        out.writeByte(10);
        writeIds(out, r.objectIds());
        out.writeLong(r.markedAtMs());
      }
      case ObjectsDeleted r -> {
        out.writeByte(11);
        writeIds(out, r.objectIds());
      }
      case MetadataRecord.IdsReserved r -> {
        out.writeByte(12);
        out.writeLong(r.nextStreamId());
        out.writeLong(r.nextObjectId());
      }
    }
  }

  private static MetadataRecord read(DataInputStream in) throws IOException {
    int type = in.readByte();
    return switch (type) {
      case 1 -> new NodeRegistered(in.readInt(), in.readLong());
      case 2 -> {
        long id = in.readLong();
        int n = in.readInt();
        Map<String, String> tags = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
          tags.put(in.readUTF(), in.readUTF());
        }
        yield new StreamCreated(id, tags);
      }
      case 3 -> new StreamOpened(in.readLong(), in.readLong(), in.readInt());
      case 4 -> new StreamClosed(in.readLong());
      case 5 -> new StreamTrimmed(in.readLong(), in.readLong());
      case 6 -> new StreamDeleted(in.readLong());
      case 7 -> new StreamEndAdvanced(in.readLong(), in.readLong());
      case 8 -> new ObjectsPrepared(in.readLong(), in.readInt(), in.readInt(), in.readLong());
      case 9 -> {
        long id = in.readLong();
        long size = in.readLong();
        ObjectKind kind = ObjectKind.values()[in.readByte()];
        int node = in.readInt();
        int n = in.readInt();
        List<StreamRange> ranges = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          ranges.add(new StreamRange(in.readLong(), in.readLong(), in.readLong(), in.readLong()));
        }
        yield new ObjectCommitted(id, size, kind, node, ranges, in.readLong(), in.readLong());
      }
      case 10 -> new ObjectsMarkedForDeletion(readIds(in), in.readLong());
      case 11 -> new ObjectsDeleted(readIds(in));
      case 12 -> new MetadataRecord.IdsReserved(in.readLong(), in.readLong());
      default -> throw new IOException("unknown metadata record type " + type);
    };
  }

  private static void writeIds(DataOutputStream out, List<Long> ids) throws IOException {
    out.writeInt(ids.size());
    for (long id : ids) {
      out.writeLong(id);
    }
  }

  private static List<Long> readIds(DataInputStream in) throws IOException {
    int n = in.readInt();
    List<Long> ids = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      ids.add(in.readLong());
    }
    return ids;
  }
}
