package io.tidemark.metadata.controller;

import io.tidemark.metadata.record.FieldReader;
import io.tidemark.metadata.record.FieldWriter;
import io.tidemark.metadata.record.MetadataRecord.StorageObject;
import io.tidemark.metadata.record.MetadataRecord.Stream;
import io.tidemark.metadata.record.RecordCodec;
import io.tidemark.stream.metadata.ObjectMetadata;
import io.tidemark.stream.metadata.StreamMetadata;
import java.util.ArrayList;
import java.util.List;

/** Encodings of reply bodies shared by the controller and its client. Stateless. */
public final class ReplyBodies {
  private ReplyBodies() {}

  public static byte[] ofLong(long v) {
    return new FieldWriter(8).writeLong(v).toByteArray();
  }

  public static byte[] empty() {
    return new byte[0];
  }

  public static StreamMetadata toMetadata(Stream s) {
    return new StreamMetadata(s.streamId(), s.epoch(), s.startOffset(), s.endOffset(), s.state(), s.ownerNodeId(),
        s.tags());
  }

  public static ObjectMetadata toMetadata(StorageObject o) {
    return new ObjectMetadata(o.objectId(), o.sizeBytes(), o.kind(), o.ranges(), o.orderId(), o.committedAtMs());
  }

  public static byte[] ofStreams(List<StreamMetadata> streams) {
    FieldWriter w = new FieldWriter(streams.size() * 64 + 8);
    w.writeInt(streams.size());
    for (StreamMetadata s : streams) {
      writeStream(w, s);
    }
    return w.toByteArray();
  }

  public static byte[] ofStream(StreamMetadata s) {
    FieldWriter w = new FieldWriter(64);
    writeStream(w, s);
    return w.toByteArray();
  }

  private static void writeStream(FieldWriter w, StreamMetadata s) {
    w.writeLong(s.streamId()).writeLong(s.epoch()).writeLong(s.startOffset()).writeLong(s.endOffset())
        .writeByte(s.state().ordinal()).writeInt(s.ownerNodeId()).writeStringMap(s.tags());
  }

  public static StreamMetadata readStream(FieldReader r) {
    return new StreamMetadata(r.readLong(), r.readLong(), r.readLong(), r.readLong(),
        StreamMetadata.StreamState.values()[r.readByte()], r.readInt(), r.readStringMap());
  }

  public static List<StreamMetadata> readStreams(FieldReader r) {
    int n = r.readCount(37);
    List<StreamMetadata> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(readStream(r));
    }
    return out;
  }

  public static byte[] ofObjects(List<ObjectMetadata> objects) {
    FieldWriter w = new FieldWriter(objects.size() * 80 + 8);
    w.writeInt(objects.size());
    for (ObjectMetadata o : objects) {
      w.writeLong(o.objectId()).writeLong(o.sizeBytes()).writeByte(o.kind().ordinal()).writeLong(o.orderId())
          .writeLong(o.committedAtMs());
      RecordCodec.writeRanges(w, o.ranges());
    }
    return w.toByteArray();
  }

  public static List<ObjectMetadata> readObjects(FieldReader r) {
    int n = r.readCount(37);
    List<ObjectMetadata> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      long id = r.readLong();
      long size = r.readLong();
      ObjectMetadata.ObjectKind kind = ObjectMetadata.ObjectKind.values()[r.readByte()];
      long order = r.readLong();
      long at = r.readLong();
      out.add(new ObjectMetadata(id, size, kind, RecordCodec.readRanges(r), order, at));
    }
    return out;
  }
}
