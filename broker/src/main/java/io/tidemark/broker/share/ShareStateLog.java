package io.tidemark.broker.share;

import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.partition.Partitions;
import io.tidemark.broker.record.KeyValue;
import io.tidemark.broker.record.RecordBatches;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The durable share-partition state: the internal topic {@value #TOPIC} (on streams like any
 * partition), where each record is the whole state of one share partition after a change
 * (key: group, topic id, partition; value: state epoch, leader epoch, and SPSO with the window's
 * runs of state and delivery count, or no snapshot once deleted). The newest record of a key
 * wins. A share partition's record goes to partition {@code abs(hash("group:topicId:partition")) %
 * partitions}, as Kafka places share-coordinator state.
 *
 * <p>Reading a state partition replays it whole into a map of the newest state per key; the map
 * is kept for as long as the same {@link PartitionLog} instance stays open here (a partition that
 * moved away and back, or reopened after a restart, is replayed again; so is one whose append
 * failed, so that nothing not durable is served). Not thread-safe: used only by the thread of
 * {@link ShareCoordinator}; the futures it returns complete on other threads and carry plain
 * values.
 */
final class ShareStateLog {

  private static final Logger LOG = LoggerFactory.getLogger(ShareStateLog.class);

  static final String TOPIC = "__share_group_state";
  private static final short KEY_TYPE = 1;
  private static final short VALUE_VERSION_1 = 1;
  private static final short VALUE_VERSION = 2;

  /**
   * The stored state of one share partition: its state epoch (bumped by each initialisation, so a
   * partition leader holding an older state is fenced), the highest leader epoch of the data
   * partition that read or wrote it (older leaders are fenced), and the snapshot; null after the
   * share partition was deleted (the epochs stay, so a deleted state cannot come back from a stale
   * leader).
   */
  record Stored(int stateEpoch, int leaderEpoch, SharePartition.Snapshot snapshot) {}

  /** A replayed state partition: the log instance it was read from and the newest state per key. */
  record Loaded(PartitionLog log, Map<ShareKey, Stored> snapshots) {}

  private final Partitions partitions;
  private final int partitionCount;
  private final Time time;
  private final Map<Integer, Loaded> loaded = new HashMap<>();

  ShareStateLog(Partitions partitions, int partitionCount, Time time) {
    this.partitions = partitions;
    this.partitionCount = partitionCount;
    this.time = time;
  }

  int partitionFor(ShareKey key) {
    return Math.floorMod(key.toString().hashCode(), partitionCount);
  }

  /** The open state partition of {@code key}, or NOT_COORDINATOR when it is not led here. */
  private PartitionLog open(int partition) {
    Optional<PartitionLog> log = partitions.get(new TopicPartition(TOPIC, partition));
    if (log.isEmpty()) {
      throw Errors.NOT_COORDINATOR.exception("the share-group state partition " + TOPIC + "-" + partition + " is not led by this broker");
    }
    return log.get();
  }

  /** The replayed state partition if it is current; null when it must be (re)loaded first. */
  Loaded current(int partition) {
    PartitionLog log = open(partition);
    Loaded l = loaded.get(partition);
    return l != null && l.log() == log ? l : null;
  }

  /** Replays the state partition of {@code key} (the caller installs the result with {@link #install}). */
  CompletableFuture<Loaded> read(int partition) {
    PartitionLog log;
    try {
      log = open(partition);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    Map<ShareKey, Stored> out = new HashMap<>();
    return readFrom(log, log.logStartOffset(), out).thenApply(x -> new Loaded(log, out));
  }

  /** Keeps a replayed partition, unless a newer instance of it was installed meanwhile. */
  Loaded install(int partition, Loaded l) {
    Loaded have = loaded.get(partition);
    if (have != null && have.log() == l.log()) {
      return have;
    }
    loaded.put(partition, l);
    return l;
  }

  /** Forgets replayed partitions that are no longer open here. */
  void forgetClosed() {
    loaded.entrySet().removeIf(e -> partitions.get(new TopicPartition(TOPIC, e.getKey())).orElse(null) != e.getValue().log());
  }

  /** Forgets the replayed state of {@code partition} (an append to it failed). */
  void forget(int partition) {
    loaded.remove(partition);
  }

  /** The current state of {@code key} in its replayed partition (call {@link #current} first); null when it has none. */
  Stored get(Loaded l, ShareKey key) {
    return l.snapshots().get(key);
  }

  /**
   * Appends the new state of {@code key} and records it in the replayed map at once, so later
   * operations here see it; the future completes when the record is durable. After a failed
   * append the caller {@link #forget}s the partition, so it is replayed from what is durable.
   */
  CompletableFuture<Void> write(ShareKey key, Stored stored) {
    int p = partitionFor(key);
    PartitionLog log;
    try {
      log = open(p);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    Loaded l = loaded.get(p);
    if (l != null && l.log() == log) {
      l.snapshots().put(key, stored);
    }
    byte[][] kv = new byte[][] {key(key), value(stored)};
    return log.append(RecordBatches.internalBatch(time.milliseconds(), List.<byte[][]>of(kv))).thenApply(r -> null);
  }

  private CompletableFuture<Void> readFrom(PartitionLog log, long from, Map<ShareKey, Stored> out) {
    if (from >= log.highWatermark()) {
      return CompletableFuture.completedFuture(null);
    }
    return log.readRecords(from, 1024 * 1024).thenCompose(page -> {
      for (KeyValue kv : page.records()) {
        try {
          ShareKey k = decodeKey(kv.key());
          if (k == null) {
            continue;
          }
          if (kv.value() == null) {
            out.remove(k);
          } else {
            Stored s = decodeValue(kv.value());
            if (s != null) {
              out.put(k, s);
            }
          }
        } catch (IOException | RuntimeException e) {
          LOG.warn("skipping unreadable record of {} at offset {}: {}", log.topicPartition(), kv.offset(), e.toString());
        }
      }
      long next = page.nextOffset();
      return next <= from ? CompletableFuture.completedFuture(null) : readFrom(log, next, out);
    });
  }

  static byte[] key(ShareKey k) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(buf)) {
      out.writeShort(KEY_TYPE);
      out.writeUTF(k.group());
      out.writeLong(k.topicId().getMostSignificantBits());
      out.writeLong(k.topicId().getLeastSignificantBits());
      out.writeInt(k.partition());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return buf.toByteArray();
  }

  static byte[] value(Stored stored) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(buf)) {
      out.writeShort(VALUE_VERSION);
      out.writeInt(stored.stateEpoch());
      out.writeInt(stored.leaderEpoch());
      out.writeBoolean(stored.snapshot() != null);
      if (stored.snapshot() == null) {
        return buf.toByteArray();
      }
      SharePartition.Snapshot s = stored.snapshot();
      out.writeLong(s.startOffset());
      out.writeInt(s.runs().size());
      for (SharePartition.StateRun r : s.runs()) {
        out.writeLong(r.firstOffset());
        out.writeLong(r.lastOffset());
        out.writeByte(r.state().id);
        out.writeShort(r.deliveryCount());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return buf.toByteArray();
  }

  static ShareKey decodeKey(byte[] key) throws IOException {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(key))) {
      if (in.readShort() != KEY_TYPE) {
        return null;
      }
      return new ShareKey(in.readUTF(), new Uuid(in.readLong(), in.readLong()), in.readInt());
    }
  }

  /** A stored state; version 1 records (single node, before epochs) read as state epoch 1 and no leader epoch. */
  static Stored decodeValue(byte[] value) throws IOException {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(value))) {
      short version = in.readShort();
      if (version != VALUE_VERSION && version != VALUE_VERSION_1) {
        return null;
      }
      int stateEpoch = 1;
      int leaderEpoch = -1;
      if (version == VALUE_VERSION) {
        stateEpoch = in.readInt();
        leaderEpoch = in.readInt();
        if (!in.readBoolean()) {
          return new Stored(stateEpoch, leaderEpoch, null);
        }
      }
      long start = in.readLong();
      int n = in.readInt();
      if (n < 0 || n > in.available() / 19) {
        throw new IOException("run count " + n + " does not fit the " + in.available() + " bytes left");
      }
      List<SharePartition.StateRun> runs = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        long first = in.readLong();
        long last = in.readLong();
        if (last < first || last - first > 1_000_000) {
          throw new IOException("bad run [" + first + ", " + last + "]");
        }
        runs.add(new SharePartition.StateRun(first, last, SharePartition.RecordState.of(in.readByte()), in.readShort()));
      }
      return new Stored(stateEpoch, leaderEpoch, new SharePartition.Snapshot(start, runs));
    }
  }
}
