package io.tidemark.stream.compaction;

import io.tidemark.stream.object.StreamRecordBatch;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Pure planning of a compaction's outputs: given the batches read from the inputs (by stream) and
 * the streams whose input data is entirely dead (deleted, or trimmed past every input range),
 * drops the dead streams, checks that no two batches of a stream overlap, cuts each stream's
 * batches into gap-free runs, and decides which runs go to the new stream-set object and which
 * become stream objects: a large stream (every stream, on a force split) becomes stream objects,
 * one per run; a small stream keeps its largest run in the stream-set object (which holds one
 * range per stream) and any other runs become stream objects.
 *
 * <p>Why partly trimmed streams are copied whole: the metadata authority accepts a compaction only
 * when its outputs cover exactly the input ranges of every stream it keeps; the trimmed prefix is
 * unreadable anyway (reads below the start offset are refused) and disappears with the output
 * object once the stream is trimmed past it. No IO, no state: a function of its arguments.
 */
final class CompactionLayout {

  /** Consecutive batches of one stream with no offset gap: one output range. */
  record Run(long streamId, long epoch, List<StreamRecordBatch> batches) {
    Run {
      batches = List.copyOf(batches);
    }

    long startOffset() {
      return batches.getFirst().baseOffset();
    }

    long endOffset() {
      return batches.getLast().nextOffset();
    }

    long encodedBytes() {
      long total = 0;
      for (StreamRecordBatch b : batches) {
        total += b.encodedBytes();
      }
      return total;
    }
  }

  /** Where each run goes, in (stream, offset) order, and how many payload bytes were dropped. */
  record Layout(List<Run> streamSetRuns, List<Run> streamObjectRuns, long droppedBytes) {
    boolean isEmpty() {
      return streamSetRuns.isEmpty() && streamObjectRuns.isEmpty();
    }
  }

  private CompactionLayout() {}

  /**
   * @param batchesByStream the batches read from all inputs, any order
   * @param deadStreams streams whose input data is dropped entirely
   * @param epochs the epoch to record for each stream's output ranges
   * @param splitBytes a stream with at least this many encoded bytes becomes stream objects
   * @param splitAll every stream becomes stream objects (force split of old stream-set objects)
   */
  static Layout plan(Map<Long, List<StreamRecordBatch>> batchesByStream, Set<Long> deadStreams,
      Map<Long, Long> epochs, long splitBytes, boolean splitAll) {
    List<Run> streamSet = new ArrayList<>();
    List<Run> streamObjects = new ArrayList<>();
    long dropped = 0;
    for (Map.Entry<Long, List<StreamRecordBatch>> e : new TreeMap<>(batchesByStream).entrySet()) {
      long streamId = e.getKey();
      if (deadStreams.contains(streamId)) {
        for (StreamRecordBatch b : e.getValue()) {
          dropped += b.payloadBytes();
        }
        continue;
      }
      List<StreamRecordBatch> sorted = new ArrayList<>(e.getValue());
      if (sorted.isEmpty()) {
        continue;
      }
      sorted.sort(Comparator.comparingLong(StreamRecordBatch::baseOffset));
      List<Run> runs = runs(streamId, epochs.getOrDefault(streamId, 0L), sorted);
      long bytes = runs.stream().mapToLong(Run::encodedBytes).sum();
      if (splitAll || bytes >= splitBytes) {
        streamObjects.addAll(runs);
      } else {
        // A stream-set object holds one range per stream: the largest run stays, the others
        // (neighbours of data already in stream objects) become small stream objects.
        Run largest = runs.stream().max(Comparator.comparingLong(Run::encodedBytes)).orElseThrow();
        streamSet.add(largest);
        runs.stream().filter(r -> r != largest).forEach(streamObjects::add);
      }
    }
    return new Layout(streamSet, streamObjects, dropped);
  }

  /** Cuts sorted batches into gap-free runs; overlapping batches abort the run. */
  static List<Run> runs(long streamId, long epoch, List<StreamRecordBatch> sorted) {
    List<Run> runs = new ArrayList<>();
    List<StreamRecordBatch> current = new ArrayList<>();
    for (StreamRecordBatch b : sorted) {
      if (!current.isEmpty()) {
        long next = current.getLast().nextOffset();
        if (b.baseOffset() < next) {
          throw new CompactionAbortedException("inputs hold overlapping batches of stream " + streamId
              + ": a batch at offset " + b.baseOffset() + " starts before the previous batch ends at " + next);
        }
        if (b.baseOffset() > next) {
          runs.add(new Run(streamId, epoch, current));
          current = new ArrayList<>();
        }
      }
      current.add(b);
    }
    if (!current.isEmpty()) {
      runs.add(new Run(streamId, epoch, current));
    }
    return runs;
  }
}
