package io.tidemark.stream.compaction;

import io.tidemark.stream.object.IndexEntry;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The check a compaction passes before it commits: every live input range (the part of each
 * input range at or above its stream's start offset) is covered by the blocks actually written
 * (read from the outputs' own indexes, not from the plan), and no output block holds offsets that
 * no input range held. Pure; throws {@link CompactionAbortedException} naming the object, stream
 * and offsets of the first violation.
 */
final class CoverageCheck {

  /** Offsets {@code [startOffset, endOffset)} of {@code streamId} in object {@code objectId}. */
  record Span(long objectId, long streamId, long startOffset, long endOffset) {}

  private CoverageCheck() {}

  /**
   * @param liveInputs the input ranges that must survive, already cut at the start offsets
   * @param allInputs every input range (what outputs may hold)
   * @param outputs the outputs' index entries as spans
   */
  static void verify(List<Span> liveInputs, List<Span> allInputs, List<Span> outputs) {
    Map<Long, List<long[]>> written = union(outputs);
    for (Span in : liveInputs) {
      if (in.endOffset() > in.startOffset() && !covers(written.get(in.streamId()), in.startOffset(), in.endOffset())) {
        throw new CompactionAbortedException("input range [" + in.startOffset() + ", " + in.endOffset()
            + ") of stream " + in.streamId() + " in object " + in.objectId() + " is not fully present in the outputs");
      }
    }
    Map<Long, List<long[]>> read = union(allInputs);
    for (Span out : outputs) {
      if (!covers(read.get(out.streamId()), out.startOffset(), out.endOffset())) {
        throw new CompactionAbortedException("output object " + out.objectId() + " holds offsets ["
            + out.startOffset() + ", " + out.endOffset() + ") of stream " + out.streamId() + " that no input held");
      }
    }
  }

  /** Spans of the blocks listed in an output's index. */
  static List<Span> spans(long objectId, List<IndexEntry> index) {
    List<Span> spans = new ArrayList<>(index.size());
    for (IndexEntry e : index) {
      spans.add(new Span(objectId, e.streamId(), e.startOffset(), e.endOffset()));
    }
    return spans;
  }

  /** Per stream, the merged intervals of the spans, sorted. */
  private static Map<Long, List<long[]>> union(List<Span> spans) {
    Map<Long, List<Span>> byStream = new HashMap<>();
    for (Span s : spans) {
      byStream.computeIfAbsent(s.streamId(), k -> new ArrayList<>()).add(s);
    }
    Map<Long, List<long[]>> merged = new HashMap<>();
    byStream.forEach((stream, list) -> {
      list.sort(Comparator.comparingLong(Span::startOffset));
      List<long[]> intervals = new ArrayList<>();
      for (Span s : list) {
        if (!intervals.isEmpty() && s.startOffset() <= intervals.getLast()[1]) {
          intervals.getLast()[1] = Math.max(intervals.getLast()[1], s.endOffset());
        } else {
          intervals.add(new long[] {s.startOffset(), s.endOffset()});
        }
      }
      merged.put(stream, intervals);
    });
    return merged;
  }

  private static boolean covers(List<long[]> intervals, long start, long end) {
    if (intervals == null) {
      return false;
    }
    for (long[] i : intervals) {
      if (i[0] <= start && end <= i[1]) {
        return true;
      }
    }
    return false;
  }
}
