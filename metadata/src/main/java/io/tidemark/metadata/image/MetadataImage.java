package io.tidemark.metadata.image;

import io.tidemark.metadata.record.MetadataRecord;
import io.tidemark.metadata.record.MetadataRecord.AccessControlEntry;
import io.tidemark.metadata.record.MetadataRecord.AclEntry;
import io.tidemark.metadata.record.MetadataRecord.BrokerFencing;
import io.tidemark.metadata.record.MetadataRecord.BrokerRegistration;
import io.tidemark.metadata.record.MetadataRecord.Config;
import io.tidemark.metadata.record.MetadataRecord.EndOffset;
import io.tidemark.metadata.record.MetadataRecord.IdKind;
import io.tidemark.metadata.record.MetadataRecord.KeyValue;
import io.tidemark.metadata.record.MetadataRecord.NextId;
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
import io.tidemark.metadata.record.ObjectState;
import io.tidemark.stream.metadata.ObjectMetadata.ObjectKind;
import io.tidemark.stream.metadata.StreamRange;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Everything the cluster agrees on, as of log offset {@link #offset()}: brokers, topics and
 * partitions, configs (client quotas among them), streams, objects and their indexes, id
 * allocators, the key-value space and the ACLs.
 *
 * <p>Immutable: every map is a {@link PersistentMap}, so an image can be handed to any thread, and
 * a new image shares every unchanged part with the previous one. The only way to get a new image
 * is {@link Builder#replay} of committed records, on the controller leader, on followers and when
 * loading a snapshot alike; {@link #toRecords()} writes an image back as the records that rebuild
 * it (the snapshot content).
 */
public final class MetadataImage {

  /** The image before any record: offset -1, nothing in it. */
  public static final MetadataImage EMPTY = new Builder(null).build(-1);

  private final long offset;
  private final PersistentMap<Integer, BrokerEntry> brokers;
  private final PersistentMap<UUID, Topic> topics;
  private final PersistentMap<String, UUID> topicIdsByName;
  private final PersistentMap<TopicPartitionKey, Partition> partitions;
  private final PersistentMap<String, Config> configs;
  private final PersistentMap<Long, Stream> streams;
  private final PersistentMap<Long, StorageObject> objects;
  private final PersistentMap<Long, PersistentMap<LongPair, Long>> objectsByStream;
  private final PersistentMap<Integer, PersistentMap<LongPair, Long>> streamSetObjectsByNode;
  private final PersistentMap<LongPair, Long> preparedByExpiry;
  private final PersistentMap<LongPair, Long> markedByTime;
  private final PersistentMap<String, KeyValue> keyValues;
  private final PersistentMap<String, MetadataRecord.UserScramCredential> scramCredentials;
  private final PersistentMap<AclEntry, AccessControlEntry> acls;
  private final long nextStreamId;
  private final long nextObjectId;
  private final long nextProducerId;

  private MetadataImage(Builder b, long offset) {
    this.offset = offset;
    this.brokers = b.brokers;
    this.topics = b.topics;
    this.topicIdsByName = b.topicIdsByName;
    this.partitions = b.partitions;
    this.configs = b.configs;
    this.streams = b.streams;
    this.objects = b.objects;
    this.objectsByStream = b.objectsByStream;
    this.streamSetObjectsByNode = b.streamSetObjectsByNode;
    this.preparedByExpiry = b.preparedByExpiry;
    this.markedByTime = b.markedByTime;
    this.keyValues = b.keyValues;
    this.scramCredentials = b.scramCredentials;
    this.acls = b.acls;
    this.nextStreamId = b.nextStreamId;
    this.nextObjectId = b.nextObjectId;
    this.nextProducerId = b.nextProducerId;
  }

  /** Key of a partition in the image. */
  public record TopicPartitionKey(UUID topicId, int partition) implements Comparable<TopicPartitionKey> {
    @Override
    public int compareTo(TopicPartitionKey o) {
      int c = topicId.compareTo(o.topicId);
      return c != 0 ? c : Integer.compare(partition, o.partition);
    }
  }

  /** The log offset of the last record batch replayed into this image (-1 when empty). */
  public long offset() {
    return offset;
  }

  public PersistentMap<Integer, BrokerEntry> brokers() {
    return brokers;
  }

  public BrokerEntry broker(int nodeId) {
    return brokers.get(nodeId);
  }

  public PersistentMap<UUID, Topic> topics() {
    return topics;
  }

  public Topic topicByName(String name) {
    UUID id = topicIdsByName.get(name);
    return id == null ? null : topics.get(id);
  }

  public Partition partition(UUID topicId, int partition) {
    return partitions.get(new TopicPartitionKey(topicId, partition));
  }

  public PersistentMap<TopicPartitionKey, Partition> partitions() {
    return partitions;
  }

  /** Every config value (persistent: an image that changed no config shares this map with its parent). */
  public PersistentMap<String, Config> configs() {
    return configs;
  }

  /** A config value, or null. */
  public String config(byte resourceType, String resourceName, String key) {
    Config c = configs.get(configKey(resourceType, resourceName, key));
    return c == null ? null : c.value();
  }

  /** Every config of one resource type (all resources, all keys), in key order. */
  public List<Config> configsOf(byte resourceType) {
    String prefix = resourceType + "\u0000";
    List<Config> out = new ArrayList<>();
    var it = configs.iteratorFrom(prefix);
    while (it.hasNext()) {
      var e = it.next();
      if (!e.getKey().startsWith(prefix)) {
        break;
      }
      out.add(e.getValue());
    }
    return out;
  }

  /** The ACLs (CreateAcls, DeleteAcls), keyed by the binding itself. */
  public PersistentMap<AclEntry, AccessControlEntry> acls() {
    return acls;
  }

  public PersistentMap<Long, Stream> streams() {
    return streams;
  }

  public Stream stream(long streamId) {
    return streams.get(streamId);
  }

  public PersistentMap<Long, StorageObject> objects() {
    return objects;
  }

  public StorageObject object(long objectId) {
    return objects.get(objectId);
  }

  /** Committed objects holding data of a stream, keyed by (range start offset, object id). */
  public PersistentMap<LongPair, Long> objectsOfStream(long streamId) {
    return objectsByStream.getOrDefault(streamId, PersistentMap.empty());
  }

  /** Committed stream-set objects of a node, keyed by (order id, object id). */
  public PersistentMap<LongPair, Long> streamSetObjectsOfNode(int nodeId) {
    return streamSetObjectsByNode.getOrDefault(nodeId, PersistentMap.empty());
  }

  /** Prepared objects keyed by (expiry time, object id). */
  public PersistentMap<LongPair, Long> preparedByExpiry() {
    return preparedByExpiry;
  }

  /** Objects marked for deletion keyed by (time marked, object id). */
  public PersistentMap<LongPair, Long> markedForDeletion() {
    return markedByTime;
  }

  public byte[] keyValue(String namespace, String key) {
    KeyValue kv = keyValues.get(kvKey(namespace, key));
    return kv == null ? null : kv.value();
  }

  public PersistentMap<String, KeyValue> keyValues() {
    return keyValues;
  }

  /** SCRAM credentials keyed by {@link #scramKey}. */
  public PersistentMap<String, MetadataRecord.UserScramCredential> scramCredentials() {
    return scramCredentials;
  }

  /** A user's SCRAM credential for a mechanism type, or null. */
  public MetadataRecord.UserScramCredential scramCredential(String user, byte mechanism) {
    return scramCredentials.get(scramKey(user, mechanism));
  }

  public static String scramKey(String user, byte mechanism) {
    return user + "\0" + mechanism;
  }

  public long nextStreamId() {
    return nextStreamId;
  }

  public long nextObjectId() {
    return nextObjectId;
  }

  public long nextProducerId() {
    return nextProducerId;
  }

  public Builder toBuilder() {
    return new Builder(this);
  }

  /**
   * The image that replaying {@code records} into an empty image gives, at {@code offset}. Records
   * in the canonical form of {@link #toRecords()} (a snapshot) are loaded in bulk; anything else
   * is replayed record by record.
   */
  public static MetadataImage fromRecords(List<MetadataRecord> records, long offset) {
    return ImageLoader.load(records, offset);
  }

  /**
   * The records that rebuild this image when replayed into an empty one, in a fixed order: equal
   * images give equal record lists.
   */
  public List<MetadataRecord> toRecords() {
    List<MetadataRecord> out = new ArrayList<>(objects.size() + streams.size() + 16);
    out.add(new NextId(IdKind.STREAM, nextStreamId));
    out.add(new NextId(IdKind.OBJECT, nextObjectId));
    out.add(new NextId(IdKind.PRODUCER_ID, nextProducerId));
    for (BrokerEntry b : brokers.values()) {
      out.add(b.registration());
      if (b.fenced()) {
        out.add(new BrokerFencing(b.nodeId(), b.nodeEpoch(), true));
      }
    }
    topics.values().forEach(out::add);
    partitions.values().forEach(out::add);
    configs.values().forEach(out::add);
    streams.values().forEach(out::add);
    objects.values().forEach(out::add);
    keyValues.values().forEach(out::add);
    scramCredentials.values().forEach(out::add);
    acls.values().forEach(out::add);
    return out;
  }

  /** Equal contents (offsets aside). */
  public boolean sameContentAs(MetadataImage o) {
    return toRecords().equals(o.toRecords());
  }

  @Override
  public String toString() {
    return "MetadataImage[offset=" + offset + ", brokers=" + brokers.size() + ", topics=" + topics.size()
        + ", streams=" + streams.size() + ", objects=" + objects.size() + ", kv=" + keyValues.size() + "]";
  }

  static String configKey(byte resourceType, String resourceName, String key) {
    return resourceType + "\u0000" + resourceName + "\u0000" + key;
  }

  static String kvKey(String namespace, String key) {
    return namespace + "\u0000" + key;
  }

  /**
   * Replays records onto an image. Not thread-safe: one owner (the state machine's apply thread,
   * or a snapshot loader) replays and then calls {@link #build}.
   */
  public static final class Builder {
    private PersistentMap<Integer, BrokerEntry> brokers;
    private PersistentMap<UUID, Topic> topics;
    private PersistentMap<String, UUID> topicIdsByName;
    private PersistentMap<TopicPartitionKey, Partition> partitions;
    private PersistentMap<String, Config> configs;
    private PersistentMap<Long, Stream> streams;
    private PersistentMap<Long, StorageObject> objects;
    private PersistentMap<Long, PersistentMap<LongPair, Long>> objectsByStream;
    private PersistentMap<Integer, PersistentMap<LongPair, Long>> streamSetObjectsByNode;
    private PersistentMap<LongPair, Long> preparedByExpiry;
    private PersistentMap<LongPair, Long> markedByTime;
    private PersistentMap<String, KeyValue> keyValues;
    private PersistentMap<String, MetadataRecord.UserScramCredential> scramCredentials;
    private PersistentMap<AclEntry, AccessControlEntry> acls;
    private long nextStreamId;
    private long nextObjectId;
    private long nextProducerId;

    private Builder(MetadataImage base) {
      if (base == null) {
        brokers = PersistentMap.empty();
        topics = PersistentMap.empty();
        topicIdsByName = PersistentMap.empty();
        partitions = PersistentMap.empty();
        configs = PersistentMap.empty();
        streams = PersistentMap.empty();
        objects = PersistentMap.empty();
        objectsByStream = PersistentMap.empty();
        streamSetObjectsByNode = PersistentMap.empty();
        preparedByExpiry = PersistentMap.empty();
        markedByTime = PersistentMap.empty();
        keyValues = PersistentMap.empty();
        scramCredentials = PersistentMap.empty();
        acls = PersistentMap.empty();
        return;
      }
      brokers = base.brokers;
      topics = base.topics;
      topicIdsByName = base.topicIdsByName;
      partitions = base.partitions;
      configs = base.configs;
      streams = base.streams;
      objects = base.objects;
      objectsByStream = base.objectsByStream;
      streamSetObjectsByNode = base.streamSetObjectsByNode;
      preparedByExpiry = base.preparedByExpiry;
      markedByTime = base.markedByTime;
      keyValues = base.keyValues;
      scramCredentials = base.scramCredentials;
      acls = base.acls;
      nextStreamId = base.nextStreamId;
      nextObjectId = base.nextObjectId;
      nextProducerId = base.nextProducerId;
    }

    /** Installs stream and object maps with their indexes built in bulk by {@link ImageLoader}. */
    void installBulk(PersistentMap<Long, Stream> streams, PersistentMap<Long, StorageObject> objects,
        PersistentMap<Long, PersistentMap<LongPair, Long>> objectsByStream,
        PersistentMap<Integer, PersistentMap<LongPair, Long>> streamSetObjectsByNode,
        PersistentMap<LongPair, Long> preparedByExpiry, PersistentMap<LongPair, Long> markedByTime) {
      this.streams = streams;
      this.objects = objects;
      this.objectsByStream = objectsByStream;
      this.streamSetObjectsByNode = streamSetObjectsByNode;
      this.preparedByExpiry = preparedByExpiry;
      this.markedByTime = markedByTime;
    }

    public MetadataImage build(long offset) {
      return new MetadataImage(this, offset);
    }

    /** Applies one record. The only code that changes metadata state. */
    public Builder replay(MetadataRecord record) {
      switch (record) {
        case BrokerRegistration r -> brokers = brokers.put(r.nodeId(), new BrokerEntry(r, false));
        case BrokerFencing r -> {
          BrokerEntry b = brokers.get(r.nodeId());
          if (b != null && b.nodeEpoch() == r.nodeEpoch()) {
            brokers = brokers.put(r.nodeId(), new BrokerEntry(b.registration(), r.fenced()));
          }
        }
        case Topic r -> {
          topics = topics.put(r.topicId(), r);
          topicIdsByName = topicIdsByName.put(r.name(), r.topicId());
        }
        case RemoveTopic r -> {
          Topic t = topics.get(r.topicId());
          if (t != null) {
            topics = topics.remove(r.topicId());
            topicIdsByName = topicIdsByName.remove(t.name());
            for (int p = 0; p < t.partitionCount(); p++) {
              partitions = partitions.remove(new TopicPartitionKey(t.topicId(), p));
            }
          }
        }
        case Partition r -> partitions = partitions.put(new TopicPartitionKey(r.topicId(), r.partition()), r);
        case Config r -> {
          String key = configKey(r.resourceType(), r.resourceName(), r.key());
          configs = r.value() == null ? configs.remove(key) : configs.put(key, r);
        }
        case Stream r -> streams = streams.put(r.streamId(), r);
        case StreamEndOffsets r -> {
          for (EndOffset e : r.offsets()) {
            Stream s = streams.get(e.streamId());
            if (s != null) {
              streams = streams.put(e.streamId(), s.withEndOffset(e.endOffset()));
            }
          }
        }
        case RemoveStream r -> streams = streams.remove(r.streamId());
        case StorageObject r -> {
          StorageObject old = objects.get(r.objectId());
          if (old != null) {
            unindex(old);
          }
          objects = objects.put(r.objectId(), r);
          index(r);
        }
        case RemoveObject r -> {
          StorageObject old = objects.get(r.objectId());
          if (old != null) {
            unindex(old);
            objects = objects.remove(r.objectId());
          }
        }
        case NextId r -> {
          switch (r.kind()) {
            case STREAM -> nextStreamId = r.nextId();
            case OBJECT -> nextObjectId = r.nextId();
            case PRODUCER_ID -> nextProducerId = r.nextId();
          }
        }
        case ProducerIdBlock r -> nextProducerId = Math.max(nextProducerId, r.firstProducerId() + r.size());
        case KeyValue r -> {
          String key = kvKey(r.namespace(), r.key());
          keyValues = r.value() == null ? keyValues.remove(key) : keyValues.put(key, r);
        }
        case MetadataRecord.UserScramCredential r -> scramCredentials = scramCredentials.put(scramKey(r.user(), r.mechanism()), r);
        case MetadataRecord.RemoveUserScramCredential r ->
            scramCredentials = scramCredentials.remove(scramKey(r.user(), r.mechanism()));
        case AccessControlEntry r -> acls = acls.put(r.entry(), r);
        case RemoveAccessControlEntry r -> acls = acls.remove(r.entry());
      }
      return this;
    }

    private void index(StorageObject o) {
      switch (o.state()) {
        case PREPARED -> preparedByExpiry = preparedByExpiry.put(new LongPair(o.expiresAtMs(), o.objectId()), o.objectId());
        case MARKED_FOR_DELETION -> markedByTime = markedByTime.put(new LongPair(o.markedAtMs(), o.objectId()), o.objectId());
        case COMMITTED -> {
          for (StreamRange r : o.ranges()) {
            PersistentMap<LongPair, Long> m = objectsByStream.getOrDefault(r.streamId(), PersistentMap.empty());
            objectsByStream = objectsByStream.put(r.streamId(), m.put(new LongPair(r.startOffset(), o.objectId()), o.objectId()));
          }
          if (o.kind() == ObjectKind.STREAM_SET) {
            PersistentMap<LongPair, Long> m = streamSetObjectsByNode.getOrDefault(o.nodeId(), PersistentMap.empty());
            streamSetObjectsByNode = streamSetObjectsByNode.put(o.nodeId(), m.put(new LongPair(o.orderId(), o.objectId()), o.objectId()));
          }
        }
      }
    }

    private void unindex(StorageObject o) {
      switch (o.state()) {
        case PREPARED -> preparedByExpiry = preparedByExpiry.remove(new LongPair(o.expiresAtMs(), o.objectId()));
        case MARKED_FOR_DELETION -> markedByTime = markedByTime.remove(new LongPair(o.markedAtMs(), o.objectId()));
        case COMMITTED -> {
          for (StreamRange r : o.ranges()) {
            PersistentMap<LongPair, Long> m = objectsByStream.get(r.streamId());
            if (m != null) {
              m = m.remove(new LongPair(r.startOffset(), o.objectId()));
              objectsByStream = m.isEmpty() ? objectsByStream.remove(r.streamId()) : objectsByStream.put(r.streamId(), m);
            }
          }
          if (o.kind() == ObjectKind.STREAM_SET) {
            PersistentMap<LongPair, Long> m = streamSetObjectsByNode.get(o.nodeId());
            if (m != null) {
              m = m.remove(new LongPair(o.orderId(), o.objectId()));
              streamSetObjectsByNode = m.isEmpty() ? streamSetObjectsByNode.remove(o.nodeId())
                  : streamSetObjectsByNode.put(o.nodeId(), m);
            }
          }
        }
      }
    }
  }
}
