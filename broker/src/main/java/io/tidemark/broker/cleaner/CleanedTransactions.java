package io.tidemark.broker.cleaner;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What one cleaning pass knows of a partition's transactions, with Kafka's rules (its cleaner's
 * {@code CleanedTransactionMetadata}). A pass only covers offsets below the last stable offset, so
 * every transaction it meets is decided; the partition's aborted-transaction index says which.
 * <ul>
 *   <li>A transactional batch of an aborted transaction loses all its records, and none of its
 *       keys enters the key map (an aborted write never shadows a committed one).
 *   <li>A batch of a committed transaction is cleaned like any other batch.
 *   <li>A marker is kept while any batch of its transaction is left: an ABORT marker while its
 *       transaction's data is still there (this pass removes it), a COMMIT marker while any batch
 *       of its transaction is there. Once none is (a later pass), the marker is <em>empty</em>: it
 *       gets a delete horizon of now + {@code delete.retention.ms} (KIP-534, as a tombstone does)
 *       and a pass after that horizon drops it, so a consumer that read the transaction's data
 *       before it was cleaned still reads the marker that ends it. An empty ABORT marker's entry
 *       in the aborted-transaction index is dropped at the end of the pass (nothing of its data is
 *       left to skip), which keeps the index of a compacted topic bounded.
 * </ul>
 * Fed the batches of one pass in offset order, from the partition's start. Not thread-safe: one
 * pass on the cleaner's thread.
 */
final class CleanedTransactions {

  /** Aborted transactions by producer: first offset → marker offset. */
  private final Map<Long, TreeMap<Long, Long>> aborted = new HashMap<>();
  /** Producers with a batch of a committed transaction seen since their last marker. */
  private final Set<Long> committedDataSeen = new HashSet<>();
  /** Marker offsets of aborted transactions with a batch seen in this pass. */
  private final Set<Long> abortedDataSeen = new HashSet<>();
  /** Marker offsets of aborted transactions with no batch left: their index entries go. */
  private final Set<Long> emptyAborted = new HashSet<>();

  /** @param abortedTransactions the partition's aborted transactions: {producer id, first offset, marker offset} */
  CleanedTransactions(List<long[]> abortedTransactions) {
    for (long[] a : abortedTransactions) {
      aborted.computeIfAbsent(a[0], p -> new TreeMap<>()).put(a[1], a[2]);
    }
  }

  /** The marker offset of the aborted transaction of {@code producerId} holding {@code offset}, or -1. */
  long abortedMarker(long producerId, long offset) {
    TreeMap<Long, Long> ranges = aborted.get(producerId);
    if (ranges == null) {
      return -1;
    }
    Map.Entry<Long, Long> e = ranges.floorEntry(offset);
    return e != null && offset <= e.getValue() ? e.getValue() : -1;
  }

  /** A transactional data batch at {@code baseOffset}; true when it belongs to an aborted transaction (its records go). */
  boolean onDataBatch(long producerId, long baseOffset) {
    long marker = abortedMarker(producerId, baseOffset);
    if (marker >= 0) {
      abortedDataSeen.add(marker);
      return true;
    }
    committedDataSeen.add(producerId);
    return false;
  }

  /** A COMMIT or ABORT marker at {@code offset}; true when no batch of its transaction is left (the marker is empty). */
  boolean onMarker(long producerId, long offset, boolean commit) {
    if (commit) {
      return !committedDataSeen.remove(producerId);
    }
    if (abortedDataSeen.remove(offset)) {
      return false;
    }
    emptyAborted.add(offset);
    return true;
  }

  /** Marker offsets of the aborted transactions this pass found without data. */
  Set<Long> emptyAbortedMarkers() {
    return Set.copyOf(emptyAborted);
  }
}
