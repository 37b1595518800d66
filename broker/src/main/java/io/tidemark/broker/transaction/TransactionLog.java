package io.tidemark.broker.transaction;

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
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transaction coordinator's durable state in the internal {@value #TOPIC} topic (on streams,
 * like any partition), so that a coordinator opening a partition of it anywhere recovers every
 * transactional id kept there. One record kind: key = (1, transactional id), value = (version,
 * {@link TransactionMetadata}) or null (tombstone: the id is forgotten). The newest record of an
 * id replaces the older ones. An id lives in partition {@code floorMod(hash(id), partitions)}.
 * Stateless apart from its views; callable from any thread.
 */
final class TransactionLog {

  private static final Logger LOG = LoggerFactory.getLogger(TransactionLog.class);
  static final String TOPIC = "__transaction_state";
  private static final short KEY_TYPE = 1;
  /** 1: transactions V1 fields; 2 adds the previous and next producer ids and the transaction version (KIP-890). */
  private static final short VALUE_VERSION = 2;
  private static final TransactionState[] STATES = TransactionState.values();

  /** A decoded record: {@code metadata} null for a tombstone. */
  record Entry(String transactionalId, TransactionMetadata metadata) {}

  private final Partitions partitions;
  private final int partitionCount;
  private final Time time;

  TransactionLog(Partitions partitions, int partitionCount, Time time) {
    this.partitions = partitions;
    this.partitionCount = partitionCount;
    this.time = time;
  }

  int partitionCount() {
    return partitionCount;
  }

  int partitionFor(String transactionalId) {
    return partitionFor(transactionalId, partitionCount);
  }

  static int partitionFor(String transactionalId, int partitionCount) {
    return Math.floorMod(transactionalId.hashCode(), partitionCount);
  }

  Optional<PartitionLog> open(int partition) {
    return partitions.get(new TopicPartition(TOPIC, partition));
  }

  /** Appends the new state of one id; completes once durable. */
  CompletableFuture<Void> append(TransactionMetadata m) {
    PartitionLog log;
    try {
      log = partitions.require(new TopicPartition(TOPIC, partitionFor(m.transactionalId())));
    } catch (PartitionException e) {
      return CompletableFuture.failedFuture(new TransactionException(Errors.NOT_COORDINATOR,
          "transaction state partition for " + m.transactionalId() + " is not open here: " + e.getMessage()));
    }
    return log.append(RecordBatches.internalBatch(time.milliseconds(), List.<byte[][]>of(record(m)))).thenApply(r -> null);
  }

  static byte[][] record(TransactionMetadata m) {
    return new byte[][] {key(m.transactionalId()), value(m)};
  }

  private static byte[] key(String id) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(buf)) {
      out.writeShort(KEY_TYPE);
      out.writeUTF(id);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return buf.toByteArray();
  }

  private static byte[] value(TransactionMetadata m) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(buf)) {
      out.writeShort(VALUE_VERSION);
      out.writeLong(m.producerId());
      out.writeShort(m.producerEpoch());
      out.writeShort(m.lastProducerEpoch());
      out.writeInt(m.timeoutMs());
      out.writeByte(m.state().ordinal());
      out.writeLong(m.startTimestampMs());
      out.writeLong(m.updateTimestampMs());
      out.writeInt(m.partitions().size());
      for (TopicPartition tp : m.partitions()) {
        out.writeUTF(tp.topic());
        out.writeInt(tp.partition());
      }
      out.writeLong(m.prevProducerId());
      out.writeLong(m.nextProducerId());
      out.writeBoolean(m.v2());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return buf.toByteArray();
  }

  /** Decodes one record; null for a record of an unknown kind or version (skipped). */
  static Entry decode(KeyValue kv) {
    try (DataInputStream k = new DataInputStream(new ByteArrayInputStream(kv.key()))) {
      if (k.readShort() != KEY_TYPE) {
        return null;
      }
      String id = k.readUTF();
      if (kv.value() == null) {
        return new Entry(id, null);
      }
      try (DataInputStream v = new DataInputStream(new ByteArrayInputStream(kv.value()))) {
        short version = v.readShort();
        if (version != 1 && version != VALUE_VERSION) {
          return null;
        }
        long producerId = v.readLong();
        short epoch = v.readShort();
        short lastEpoch = v.readShort();
        int timeoutMs = v.readInt();
        int state = v.readUnsignedByte();
        if (state >= STATES.length) {
          throw new IOException("unknown transaction state " + state);
        }
        long start = v.readLong();
        long update = v.readLong();
        int n = v.readInt();
        if (n < 0 || n > v.available()) {
          throw new IOException("partition count " + n + " is beyond the record");
        }
        Set<TopicPartition> tps = new LinkedHashSet<>();
        for (int i = 0; i < n; i++) {
          tps.add(new TopicPartition(v.readUTF(), v.readInt()));
        }
        long prevId = version >= 2 ? v.readLong() : -1;
        long nextId = version >= 2 ? v.readLong() : -1;
        boolean v2 = version >= 2 && v.readBoolean();
        return new Entry(id, new TransactionMetadata(id, producerId, epoch, lastEpoch, timeoutMs, STATES[state], tps, start, update,
            prevId, nextId, v2));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("unreadable record in " + TOPIC + " at offset " + kv.offset(), e);
    }
  }

  /**
   * Replays one partition from its start and completes with the newest state of every id kept
   * there (only the newest is held while replaying, so memory follows the live ids, not the log).
   */
  CompletableFuture<Map<String, TransactionMetadata>> load(PartitionLog log) {
    Map<String, TransactionMetadata> latest = new java.util.HashMap<>();
    return loadFrom(log, log.logStartOffset(), e -> {
      if (e.metadata() == null) {
        latest.remove(e.transactionalId());
      } else {
        latest.put(e.transactionalId(), e.metadata());
      }
    }).thenApply(v -> latest);
  }

  private CompletableFuture<Void> loadFrom(PartitionLog log, long from, Consumer<Entry> sink) {
    if (from >= log.highWatermark()) {
      return CompletableFuture.completedFuture(null);
    }
    return log.readRecords(from, 1024 * 1024).thenCompose(page -> {
      for (KeyValue kv : page.records()) {
        try {
          Entry e = decode(kv);
          if (e != null) {
            sink.accept(e);
          }
        } catch (RuntimeException bad) {
          LOG.warn("skipping unreadable record of {} at offset {}: {}", log.topicPartition(), kv.offset(), bad.getMessage());
        }
      }
      long next = page.nextOffset();
      return next <= from ? CompletableFuture.completedFuture(null) : loadFrom(log, next, sink);
    });
  }
}
