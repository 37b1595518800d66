package io.tidemark.metadata.record;

import io.tidemark.stream.metadata.ObjectMetadata.ObjectKind;
import io.tidemark.stream.metadata.StreamMetadata.StreamState;
import io.tidemark.stream.metadata.StreamRange;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * One fact in the replicated metadata log. Records are the only input of
 * {@code MetadataImage.Builder.replay}; a snapshot is the image written back as records. Each
 * type has a stable id and a current version (see {@link RecordType}); the encoding rule is in
 * {@link RecordCodec}.
 */
public sealed interface MetadataRecord {

  RecordType type();

  /** Where a broker listens: a listener name, host and port. */
  record Endpoint(String name, String host, int port) {}

  /** A broker registered (or re-registered after a restart) with a new, higher node epoch. Version 2 added {@code rack}. */
  record BrokerRegistration(int nodeId, long nodeEpoch, List<Endpoint> endpoints, long registeredAtMs, String rack)
      implements MetadataRecord {
    public BrokerRegistration {
      endpoints = List.copyOf(endpoints);
      rack = rack == null ? "" : rack;
    }

    @Override
    public RecordType type() {
      return RecordType.BROKER_REGISTRATION;
    }
  }

  /** A broker (at {@code nodeEpoch}) was fenced after missing heartbeats, or unfenced on its next heartbeat. */
  record BrokerFencing(int nodeId, long nodeEpoch, boolean fenced) implements MetadataRecord {
    @Override
    public RecordType type() {
      return RecordType.BROKER_FENCING;
    }
  }

  record Topic(UUID topicId, String name, int partitionCount) implements MetadataRecord {
    @Override
    public RecordType type() {
      return RecordType.TOPIC;
    }
  }

  record RemoveTopic(UUID topicId) implements MetadataRecord {
    @Override
    public RecordType type() {
      return RecordType.REMOVE_TOPIC;
    }
  }

  /**
   * A partition's placement: its leader, leader epoch, the streams holding its data, its replica
   * assignment (the brokers that may lead it, preferred leader first; every replica reads the same
   * streams, so only the leader serves) and, while a reassignment runs, the assignment before it
   * ({@code previousReplicas}, empty otherwise). Version 2 added the two assignments; a version 1
   * record reads as replicas {@code [leader]} (none without a leader) and no reassignment.
   */
  record Partition(UUID topicId, int partition, int leaderNodeId, int leaderEpoch, List<Long> streamIds,
      List<Integer> replicas, List<Integer> previousReplicas) implements MetadataRecord {
    public Partition {
      streamIds = List.copyOf(streamIds);
      replicas = List.copyOf(replicas);
      previousReplicas = List.copyOf(previousReplicas);
    }

    /** A partition whose assignment is its leader alone (none without a leader), not being reassigned. */
    public Partition(UUID topicId, int partition, int leaderNodeId, int leaderEpoch, List<Long> streamIds) {
      this(topicId, partition, leaderNodeId, leaderEpoch, streamIds, leaderNodeId < 0 ? List.of() : List.of(leaderNodeId),
          List.of());
    }

    /** Whether a reassignment of this partition is in progress. */
    public boolean reassigning() {
      return !previousReplicas.isEmpty();
    }

    /** The same partition led by {@code node} from {@code epoch} on, with the given assignments. */
    public Partition with(int node, int epoch, List<Integer> newReplicas, List<Integer> newPrevious) {
      return new Partition(topicId, partition, node, epoch, streamIds, newReplicas, newPrevious);
    }

    @Override
    public RecordType type() {
      return RecordType.PARTITION;
    }
  }

  /**
   * A configuration value of a resource (cluster, broker, topic, client quota entity); a null value
   * removes it.
   */
  record Config(byte resourceType, String resourceName, String key, String value) implements MetadataRecord {
    /**
     * The resource type of client quotas: the name is the quota entity as the broker encodes it
     * (user, client id, ip; see the broker's {@code quota} package), the key a quota name such as
     * {@code producer_byte_rate}, the value a number.
     */
    public static final byte CLIENT_QUOTA = 64;

    @Override
    public RecordType type() {
      return RecordType.CONFIG;
    }
  }

  /** One open of a stream: from {@code startOffset}, written by {@code nodeId} under {@code epoch}. */
  record OwnerRange(long epoch, int nodeId, long startOffset) {}

  /** A stream's full state (written on create, open, close and trim). */
  record Stream(
      long streamId,
      long epoch,
      long startOffset,
      long endOffset,
      StreamState state,
      int ownerNodeId,
      List<OwnerRange> ranges,
      Map<String, String> tags) implements MetadataRecord {
    public Stream {
      ranges = List.copyOf(ranges);
      tags = java.util.Collections.unmodifiableMap(new TreeMap<>(tags));
    }

    @Override
    public RecordType type() {
      return RecordType.STREAM;
    }

    public Stream withEndOffset(long newEnd) {
      return new Stream(streamId, epoch, startOffset, newEnd, state, ownerNodeId, ranges, tags);
    }
  }

  /** New end offsets of many streams after one upload (one record instead of one per stream). */
  record StreamEndOffsets(List<EndOffset> offsets) implements MetadataRecord {
    public StreamEndOffsets {
      offsets = List.copyOf(offsets);
    }

    @Override
    public RecordType type() {
      return RecordType.STREAM_END_OFFSETS;
    }
  }

  record EndOffset(long streamId, long endOffset) {}

  record RemoveStream(long streamId) implements MetadataRecord {
    @Override
    public RecordType type() {
      return RecordType.REMOVE_STREAM;
    }
  }

  /**
   * An object's full state. {@code kind} and {@code ranges} are meaningful once committed;
   * {@code orderId} orders a node's stream-set objects.
   */
  record StorageObject(
      long objectId,
      ObjectState state,
      ObjectKind kind,
      int nodeId,
      long sizeBytes,
      long preparedAtMs,
      long expiresAtMs,
      long committedAtMs,
      long markedAtMs,
      long orderId,
      List<StreamRange> ranges) implements MetadataRecord {
    public StorageObject {
      ranges = List.copyOf(ranges);
    }

    @Override
    public RecordType type() {
      return RecordType.STORAGE_OBJECT;
    }

    /** The range of {@code streamId} in this object, or null. */
    public StreamRange rangeOf(long streamId) {
      for (StreamRange r : ranges) {
        if (r.streamId() == streamId) {
          return r;
        }
      }
      return null;
    }

    public StorageObject marked(long atMs) {
      return new StorageObject(objectId, ObjectState.MARKED_FOR_DELETION, kind, nodeId, sizeBytes, preparedAtMs,
          expiresAtMs, committedAtMs, atMs, orderId, ranges);
    }
  }

  /** The object was physically deleted by the controller leader; it leaves the metadata. */
  record RemoveObject(long objectId) implements MetadataRecord {
    @Override
    public RecordType type() {
      return RecordType.REMOVE_OBJECT;
    }
  }

  /** What an id allocator hands out. */
  enum IdKind {
    STREAM,
    OBJECT,
    PRODUCER_ID
  }

  /** The next id an allocator hands out. */
  record NextId(IdKind kind, long nextId) implements MetadataRecord {
    @Override
    public RecordType type() {
      return RecordType.NEXT_ID;
    }
  }

  /** A block of producer ids {@code [firstProducerId, firstProducerId + size)} given to a broker. */
  record ProducerIdBlock(int nodeId, long firstProducerId, int size) implements MetadataRecord {
    @Override
    public RecordType type() {
      return RecordType.PRODUCER_ID_BLOCK;
    }
  }

  /** A value in a namespaced key-value space; a null value removes the key. */
  record KeyValue(String namespace, String key, byte[] value) implements MetadataRecord {
    @Override
    public RecordType type() {
      return RecordType.KEY_VALUE;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof KeyValue kv && kv.namespace.equals(namespace) && kv.key.equals(key)
          && Arrays.equals(kv.value, value);
    }

    @Override
    public int hashCode() {
      return (namespace.hashCode() * 31 + key.hashCode()) * 31 + Arrays.hashCode(value);
    }

    @Override
    public String toString() {
      return "KeyValue[" + namespace + "/" + key + "=" + (value == null ? "null" : value.length + " bytes") + "]";
    }
  }

  /**
   * A user's salted SCRAM credential for one mechanism (Kafka's type byte: 1 SCRAM-SHA-256, 2
   * SCRAM-SHA-512): salt, stored key, server key and iterations, never the password. Replaces the
   * user's earlier credential for that mechanism.
   */
  record UserScramCredential(String user, byte mechanism, byte[] salt, byte[] storedKey, byte[] serverKey, int iterations)
      implements MetadataRecord {
    @Override
    public RecordType type() {
      return RecordType.USER_SCRAM_CREDENTIAL;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof UserScramCredential c && c.user.equals(user) && c.mechanism == mechanism
          && Arrays.equals(c.salt, salt) && Arrays.equals(c.storedKey, storedKey) && Arrays.equals(c.serverKey, serverKey)
          && c.iterations == iterations;
    }

    @Override
    public int hashCode() {
      return (user.hashCode() * 31 + mechanism) * 31 + Arrays.hashCode(storedKey);
    }

    @Override
    public String toString() {
      return "UserScramCredential[" + user + ", mechanism " + mechanism + ", " + iterations + " iterations]";
    }
  }

  /** Removes a user's SCRAM credential for one mechanism. */
  record RemoveUserScramCredential(String user, byte mechanism) implements MetadataRecord {
    @Override
    public RecordType type() {
      return RecordType.REMOVE_USER_SCRAM_CREDENTIAL;
    }
  }

  /**
   * One access control entry (a Kafka ACL binding) with Kafka's codes for the resource type,
   * pattern type, operation and permission ({@code org.apache.kafka.common.acl} and
   * {@code resource}). The entry is its own identity: the same binding twice is one entry.
   */
  record AclEntry(byte resourceType, String resourceName, byte patternType, String principal, String host,
      byte operation, byte permission) implements Comparable<AclEntry> {
    public AclEntry {
      java.util.Objects.requireNonNull(resourceName, "resourceName");
      java.util.Objects.requireNonNull(principal, "principal");
      java.util.Objects.requireNonNull(host, "host");
    }

    @Override
    public int compareTo(AclEntry o) {
      int c = Byte.compare(resourceType, o.resourceType);
      c = c != 0 ? c : resourceName.compareTo(o.resourceName);
      c = c != 0 ? c : Byte.compare(patternType, o.patternType);
      c = c != 0 ? c : principal.compareTo(o.principal);
      c = c != 0 ? c : host.compareTo(o.host);
      c = c != 0 ? c : Byte.compare(operation, o.operation);
      return c != 0 ? c : Byte.compare(permission, o.permission);
    }
  }

  /** An ACL was added (CreateAcls). */
  record AccessControlEntry(AclEntry entry) implements MetadataRecord {
    @Override
    public RecordType type() {
      return RecordType.ACCESS_CONTROL_ENTRY;
    }
  }

  /** An ACL was removed (DeleteAcls). */
  record RemoveAccessControlEntry(AclEntry entry) implements MetadataRecord {
    @Override
    public RecordType type() {
      return RecordType.REMOVE_ACCESS_CONTROL_ENTRY;
    }
  }
}
