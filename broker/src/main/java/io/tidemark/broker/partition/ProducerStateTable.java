package io.tidemark.broker.partition;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Idempotent-producer state of one partition: per producer id, its epoch and the metadata of its
 * last {@value #BATCHES_KEPT} batches (sequence range and offset), so that a retried batch is
 * answered with its original offset and a gap in sequences is refused. Bounded to
 * {@code maxProducers}; the least recently used producer is forgotten first (it then appears as
 * a new producer, as after Kafka's producer-id expiration).
 *
 * <p>While the table is {@linkplain #complete() complete} (it knows every producer that ever wrote
 * to the partition), an unknown producer must start at sequence 0. Kafka accepts any sequence from
 * an unknown producer, because its brokers forget producers (expiry, retention); here a partition
 * that forgot none can tell a producer's first batch from a later batch whose predecessors were
 * refused, which happens when a partition changes brokers: the first batches reach the new leader
 * before it serves the partition and get NOT_LEADER_OR_FOLLOWER, a later pipelined batch arrives
 * once it serves. Accepting that batch would reorder the producer's records and leave its refused
 * batches with no sequence to land at; refused as out of order, it is retried by the client after
 * the earlier ones (the Java client retries a batch that is not its next sequence; librdkafka too).
 *
 * <p>Not thread-safe: owned by its {@link PartitionLog}, used under that log's monitor.
 */
final class ProducerStateTable {

  static final int BATCHES_KEPT = 5;

  /** One batch's sequence range and where it landed. */
  record BatchMetadata(int firstSeq, int lastSeq, long baseOffset, int recordCount, long timestamp) {}

  /** What is known about one producer. */
  static final class Entry {
    final long producerId;
    short epoch;
    final Deque<BatchMetadata> batches = new ArrayDeque<>();
    long lastTimestamp = -1;

    Entry(long producerId, short epoch) {
      this.producerId = producerId;
      this.epoch = epoch;
    }

    int lastSeq() {
      return batches.isEmpty() ? -1 : batches.peekLast().lastSeq();
    }

    long lastOffset() {
      return batches.isEmpty() ? -1 : batches.peekLast().baseOffset() + batches.peekLast().recordCount() - 1;
    }

    int firstSeq() {
      return batches.isEmpty() ? -1 : batches.peekFirst().firstSeq();
    }
  }

  private final Map<Long, Entry> producers;
  /** Whether every producer that ever wrote here is in the table (see the class comment). */
  private boolean complete;

  ProducerStateTable(int maxProducers) {
    this.producers = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<Long, ProducerStateTable.Entry> eldest) {
        if (size() > maxProducers) {
          complete = false; // a forgotten producer may come back at any sequence
          return true;
        }
        return false;
      }
    };
  }

  /**
   * Whether the table knows every producer that ever wrote to the partition: set by the owner for a
   * partition that starts empty, or from a snapshot that was complete; lost for good when the table
   * forgets a producer (full table) or is rebuilt from data that may not hold every producer.
   */
  boolean complete() {
    return complete;
  }

  void complete(boolean value) {
    complete = value;
  }

  /** {@link #check(long, short, int, int, boolean)} of a batch that may open an unknown producer at any sequence. */
  BatchMetadata check(long producerId, short epoch, int firstSeq, int lastSeq) {
    return check(producerId, epoch, firstSeq, lastSeq, false);
  }

  /**
   * Checks a batch against the producer's state: returns the original batch when it is a
   * duplicate of one of the last batches, null when it may be appended, or throws
   * {@link PartitionException} (stale epoch, sequence gap). The rules are Kafka's
   * ({@code ProducerAppendInfo.checkSequence}): an unknown producer may start at any sequence
   * unless {@code unknownStartsAtZero} (a verified transactions V2 batch) or the table is
   * {@linkplain #complete() complete}; a new epoch starts at 0;
   * within an epoch each batch follows the last one, and a producer known at an epoch without a
   * batch there yet (its marker started the epoch: transactions V2 bump it at every transaction end)
   * starts at 0.
   */
  BatchMetadata check(long producerId, short epoch, int firstSeq, int lastSeq, boolean unknownStartsAtZero) {
    Entry e = producers.get(producerId);
    if (e == null) {
      if (unknownStartsAtZero && firstSeq != 0) {
        throw new PartitionException(PartitionException.Outcome.OUT_OF_ORDER_SEQUENCE,
            "producer " + producerId + " epoch " + epoch + " opens its first transaction here at sequence " + firstSeq
                + " but a transactions V2 producer starts at 0");
      }
      if (complete && firstSeq != 0) {
        throw new PartitionException(PartitionException.Outcome.OUT_OF_ORDER_SEQUENCE,
            "producer " + producerId + " epoch " + epoch + " is new here but sent sequence " + firstSeq
                + " instead of 0 (its earlier batches were refused; they come first)");
      }
      return null; // unknown producer (new, or forgotten by a table that is not complete): accept any sequence, as Kafka does
    }
    if (epoch < e.epoch) {
      throw new PartitionException(PartitionException.Outcome.INVALID_PRODUCER_EPOCH,
          "producer " + producerId + " epoch " + epoch + " is older than the current epoch " + e.epoch);
    }
    if (epoch > e.epoch) {
      if (firstSeq != 0) {
        throw new PartitionException(PartitionException.Outcome.OUT_OF_ORDER_SEQUENCE,
            "producer " + producerId + " starts new epoch " + epoch + " at sequence " + firstSeq + " instead of 0");
      }
      return null;
    }
    for (BatchMetadata b : e.batches) {
      if (b.firstSeq() == firstSeq && b.lastSeq() == lastSeq) {
        return b;
      }
    }
    int last = e.lastSeq();
    if (last == -1 && firstSeq != 0) {
      // known at this epoch, but no batch yet: a marker started the epoch (transactions V2 bump it per transaction), so its
      // sequences start at 0, as in Kafka; batches of one producer reach this check in the order they were sent
      // (PartitionLog#appendInOrder), so a refusal here means an earlier batch was refused, and the client retries this one
      throw new PartitionException(PartitionException.Outcome.OUT_OF_ORDER_SEQUENCE,
          "producer " + producerId + " epoch " + epoch + " sent sequence " + firstSeq + " but 0 was expected");
    }
    if (last != -1 && firstSeq != nextSequence(last)) {
      throw new PartitionException(PartitionException.Outcome.OUT_OF_ORDER_SEQUENCE,
          "producer " + producerId + " epoch " + epoch + " sent sequence " + firstSeq + " but " + nextSequence(last) + " was expected");
    }
    if (last == -1 && !e.batches.isEmpty()) {
      throw new IllegalStateException("unreachable");
    }
    return null;
  }

  /** Records an appended (or replayed) batch. */
  void update(long producerId, short epoch, int firstSeq, int lastSeq, long baseOffset, int recordCount, long timestamp) {
    Entry e = producers.get(producerId);
    if (e == null || epoch > e.epoch) {
      e = new Entry(producerId, epoch);
      producers.put(producerId, e);
    }
    e.batches.addLast(new BatchMetadata(firstSeq, lastSeq, baseOffset, recordCount, timestamp));
    while (e.batches.size() > BATCHES_KEPT) {
      e.batches.removeFirst();
    }
    e.lastTimestamp = Math.max(e.lastTimestamp, timestamp);
  }

  /** Refuses a transaction marker whose epoch is older than the producer's (Kafka's INVALID_PRODUCER_EPOCH). */
  void checkMarkerEpoch(long producerId, short epoch) {
    Entry e = producers.get(producerId);
    if (e != null && epoch < e.epoch) {
      throw new PartitionException(PartitionException.Outcome.INVALID_PRODUCER_EPOCH,
          "marker for producer " + producerId + " at epoch " + epoch + " is older than the current epoch " + e.epoch);
    }
  }

  /** A marker at {@code epoch} moves the producer to it (a fencing abort bumps the epoch): its older batches are refused. */
  void onMarker(long producerId, short epoch) {
    Entry e = producers.get(producerId);
    if (e == null) {
      producers.put(producerId, new Entry(producerId, epoch));
    } else if (epoch > e.epoch) {
      e.epoch = epoch;
      e.batches.clear();
    }
  }

  /** The producer's current epoch here, or -1 when it is not known. */
  short epochOf(long producerId) {
    Entry e = producers.get(producerId);
    return e == null ? -1 : e.epoch;
  }

  /** Forgets every producer (before rebuilding the table from the log, which may not hold them all: no longer complete). */
  void clear() {
    producers.clear();
    complete = false;
  }

  Collection<Entry> entries() {
    return new ArrayList<>(producers.values());
  }

  int size() {
    return producers.size();
  }

  static int nextSequence(int seq) {
    return seq == Integer.MAX_VALUE ? 0 : seq + 1;
  }

  void writeTo(DataOutputStream out) throws IOException {
    List<Entry> all = new ArrayList<>(producers.values());
    out.writeInt(all.size());
    for (Entry e : all) {
      out.writeLong(e.producerId);
      out.writeShort(e.epoch);
      out.writeLong(e.lastTimestamp);
      out.writeInt(e.batches.size());
      for (BatchMetadata b : e.batches) {
        out.writeInt(b.firstSeq());
        out.writeInt(b.lastSeq());
        out.writeLong(b.baseOffset());
        out.writeInt(b.recordCount());
        out.writeLong(b.timestamp());
      }
    }
  }

  void readFrom(DataInputStream in) throws IOException {
    int n = in.readInt();
    for (int i = 0; i < n; i++) {
      long pid = in.readLong();
      short epoch = in.readShort();
      long lastTs = in.readLong();
      int batches = in.readInt();
      for (int j = 0; j < batches; j++) {
        update(pid, epoch, in.readInt(), in.readInt(), in.readLong(), in.readInt(), in.readLong());
      }
      Entry e = producers.get(pid);
      if (e == null) {
        producers.put(pid, e = new Entry(pid, epoch));
      }
      e.lastTimestamp = lastTs;
    }
  }
}
