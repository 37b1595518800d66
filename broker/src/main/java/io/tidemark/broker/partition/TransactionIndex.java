package io.tidemark.broker.partition;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The transaction state of one partition: the open transactions (producer id → first offset),
 * transactions whose marker is assigned but not yet durable, the coordinator epoch last seen per
 * producer, and the aborted-transaction index (producer id, first offset, marker offset) that
 * {@code read_committed} fetches return as AbortedTransactions and that the table module uses to
 * skip aborted data. It goes into the partition's snapshot in the meta stream, and replay of the
 * data after the snapshot rebuilds the rest, so any broker that opens the partition has it.
 *
 * <p>The last stable offset (LSO) is the smallest of: the first offset of any open transaction,
 * the first offset of any transaction whose marker is not yet below the high watermark, and the
 * high watermark. It never goes back: a transaction ends only with its marker, and a marker
 * counts only once durable.
 *
 * <p>Bounded: aborted entries wholly below the log start are dropped ({@link #trimBelow}), and so
 * are those whose data the log cleaner removed ({@link #dropAborted}); open
 * transactions are bounded by the producers a partition keeps. Not thread-safe: owned by its
 * {@link PartitionLog}, used under that log's monitor.
 */
final class TransactionIndex {

  /** One aborted transaction: its producer, first offset and the offset of its ABORT marker. */
  record Aborted(long producerId, long firstOffset, long lastOffset) {}

  private final Map<Long, Long> open = new HashMap<>();
  private final TreeMap<Long, Long> openByFirstOffset = new TreeMap<>();
  /** first offset → marker offset of ended transactions whose marker may not be durable yet. */
  private final TreeMap<Long, Long> ending = new TreeMap<>();
  private final Map<Long, Integer> coordinatorEpochs = new HashMap<>();
  private final Deque<Aborted> aborted = new ArrayDeque<>();

  /** Records that {@code producerId} wrote a transactional batch at {@code offset}; starts its transaction if none is open. */
  void onTransactionalBatch(long producerId, long offset) {
    if (!open.containsKey(producerId)) {
      open.put(producerId, offset);
      openByFirstOffset.put(offset, producerId);
    }
  }

  /** The first offset of the producer's open transaction, or -1. */
  long openTransactionStart(long producerId) {
    return open.getOrDefault(producerId, -1L);
  }

  /** The coordinator epoch of the producer's last marker, or -1. */
  int coordinatorEpoch(long producerId) {
    return coordinatorEpochs.getOrDefault(producerId, -1);
  }

  /** Ends the producer's open transaction (if any) with a marker at {@code markerOffset}. */
  void onMarker(long producerId, int coordinatorEpoch, boolean commit, long markerOffset) {
    coordinatorEpochs.put(producerId, coordinatorEpoch);
    Long first = open.remove(producerId);
    if (first == null) {
      return;
    }
    openByFirstOffset.remove(first);
    ending.put(first, markerOffset);
    if (!commit) {
      aborted.addLast(new Aborted(producerId, first, markerOffset));
    }
  }

  /** The last stable offset given the high watermark {@code hw}. */
  long lastStableOffset(long hw) {
    ending.values().removeIf(marker -> marker < hw);
    long lso = hw;
    if (!openByFirstOffset.isEmpty()) {
      lso = Math.min(lso, openByFirstOffset.firstKey());
    }
    if (!ending.isEmpty()) {
      lso = Math.min(lso, ending.firstKey());
    }
    return lso;
  }

  /** Aborted transactions overlapping {@code [from, to)}, oldest first. */
  List<Aborted> abortedIn(long from, long to) {
    List<Aborted> out = new ArrayList<>();
    for (Aborted a : aborted) {
      if (a.lastOffset() >= from && a.firstOffset() < to) {
        out.add(a);
      }
    }
    return out;
  }

  /** Open transactions: producer id → first offset. */
  Map<Long, Long> openTransactions() {
    return Map.copyOf(open);
  }

  /** Drops aborted entries that end below the log start (their data is gone). */
  void trimBelow(long logStartOffset) {
    Iterator<Aborted> it = aborted.iterator();
    while (it.hasNext()) {
      if (it.next().lastOffset() < logStartOffset) {
        it.remove();
      }
    }
  }

  /** Drops the aborted entries whose marker is at one of {@code markerOffsets} (the cleaner removed all their data). */
  void dropAborted(java.util.Set<Long> markerOffsets) {
    if (!markerOffsets.isEmpty()) {
      aborted.removeIf(a -> markerOffsets.contains(a.lastOffset()));
    }
  }

  void clear() {
    open.clear();
    openByFirstOffset.clear();
    ending.clear();
    coordinatorEpochs.clear();
    aborted.clear();
  }

  /** Written once every batch below the snapshot offset is durable, so "ending" transactions are complete. */
  void writeTo(DataOutputStream out) throws IOException {
    out.writeInt(open.size());
    for (Map.Entry<Long, Long> e : open.entrySet()) {
      out.writeLong(e.getKey());
      out.writeLong(e.getValue());
    }
    out.writeInt(coordinatorEpochs.size());
    for (Map.Entry<Long, Integer> e : coordinatorEpochs.entrySet()) {
      out.writeLong(e.getKey());
      out.writeInt(e.getValue());
    }
    out.writeInt(aborted.size());
    for (Aborted a : aborted) {
      out.writeLong(a.producerId());
      out.writeLong(a.firstOffset());
      out.writeLong(a.lastOffset());
    }
  }

  void readFrom(DataInputStream in) throws IOException {
    clear();
    int n = in.readInt();
    for (int i = 0; i < n; i++) {
      onTransactionalBatch(in.readLong(), in.readLong());
    }
    n = in.readInt();
    for (int i = 0; i < n; i++) {
      coordinatorEpochs.put(in.readLong(), in.readInt());
    }
    n = in.readInt();
    for (int i = 0; i < n; i++) {
      aborted.addLast(new Aborted(in.readLong(), in.readLong(), in.readLong()));
    }
  }
}
