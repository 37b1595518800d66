package io.tidemark.server.console;

import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.MetadataRecord.StorageObject;
import io.tidemark.stream.metadata.ObjectMetadata.ObjectKind;
import io.tidemark.stream.metadata.StreamRange;

/**
 * How many bytes of object storage a stream takes, from the committed objects in the metadata image:
 * a stream object counts whole; a stream-set object (the data of many streams in one object) counts
 * by the stream's share of the offsets it holds, an estimate, since the image keeps no byte size per
 * range. Data still only in the WAL is not counted. Pure.
 */
final class StoredBytes {

  /** Bytes and object count of one stream (or several, added up). */
  record Size(long bytes, int objects) {
    Size plus(Size o) {
      return new Size(bytes + o.bytes, objects + o.objects);
    }
  }

  static final Size NONE = new Size(0, 0);

  private StoredBytes() {}

  static Size of(MetadataImage image, long streamId) {
    if (image == null || streamId < 0) {
      return NONE;
    }
    long bytes = 0;
    int objects = 0;
    for (Long objectId : image.objectsOfStream(streamId).values()) {
      StorageObject o = image.object(objectId);
      if (o == null) {
        continue;
      }
      objects++;
      if (o.kind() == ObjectKind.STREAM || o.ranges().size() <= 1) {
        bytes += o.sizeBytes();
        continue;
      }
      long all = 0;
      long mine = 0;
      for (StreamRange r : o.ranges()) {
        long n = Math.max(0, r.endOffset() - r.startOffset());
        all += n;
        if (r.streamId() == streamId) {
          mine += n;
        }
      }
      bytes += all == 0 ? 0 : (long) ((double) o.sizeBytes() * mine / all);
    }
    return new Size(bytes, objects);
  }
}
