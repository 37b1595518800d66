package io.tidemark.broker.group;

import io.tidemark.broker.partition.PartitionException;
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
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;

/**
 * Committed offsets kept durably in the internal {@value #TOPIC} topic (on streams, like any
 * partition), so that a coordinator reopening the topic anywhere recovers every group's offsets.
 * Records: key = (version, group, topic, partition), value = (offset, leader epoch, metadata,
 * commit time) or null (tombstone: offset deleted). A group lives in partition
 * {@code abs(hash(group)) % partitions}. Stateless apart from its views; callable from any thread.
 */
final class OffsetLog {

  static final String TOPIC = "__consumer_offsets";
  private static final short KEY_VERSION = 1;
  private static final short VALUE_VERSION = 1;

  /** A decoded record. */
  record Entry(String group, TopicPartition partition, ClassicGroup.Committed committed) {}

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
    return log.append(RecordBatches.internalBatch(time.milliseconds(), records)).thenApply(r -> null);
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

  static Entry decode(KeyValue kv) {
    try (DataInputStream k = new DataInputStream(new ByteArrayInputStream(kv.key()))) {
      if (k.readShort() != KEY_VERSION) {
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

  /** Reads every partition of the topic from its start and hands each record, in order, to {@code sink}. */
  CompletableFuture<Void> load(java.util.function.Consumer<Entry> sink) {
    CompletableFuture<Void> all = CompletableFuture.completedFuture(null);
    for (int p = 0; p < partitionCount; p++) {
      int partition = p;
      all = all.thenCompose(x -> partitions.get(new TopicPartition(TOPIC, partition))
          .map(log -> loadFrom(log, log.logStartOffset(), sink)).orElse(CompletableFuture.completedFuture(null)));
    }
    return all;
  }

  private CompletableFuture<Void> loadFrom(PartitionLog log, long from, java.util.function.Consumer<Entry> sink) {
    if (from >= log.highWatermark()) {
      return CompletableFuture.completedFuture(null);
    }
    return log.read(from, 1024 * 1024).thenCompose(r -> {
      long next = from;
      for (java.nio.ByteBuffer b : r.batches()) {
        for (KeyValue kv : RecordBatches.keyValues(b)) {
          if (kv.offset() >= from) {
            Entry e = decode(kv);
            if (e != null) {
              sink.accept(e);
            }
          }
        }
        next = Math.max(next, RecordBatches.header(b).lastOffset() + 1);
      }
      return next <= from ? CompletableFuture.completedFuture(null) : loadFrom(log, next, sink);
    });
  }

}
