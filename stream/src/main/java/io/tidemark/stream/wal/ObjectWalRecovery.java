package io.tidemark.stream.wal;

import io.tidemark.stream.wal.WalObjectFormat.Kind;
import io.tidemark.stream.wal.WalObjectFormat.ParsedKey;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.TreeMap;

/**
 * Decides, from a listing alone, which batch objects make up an object WAL and which are garbage.
 * Pure: no I/O.
 *
 * <p>Rules, in order:
 * <ol>
 *   <li>The trim point is the highest trim marker (0 when none).</li>
 *   <li>A batch of epoch {@code e} is valid only below the <em>cutoff</em> {@code min(S_E)} over the
 *       start markers of every epoch {@code E > e}: the writer of {@code E} continued at {@code S_E}
 *       after recovering everything below it, so an older-epoch record at or above it was never
 *       acknowledged (a stale writer landing late) and must never extend the log.</li>
 *   <li>The log is the chain from the trim point: at each offset the valid batch of the highest
 *       epoch covering it is taken, epochs never decrease along the chain, and the chain stops at the
 *       first offset no batch covers (a gap: nothing at or after it was acknowledged, since
 *       acknowledgements are in offset order).</li>
 * </ol>
 */
final class ObjectWalRecovery {

  private ObjectWalRecovery() {}

  /** One piece of the chain: records {@code [from, to]} of the batch object {@code key}. */
  record Segment(ParsedKey batch, long from, long to) {}

  /**
   * @param trimOffset records below it are not returned
   * @param segments the chain, in offset order
   * @param trimmedOrStale batch keys wholly below the trim point or wholly above their cutoff
   * @param obsoleteMarkers trim markers below the highest one and fences older than {@code epoch}
   */
  record Plan(long trimOffset, List<Segment> segments, List<ParsedKey> trimmedOrStale, List<String> obsoleteMarkers,
      List<ParsedKey> liveBatches) {
    long chainEnd() {
      return segments.isEmpty() ? trimOffset : segments.get(segments.size() - 1).to() + 1;
    }
  }

  static Plan plan(List<ParsedKey> keys, long epoch) {
    long trim = 0;
    String trimKey = null;
    TreeMap<Long, Long> startByEpoch = new TreeMap<>();
    List<ParsedKey> batches = new ArrayList<>();
    List<String> obsolete = new ArrayList<>();
    List<String> trimKeys = new ArrayList<>();
    for (ParsedKey k : keys) {
      if (k.kind() == Kind.TRIM) {
        trimKeys.add(k.key());
        if (trimKey == null || k.offset() > trim) {
          trim = k.offset();
          trimKey = k.key();
        }
      } else if (k.kind() == Kind.START) {
        startByEpoch.merge(k.epoch(), k.offset(), Math::min);
      } else if (k.kind() == Kind.BATCH) {
        batches.add(k);
      } else if (k.kind() == Kind.FENCE && k.epoch() < epoch) {
        obsolete.add(k.key());
      }
    }
    for (String key : trimKeys) {
      if (!key.equals(trimKey)) {
        obsolete.add(key);
      }
    }
    // cutoff(e) = min start offset over epochs > e: a suffix minimum over the start markers.
    TreeMap<Long, Long> cutoffAbove = new TreeMap<>();
    long min = Long.MAX_VALUE;
    for (var e : startByEpoch.descendingMap().entrySet()) {
      min = Math.min(min, e.getValue());
      cutoffAbove.put(e.getKey(), min);
    }
    List<Valid> valid = new ArrayList<>();
    List<ParsedKey> garbage = new ArrayList<>();
    for (ParsedKey b : batches) {
      var higher = cutoffAbove.higherEntry(b.epoch());
      long cutoff = higher == null ? Long.MAX_VALUE : higher.getValue();
      long validLast = Math.min(b.lastOffset(), cutoff - 1);
      if (validLast < b.offset() || validLast < trim) {
        garbage.add(b);
      } else {
        valid.add(new Valid(b, validLast));
      }
    }
    valid.sort(Comparator.comparingLong((Valid v) -> v.batch.offset()));
    List<Segment> segments = new ArrayList<>();
    List<Valid> active = new ArrayList<>();
    long position = trim;
    long minEpoch = Long.MIN_VALUE;
    int next = 0;
    while (true) {
      while (next < valid.size() && valid.get(next).batch.offset() <= position) {
        active.add(valid.get(next++));
      }
      long at = position;
      long floor = minEpoch;
      active.removeIf(v -> v.validLast < at || v.batch.epoch() < floor);
      if (active.isEmpty()) {
        break;
      }
      Valid best = active.stream().max(Comparator.comparingLong(v -> v.batch.epoch())).orElseThrow();
      segments.add(new Segment(best.batch, position, best.validLast));
      position = best.validLast + 1;
      minEpoch = best.batch.epoch();
    }
    List<ParsedKey> live = valid.stream().map(v -> v.batch).toList();
    return new Plan(trim, segments, garbage, obsolete, live);
  }

  private record Valid(ParsedKey batch, long validLast) {}
}
