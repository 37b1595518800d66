package io.tidemark.broker.partition;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * The damaged offset ranges found in one partition's data stream (each one stored batch that is
 * not a valid record batch), so that each is reported once and skipped by replay. At most
 * {@code maxRanges} are remembered; past that, damage is still detected on every read (by the
 * header check), only no longer remembered.
 *
 * <p>Thread-safe: every method synchronizes on the instance (short, CPU-only).
 */
final class DamagedRanges {

  /** A damaged range {@code [fromOffset, toOffset)} and what is wrong with it. */
  record Range(long fromOffset, long toOffset, String problem) {}

  private final int maxRanges;
  private final TreeMap<Long, Range> byStart = new TreeMap<>();
  private long found;

  DamagedRanges(int maxRanges) {
    this.maxRanges = maxRanges;
  }

  /** Records a range; false when it was known already (so the caller reports each range once). */
  synchronized boolean add(long fromOffset, long toOffset, String problem) {
    if (byStart.containsKey(fromOffset)) {
      return false;
    }
    found++;
    if (byStart.size() < maxRanges) {
      byStart.put(fromOffset, new Range(fromOffset, toOffset, problem));
    }
    return true;
  }

  /** The known range starting at {@code fromOffset}, or null. */
  synchronized Range startingAt(long fromOffset) {
    return byStart.get(fromOffset);
  }

  /** Ranges found since the partition opened (remembered or not). */
  synchronized long found() {
    return found;
  }

  synchronized List<Range> ranges() {
    return new ArrayList<>(byStart.values());
  }
}
