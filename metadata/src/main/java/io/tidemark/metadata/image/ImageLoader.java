package io.tidemark.metadata.image;

import io.tidemark.metadata.record.MetadataRecord;
import io.tidemark.metadata.record.MetadataRecord.RemoveObject;
import io.tidemark.metadata.record.MetadataRecord.RemoveStream;
import io.tidemark.metadata.record.MetadataRecord.StorageObject;
import io.tidemark.metadata.record.MetadataRecord.Stream;
import io.tidemark.metadata.record.MetadataRecord.StreamEndOffsets;
import io.tidemark.stream.metadata.ObjectMetadata.ObjectKind;
import io.tidemark.stream.metadata.StreamRange;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Builds an image from a whole record list (a snapshot) at once. Streams and objects, the bulk of
 * any image, and the object indexes go into {@link PersistentMap.BulkBuilder}s and are built in
 * one pass each instead of one path-copying insert per record and index; the few other records
 * (brokers, topics, configs, key-values, id allocators) are replayed as usual. Only a list in which
 * every stream and object appears once and nothing removes or changes them (the form of
 * {@link MetadataImage#toRecords()}) takes this path; any other list is replayed record by record,
 * so the result always equals replaying the records in order. Stateless.
 */
final class ImageLoader {
  private ImageLoader() {}

  /** Thrown internally when the records are not in snapshot form; the caller replays them instead. */
  private static final class NotCanonical extends RuntimeException {
    NotCanonical(String why) {
      super(why, null, false, false);
    }
  }

  static MetadataImage load(List<MetadataRecord> records, long offset) {
    try {
      return bulk(records, offset);
    } catch (NotCanonical | IllegalArgumentException e) {
      MetadataImage.Builder b = MetadataImage.EMPTY.toBuilder();
      for (MetadataRecord r : records) {
        b.replay(r);
      }
      return b.build(offset);
    }
  }

  private static MetadataImage bulk(List<MetadataRecord> records, long offset) {
    MetadataImage.Builder b = MetadataImage.EMPTY.toBuilder();
    PersistentMap.BulkBuilder<Long, Stream> streams = new PersistentMap.BulkBuilder<>();
    PersistentMap.BulkBuilder<Long, StorageObject> objects = new PersistentMap.BulkBuilder<>();
    PersistentMap.BulkBuilder<LongPair, Long> prepared = new PersistentMap.BulkBuilder<>();
    PersistentMap.BulkBuilder<LongPair, Long> marked = new PersistentMap.BulkBuilder<>();
    Map<Long, PersistentMap.BulkBuilder<LongPair, Long>> byStream = new TreeMap<>();
    Map<Integer, PersistentMap.BulkBuilder<LongPair, Long>> byNode = new TreeMap<>();
    for (MetadataRecord record : records) {
      switch (record) {
        case Stream s -> streams.add(s.streamId(), s);
        case StorageObject o -> {
          objects.add(o.objectId(), o);
          switch (o.state()) {
            case PREPARED -> prepared.add(new LongPair(o.expiresAtMs(), o.objectId()), o.objectId());
            case MARKED_FOR_DELETION -> marked.add(new LongPair(o.markedAtMs(), o.objectId()), o.objectId());
            case COMMITTED -> {
              for (StreamRange r : o.ranges()) {
                byStream.computeIfAbsent(r.streamId(), k -> new PersistentMap.BulkBuilder<>())
                    .add(new LongPair(r.startOffset(), o.objectId()), o.objectId());
              }
              if (o.kind() == ObjectKind.STREAM_SET) {
                byNode.computeIfAbsent(o.nodeId(), k -> new PersistentMap.BulkBuilder<>())
                    .add(new LongPair(o.orderId(), o.objectId()), o.objectId());
              }
            }
          }
        }
        case StreamEndOffsets r -> throw new NotCanonical("end offsets change a stream");
        case RemoveStream r -> throw new NotCanonical("a stream is removed");
        case RemoveObject r -> throw new NotCanonical("an object is removed");
        default -> b.replay(record); // touches neither streams nor objects
      }
    }
    b.installBulk(streams.build(), objects.build(), nested(byStream), nested(byNode), prepared.build(),
        marked.build());
    return b.build(offset);
  }

  private static <K extends Comparable<K>> PersistentMap<K, PersistentMap<LongPair, Long>> nested(
      Map<K, PersistentMap.BulkBuilder<LongPair, Long>> sorted) {
    PersistentMap.BulkBuilder<K, PersistentMap<LongPair, Long>> outer = new PersistentMap.BulkBuilder<>();
    sorted.forEach((k, inner) -> outer.add(k, inner.build()));
    return outer.build();
  }
}
