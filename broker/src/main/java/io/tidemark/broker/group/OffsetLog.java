package io.tidemark.broker.group;

import io.tidemark.broker.partition.PartitionException;
import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.partition.Partitions;
import io.tidemark.broker.protocol.ErrorMapping;
import io.tidemark.broker.record.KeyValue;
import io.tidemark.broker.record.RecordBatches;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Committed offsets and group metadata kept durably in the internal {@value #TOPIC} topic
 * (on streams, like any partition), so that a coordinator reopening the topic anywhere recovers
 * every group's offsets and membership. Three record kinds, told apart by the key's first short:
 * <ul>
 *   <li>offset commit (key type 1): key = (1, group, topic, partition), value = (version, offset,
 *       leader epoch, metadata, commit time) or null (tombstone: offset deleted);
 *   <li>classic group metadata (key type 2): key = (2, group), value = (version, {@link GroupMetadata})
 *       or null (tombstone: group deleted);
 *   <li>consumer group metadata (key type 3): key = (3, group), value = (version,
 *       {@link ConsumerGroupMetadata}) or null (tombstone).
 * </ul>
 * The newest group record of a group (either type) replaces the older ones.
 * A group lives in partition {@code abs(hash(group)) % partitions}. Stateless apart from its
 * views; callable from any thread.
 */
final class OffsetLog {

  private static final Logger LOG = LoggerFactory.getLogger(OffsetLog.class);

  static final String TOPIC = "__consumer_offsets";
  private static final short KEY_VERSION = 1;
  private static final short VALUE_VERSION = 1;
  private static final short GROUP_KEY_TYPE = 2;
  private static final short GROUP_VALUE_VERSION = 1;
  private static final short CONSUMER_GROUP_KEY_TYPE = 3;
  private static final short CONSUMER_GROUP_VALUE_VERSION = 1;

  /** A decoded record of either kind, or a transaction's offsets and its end marker. */
  sealed interface Loaded permits Entry, GroupEntry, TxnEntry, TxnMarker {}

  /** An offset commit written by a transaction (TxnOffsetCommit): visible only once its producer's COMMIT marker follows. */
  record TxnEntry(long producerId, Entry entry) implements Loaded {}

  /** The end of a producer's transaction in this partition. */
  record TxnMarker(long producerId, boolean commit) implements Loaded {}

  /** A decoded offset commit; {@code committed} null for a tombstone. */
  record Entry(String group, TopicPartition partition, ClassicGroup.Committed committed) implements Loaded {}

  /** A decoded group metadata record of either protocol; {@code metadata} null for a tombstone (group deleted). */
  record GroupEntry(String group, StoredGroup metadata) implements Loaded {}

  private final Partitions partitions;
  private final int partitionCount;
  private final Time time;

  OffsetLog(Partitions partitions, int partitionCount, Time time) {
    this.partitions = partitions;
    this.partitionCount = partitionCount;
    this.time = time;
  }

  int partitionFor(String group) {
    return partitionFor(group, partitionCount);
  }

  static int partitionFor(String group, int partitionCount) {
    return Math.floorMod(group.hashCode(), partitionCount);
  }

  CompletableFuture<Void> append(String group, List<byte[][]> records) {
    if (records.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    PartitionLog log;
    try {
      log = partitions.require(new TopicPartition(TOPIC, partitionFor(group)));
    } catch (PartitionException e) {
      return CompletableFuture.failedFuture(new GroupException(org.apache.kafka.common.protocol.Errors.COORDINATOR_NOT_AVAILABLE,
          "offsets partition for group " + group + " is not open: " + e.getMessage()));
    }
    try {
      return log.append(RecordBatches.internalBatch(time.milliseconds(), records)).thenApply(r -> null);
    } catch (RuntimeException e) { // a log closing under the write: the caller maps it to a coordinator error
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Appends a transaction's offset commits as a transactional batch of {@code producerId} (TxnOffsetCommit). */
  CompletableFuture<Void> appendTransactional(String group, long producerId, short producerEpoch, List<byte[][]> records) {
    PartitionLog log;
    try {
      log = partitions.require(new TopicPartition(TOPIC, partitionFor(group)));
    } catch (PartitionException e) {
      return CompletableFuture.failedFuture(new GroupException(org.apache.kafka.common.protocol.Errors.COORDINATOR_NOT_AVAILABLE,
          "offsets partition for group " + group + " is not open: " + e.getMessage()));
    }
    try {
      return log.append(RecordBatches.transactionalInternalBatch(time.milliseconds(), producerId, producerEpoch, records))
          .thenApply(r -> null);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** The coordinator error a client gets when an append to the offsets log failed. */
  static Errors toCoordinatorError(Throwable e) {
    Errors err = ErrorMapping.toErrors(e);
    return switch (err) {
      case NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR, UNKNOWN_TOPIC_OR_PARTITION -> Errors.COORDINATOR_NOT_AVAILABLE;
      case MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE -> Errors.INVALID_COMMIT_OFFSET_SIZE;
      default -> err == Errors.UNKNOWN_SERVER_ERROR ? Errors.COORDINATOR_NOT_AVAILABLE : err;
    };
  }

  static byte[][] commitRecord(String group, TopicPartition tp, ClassicGroup.Committed c) {
    return new byte[][] {key(group, tp), c == null ? null : value(c)};
  }

  private static byte[] key(String group, TopicPartition tp) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(buf)) {
      out.writeShort(KEY_VERSION);
      out.writeUTF(group);
      out.writeUTF(tp.topic());
      out.writeInt(tp.partition());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return buf.toByteArray();
  }

  private static byte[] value(ClassicGroup.Committed c) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(buf)) {
      out.writeShort(VALUE_VERSION);
      out.writeLong(c.offset());
      out.writeInt(c.leaderEpoch());
      out.writeUTF(c.metadata() == null ? "" : c.metadata());
      out.writeLong(c.commitTimestamp());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return buf.toByteArray();
  }

  /** A group metadata record of either protocol ({@code metadata} null: tombstone of the classic record's key). */
  static byte[][] groupRecord(String group, StoredGroup metadata) {
    byte[] key = groupKey(group, metadata instanceof ConsumerGroupMetadata ? CONSUMER_GROUP_KEY_TYPE : GROUP_KEY_TYPE);
    byte[] value = switch (metadata) {
      case null -> null;
      case GroupMetadata g -> groupValue(g);
      case ConsumerGroupMetadata c -> consumerGroupValue(c);
    };
    return new byte[][] {key, value};
  }

  /**
   * The records that delete a group: a tombstone for the key of each protocol, because the topic is
   * compacted. The cleaner keeps the latest record of every key, so a group that changed protocol
   * has a record under each key; once the tombstones expire, neither may be left to bring it back.
   */
  static List<byte[][]> groupTombstones(String group) {
    return List.of(new byte[][] {groupKey(group, GROUP_KEY_TYPE), null},
        new byte[][] {groupKey(group, CONSUMER_GROUP_KEY_TYPE), null});
  }

  private static byte[] groupKey(String group, short keyType) {
    ByteArrayOutputStream key = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(key)) {
      out.writeShort(keyType);
      out.writeUTF(group);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return key.toByteArray();
  }

  private static byte[] consumerGroupValue(ConsumerGroupMetadata g) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(buf)) {
      out.writeShort(CONSUMER_GROUP_VALUE_VERSION);
      out.writeInt(g.groupEpoch());
      out.writeInt(g.assignmentEpoch());
      writeNullable(out, g.assignorName());
      out.writeInt(g.subscribedTopics().size());
      for (Map.Entry<String, ConsumerGroup.TopicShape> t : new TreeMap<>(g.subscribedTopics()).entrySet()) {
        out.writeUTF(t.getKey());
        writeUuid(out, t.getValue().id());
        out.writeInt(t.getValue().partitions());
      }
      out.writeInt(g.members().size());
      for (ConsumerGroupMetadata.MemberState m : g.members()) {
        out.writeUTF(m.memberId());
        writeNullable(out, m.instanceId());
        writeNullable(out, m.rackId());
        writeNullable(out, m.clientId());
        writeNullable(out, m.clientHost());
        out.writeInt(m.rebalanceTimeoutMs());
        out.writeInt(m.subscribedTopicNames().size());
        for (String n : m.subscribedTopicNames()) {
          out.writeUTF(n);
        }
        writeNullable(out, m.subscribedTopicRegex());
        writeNullable(out, m.serverAssignor());
        out.writeInt(m.step().epoch());
        out.writeByte(m.step().state().ordinal());
        writeAssignment(out, m.step().assigned());
        writeAssignment(out, m.step().pendingRevocation());
        out.writeInt(m.previousEpoch());
        writeAssignment(out, m.target());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return buf.toByteArray();
  }

  private static ConsumerGroupMetadata readConsumerGroupValue(DataInputStream in) throws IOException {
    int groupEpoch = in.readInt();
    int assignmentEpoch = in.readInt();
    String assignorName = readNullable(in);
    int topicCount = readCount(in);
    Map<String, ConsumerGroup.TopicShape> topics = new TreeMap<>();
    for (int i = 0; i < topicCount; i++) {
      topics.put(in.readUTF(), new ConsumerGroup.TopicShape(readUuid(in), in.readInt()));
    }
    int count = readCount(in);
    List<ConsumerGroupMetadata.MemberState> members = new java.util.ArrayList<>();
    Reconciliation.State[] states = Reconciliation.State.values();
    for (int i = 0; i < count; i++) {
      String memberId = in.readUTF();
      String instanceId = readNullable(in);
      String rackId = readNullable(in);
      String clientId = readNullable(in);
      String clientHost = readNullable(in);
      int rebalanceTimeoutMs = in.readInt();
      int nameCount = readCount(in);
      List<String> names = new java.util.ArrayList<>();
      for (int j = 0; j < nameCount; j++) {
        names.add(in.readUTF());
      }
      String regex = readNullable(in);
      String serverAssignor = readNullable(in);
      int epoch = in.readInt();
      int state = in.readUnsignedByte();
      if (state >= states.length) {
        throw new IOException("unknown reconciliation state " + state + " of member " + memberId);
      }
      Reconciliation.Step step = new Reconciliation.Step(epoch, states[state], readAssignment(in), readAssignment(in));
      int previousEpoch = in.readInt();
      members.add(new ConsumerGroupMetadata.MemberState(memberId, instanceId, rackId, clientId, clientHost, rebalanceTimeoutMs,
          names, regex, serverAssignor, step, previousEpoch, readAssignment(in)));
    }
    return new ConsumerGroupMetadata(groupEpoch, assignmentEpoch, assignorName, topics, members);
  }

  private static void writeUuid(DataOutputStream out, Uuid id) throws IOException {
    out.writeLong(id.getMostSignificantBits());
    out.writeLong(id.getLeastSignificantBits());
  }

  private static Uuid readUuid(DataInputStream in) throws IOException {
    return new Uuid(in.readLong(), in.readLong());
  }

  private static void writeAssignment(DataOutputStream out, Assignment a) throws IOException {
    out.writeInt(a.partitions().size());
    for (Map.Entry<Uuid, java.util.SortedSet<Integer>> t : a.partitions().entrySet()) {
      writeUuid(out, t.getKey());
      out.writeInt(t.getValue().size());
      for (int p : t.getValue()) {
        out.writeInt(p);
      }
    }
  }

  private static Assignment readAssignment(DataInputStream in) throws IOException {
    int topics = readCount(in);
    Map<Uuid, List<Integer>> out = new TreeMap<>();
    for (int i = 0; i < topics; i++) {
      Uuid id = readUuid(in);
      int n = readCount(in);
      List<Integer> ps = new java.util.ArrayList<>();
      for (int j = 0; j < n; j++) {
        ps.add(in.readInt());
      }
      out.put(id, ps);
    }
    return Assignment.of(out);
  }

  private static byte[] groupValue(GroupMetadata g) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(buf)) {
      out.writeShort(GROUP_VALUE_VERSION);
      writeNullable(out, g.protocolType());
      writeNullable(out, g.protocolName());
      out.writeInt(g.generation());
      writeNullable(out, g.leaderId());
      out.writeInt(g.members().size());
      for (GroupMetadata.MemberMetadata m : g.members()) {
        out.writeUTF(m.memberId());
        writeNullable(out, m.groupInstanceId());
        writeNullable(out, m.clientId());
        writeNullable(out, m.clientHost());
        out.writeInt(m.rebalanceTimeoutMs());
        out.writeInt(m.sessionTimeoutMs());
        out.writeInt(m.protocols().size());
        for (Member.Protocol p : m.protocols()) {
          out.writeUTF(p.name());
          writeBytes(out, p.metadata());
        }
        writeBytes(out, m.assignment());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return buf.toByteArray();
  }

  private static GroupMetadata readGroupValue(DataInputStream in) throws IOException {
    String protocolType = readNullable(in);
    String protocolName = readNullable(in);
    int generation = in.readInt();
    String leaderId = readNullable(in);
    int count = readCount(in);
    List<GroupMetadata.MemberMetadata> members = new java.util.ArrayList<>();
    for (int i = 0; i < count; i++) {
      String memberId = in.readUTF();
      String instanceId = readNullable(in);
      String clientId = readNullable(in);
      String clientHost = readNullable(in);
      int rebalanceTimeoutMs = in.readInt();
      int sessionTimeoutMs = in.readInt();
      int protocolCount = readCount(in);
      List<Member.Protocol> protocols = new java.util.ArrayList<>();
      for (int j = 0; j < protocolCount; j++) {
        protocols.add(new Member.Protocol(in.readUTF(), readBytes(in)));
      }
      members.add(new GroupMetadata.MemberMetadata(memberId, instanceId, clientId, clientHost, rebalanceTimeoutMs,
          sessionTimeoutMs, protocols, readBytes(in)));
    }
    return new GroupMetadata(protocolType, protocolName, generation, leaderId, members);
  }

  private static void writeNullable(DataOutputStream out, String s) throws IOException {
    out.writeBoolean(s != null);
    if (s != null) {
      out.writeUTF(s);
    }
  }

  private static String readNullable(DataInputStream in) throws IOException {
    return in.readBoolean() ? in.readUTF() : null;
  }

  private static void writeBytes(DataOutputStream out, byte[] b) throws IOException {
    byte[] bytes = b == null ? new byte[0] : b;
    out.writeInt(bytes.length);
    out.write(bytes);
  }

  /** Reads a length-prefixed byte array; a length beyond what is left is corruption, not an allocation. */
  private static byte[] readBytes(DataInputStream in) throws IOException {
    byte[] b = new byte[readCount(in)];
    in.readFully(b);
    return b;
  }

  private static int readCount(DataInputStream in) throws IOException {
    int n = in.readInt();
    if (n < 0 || n > in.available()) {
      throw new IOException("length " + n + " is negative or beyond the " + in.available() + " bytes left");
    }
    return n;
  }

  static Loaded decode(KeyValue kv) {
    try (DataInputStream k = new DataInputStream(new ByteArrayInputStream(kv.key()))) {
      short type = k.readShort();
      if (type == GROUP_KEY_TYPE || type == CONSUMER_GROUP_KEY_TYPE) {
        return decodeGroup(type, k.readUTF(), kv.value());
      }
      if (type != KEY_VERSION) {
        return null;
      }
      String group = k.readUTF();
      TopicPartition tp = new TopicPartition(k.readUTF(), k.readInt());
      if (kv.value() == null) {
        return new Entry(group, tp, null);
      }
      try (DataInputStream v = new DataInputStream(new ByteArrayInputStream(kv.value()))) {
        if (v.readShort() != VALUE_VERSION) {
          return null;
        }
        return new Entry(group, tp, new ClassicGroup.Committed(v.readLong(), v.readInt(), v.readUTF(), v.readLong()));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("unreadable record in " + TOPIC + " at offset " + kv.offset(), e);
    }
  }

  private static GroupEntry decodeGroup(short type, String group, byte[] value) throws IOException {
    if (value == null) {
      return new GroupEntry(group, null);
    }
    try (DataInputStream v = new DataInputStream(new ByteArrayInputStream(value))) {
      short version = v.readShort();
      if (type == GROUP_KEY_TYPE) {
        return version == GROUP_VALUE_VERSION ? new GroupEntry(group, readGroupValue(v)) : null;
      }
      return version == CONSUMER_GROUP_VALUE_VERSION ? new GroupEntry(group, readConsumerGroupValue(v)) : null;
    }
  }

  /** Reads every partition of the topic from its start and hands each record, in order, to {@code sink}. */
  int partitionCount() {
    return partitionCount;
  }

  /** The partition of the offsets topic if it is open here. */
  java.util.Optional<PartitionLog> open(int partition) {
    return partitions.get(new TopicPartition(TOPIC, partition));
  }

  /** Replays every record of one partition of the offsets topic into {@code sink}, in offset order. */
  CompletableFuture<Void> load(PartitionLog log, java.util.function.Consumer<Loaded> sink) {
    return loadFrom(log, log.logStartOffset(), sink);
  }

  private CompletableFuture<Void> loadFrom(PartitionLog log, long from, java.util.function.Consumer<Loaded> sink) {
    if (from >= log.highWatermark()) {
      return CompletableFuture.completedFuture(null);
    }
    return log.readRecords(from, 1024 * 1024, true).thenCompose(page -> {
      for (KeyValue kv : page.records()) {
        if (kv.marker()) {
          sink.accept(new TxnMarker(kv.txnProducerId(), kv.committed()));
          continue;
        }
        Loaded e = decodeOrSkip(log, kv);
        if (e instanceof Entry entry && kv.txnProducerId() >= 0) {
          sink.accept(new TxnEntry(kv.txnProducerId(), entry));
        } else if (e != null) {
          sink.accept(e);
        }
      }
      long next = page.nextOffset();
      return next <= from ? CompletableFuture.completedFuture(null) : loadFrom(log, next, sink);
    });
  }

  /** A record that does not decode is logged and skipped: bad bytes must not stop the group coordinator. */
  private static Loaded decodeOrSkip(PartitionLog log, KeyValue kv) {
    try {
      return decode(kv);
    } catch (RuntimeException e) {
      LOG.warn("skipping unreadable record of topic {} partition {} at offset {}: {}", log.topicPartition().topic(),
          log.topicPartition().partition(), kv.offset(), e.getMessage());
      return null;
    }
  }

}
