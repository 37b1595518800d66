package io.tidemark.stream.compaction;

import io.tidemark.stream.metadata.CommitStreamSetObjectRequest;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.ObjectManager;
import io.tidemark.stream.metadata.ObjectMetadata;
import io.tidemark.stream.metadata.StreamManager;
import io.tidemark.stream.metadata.StreamMetadata;
import io.tidemark.stream.metadata.StreamRange;
import io.tidemark.stream.object.EncodedObject;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.object.StreamRecordBatch;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * Compacts the stream-set objects of one node. One {@link #runOnce()}:
 *
 * <ol>
 *   <li>selects the node's committed stream-set objects, oldest first, at most
 *       {@code stream.compaction.max.objects} of them and {@code stream.compaction.max.bytes} in
 *       total (an object larger than the byte bound is left alone);
 *   <li>reads every stream's start offset; a stream deleted or trimmed past all of its data in
 *       the selected objects is dead and dropped (never written again); objects holding only dead
 *       streams are replaced without being read; the others are read whole;
 *   <li>keeps every other stream whole (the metadata authority requires outputs to cover the
 *       inputs' ranges exactly; a trimmed prefix stays unreadable and goes with its object), cuts
 *       each stream into gap-free runs, splits streams with gaps or with at least
 *       {@code stream.compaction.split.bytes} (all streams when the oldest input is older than
 *       {@code stream.compaction.force.split.age.ms}) into stream objects, and puts the rest into
 *       one new stream-set object;
 *   <li>checks that every live input range is present in the encoded outputs and that the outputs
 *       hold nothing else ({@link CoverageCheck}), reserves ids, uploads, checks that no stream
 *       was trimmed past an output meanwhile, and commits everything in one
 *       {@link ObjectManager#commitStreamSetObject} with the inputs as {@code compactedObjectIds}.
 * </ol>
 *
 * <p>Failure rules: before the commit, any failure deletes the uploaded outputs and leaves the
 * inputs as they were. A commit the metadata authority rejects ({@link MetadataException}) is
 * handled the same way. A commit whose outcome is unknown (any other failure) deletes nothing: the
 * commit may have taken effect; the controller expires never-committed ids.
 *
 * <p>States: IDLE → RUNNING → IDLE. A {@link #runOnce()} while RUNNING returns a skipped report at
 * once. Threading: {@code runOnce} may be called from any thread (typically the caller's
 * scheduler); the run's steps execute on the threads completing the storage and metadata futures,
 * and touch only the run's own local state.
 */
public final class StreamSetObjectCompactor {

  private final NodeRef node;
  private final ObjectManager objects;
  private final StreamManager streams;
  private final CompactionIo io;
  private final CompactionConfig config;
  private final LongSupplier clockMs;
  private final AtomicBoolean running = new AtomicBoolean();

  public StreamSetObjectCompactor(NodeRef node, ObjectManager objects, StreamManager streams, ObjectStorage storage,
      ObjectKeys keys, CompactionConfig config, LongSupplier clockMs) {
    this.node = node;
    this.objects = objects;
    this.streams = streams;
    this.io = new CompactionIo(storage, keys, config);
    this.config = config;
    this.clockMs = clockMs;
  }

  /** Runs one bounded compaction; see the class comment. */
  public CompletableFuture<CompactionReport> runOnce() {
    if (!running.compareAndSet(false, true)) {
      return CompletableFuture.completedFuture(CompactionReport.skipped("a stream-set compaction run is in progress"));
    }
    CompletableFuture<CompactionReport> run;
    try {
      run = objects.getStreamSetObjects(node.nodeId()).thenCompose(this::compact);
    } catch (RuntimeException e) {
      run = CompletableFuture.failedFuture(e);
    }
    return run.whenComplete((report, error) -> running.set(false));
  }

  private CompletableFuture<CompactionReport> compact(List<ObjectMetadata> candidates) {
    List<ObjectMetadata> selected = select(candidates);
    if (selected.isEmpty()) {
      return CompletableFuture.completedFuture(CompactionReport.skipped("no stream-set objects within the bounds"));
    }
    List<Long> streamIds = new ArrayList<>(new TreeSet<>(selected.stream()
        .flatMap(o -> o.ranges().stream()).map(StreamRange::streamId).toList()));
    return streams.getStreams(streamIds).thenCompose(found -> {
      Set<Long> dead = deadStreams(selected, startOffsets(found));
      List<ObjectMetadata> live = selected.stream()
          .filter(o -> o.ranges().stream().anyMatch(r -> !dead.contains(r.streamId()))).toList();
      boolean forceSplit = clockMs.getAsLong() - selected.getFirst().committedAtMs() >= config.forceSplitAgeMs();
      if (live.isEmpty()) {
        return CompletableFuture.completedFuture(CompactionReport.skipped(
            "the selected stream-set objects hold only trimmed or deleted data; the metadata authority deletes them"));
      }
      if (selected.size() < 2 && dead.isEmpty() && !forceSplit) {
        return CompletableFuture.completedFuture(CompactionReport.skipped("only one stream-set object to compact"));
      }
      return io.readAll(live).thenCompose(batches -> write(selected, dead, batches, forceSplit));
    });
  }

  /**
   * Streams whose data in {@code inputs} is all dead: deleted (absent from {@code startOffsets})
   * or trimmed at or past the end of every input range.
   */
  static Set<Long> deadStreams(List<ObjectMetadata> inputs, Map<Long, Long> startOffsets) {
    Map<Long, Long> inputEnds = new HashMap<>();
    for (ObjectMetadata o : inputs) {
      for (StreamRange r : o.ranges()) {
        inputEnds.merge(r.streamId(), r.endOffset(), Math::max);
      }
    }
    Set<Long> dead = new HashSet<>();
    inputEnds.forEach((stream, end) -> {
      Long start = startOffsets.get(stream);
      if (start == null || start >= end) {
        dead.add(stream);
      }
    });
    return dead;
  }

  /** Oldest first, within the count and byte bounds; objects above the byte bound are skipped. */
  private List<ObjectMetadata> select(List<ObjectMetadata> candidates) {
    List<ObjectMetadata> sorted = new ArrayList<>(candidates);
    sorted.sort(Comparator.comparingLong(ObjectMetadata::orderId));
    List<ObjectMetadata> selected = new ArrayList<>();
    long bytes = 0;
    for (ObjectMetadata o : sorted) {
      if (selected.size() == config.maxObjects()) {
        break;
      }
      if (bytes + o.sizeBytes() <= config.maxBytes()) {
        selected.add(o);
        bytes += o.sizeBytes();
      }
    }
    return selected;
  }

  private CompletableFuture<CompactionReport> write(List<ObjectMetadata> inputs, Set<Long> dead,
      Map<Long, List<StreamRecordBatch>> batches, boolean forceSplit) {
    CompactionLayout.Layout layout = CompactionLayout.plan(batches, dead, epochs(inputs),
        config.splitBytes(), forceSplit);
    int count = (layout.streamSetRuns().isEmpty() ? 0 : 1) + layout.streamObjectRuns().size();
    long bytesRead = inputs.stream().mapToLong(ObjectMetadata::sizeBytes).sum();
    CompletableFuture<Long> firstId = count == 0
        ? CompletableFuture.completedFuture(-1L)
        : objects.prepareObjects(node, count, config.prepareTtlMs());
    return firstId.thenCompose(first -> {
      Outputs outputs = encode(layout, first);
      CoverageCheck.verify(keptSpans(inputs, dead), allSpans(inputs), outputs.spans());
      AtomicBoolean committing = new AtomicBoolean();
      return uploadAll(outputs)
          .thenCompose(v -> checkNotTrimmedMeanwhile(inputs, dead))
          .thenCompose(v -> {
            committing.set(true);
            return objects.commitStreamSetObject(node, outputs.request(inputs));
          })
          .handle((v, error) -> CompactionOutcome.settle(io, outputs.ids(), committing.get(), error))
          .thenCompose(f -> f)
          .thenApply(v -> new CompactionReport(inputs.stream().map(ObjectMetadata::objectId).toList(),
              outputs.streamSetId, outputs.streamObjectIds(), bytesRead, outputs.bytes(), layout.droppedBytes(), null,
              List.of()));
    });
  }

  /** The encoded outputs of one run with their ids. */
  private record Outputs(long streamSetId, EncodedObject streamSet, List<CompactionLayout.Run> streamSetRuns,
      List<Long> soIds, List<EncodedObject> streamObjects, List<CompactionLayout.Run> soRuns) {

    List<Long> ids() {
      List<Long> ids = new ArrayList<>(soIds);
      if (streamSetId >= 0) {
        ids.addFirst(streamSetId);
      }
      return ids;
    }

    List<Long> streamObjectIds() {
      return soIds;
    }

    long bytes() {
      long total = streamSet == null ? 0 : streamSet.sizeBytes();
      for (EncodedObject o : streamObjects) {
        total += o.sizeBytes();
      }
      return total;
    }

    List<CoverageCheck.Span> spans() {
      List<CoverageCheck.Span> spans = new ArrayList<>();
      if (streamSet != null) {
        spans.addAll(CoverageCheck.spans(streamSetId, streamSet.index()));
      }
      for (int i = 0; i < streamObjects.size(); i++) {
        spans.addAll(CoverageCheck.spans(soIds.get(i), streamObjects.get(i).index()));
      }
      return spans;
    }

    List<CompactionLayout.Run> allRuns() {
      List<CompactionLayout.Run> all = new ArrayList<>(streamSetRuns);
      all.addAll(soRuns);
      return all;
    }

    CommitStreamSetObjectRequest request(List<ObjectMetadata> inputs) {
      List<StreamRange> ranges = streamSetRuns.stream().map(StreamSetObjectCompactor::range).toList();
      List<CommitStreamSetObjectRequest.StreamObject> sos = new ArrayList<>();
      for (int i = 0; i < soRuns.size(); i++) {
        sos.add(new CommitStreamSetObjectRequest.StreamObject(soIds.get(i), streamObjects.get(i).sizeBytes(),
            range(soRuns.get(i))));
      }
      return new CommitStreamSetObjectRequest(streamSetId, streamSet == null ? 0 : streamSet.sizeBytes(), ranges, sos,
          inputs.stream().map(ObjectMetadata::objectId).toList());
    }
  }

  static StreamRange range(CompactionLayout.Run run) {
    return new StreamRange(run.streamId(), run.epoch(), run.startOffset(), run.endOffset());
  }

  private Outputs encode(CompactionLayout.Layout layout, long firstId) {
    long next = firstId;
    long streamSetId = -1;
    EncodedObject streamSet = null;
    if (!layout.streamSetRuns().isEmpty()) {
      streamSetId = next++;
      streamSet = io.encode(layout.streamSetRuns());
    }
    List<Long> soIds = new ArrayList<>();
    List<EncodedObject> sos = new ArrayList<>();
    for (CompactionLayout.Run run : layout.streamObjectRuns()) {
      soIds.add(next++);
      sos.add(io.encode(List.of(run)));
    }
    return new Outputs(streamSetId, streamSet, layout.streamSetRuns(), soIds, sos, layout.streamObjectRuns());
  }

  private CompletableFuture<Void> uploadAll(Outputs outputs) {
    List<CompletableFuture<Void>> uploads = new ArrayList<>();
    if (outputs.streamSet != null) {
      uploads.add(io.upload(outputs.streamSetId, outputs.streamSet));
    }
    for (int i = 0; i < outputs.streamObjects.size(); i++) {
      uploads.add(io.upload(outputs.soIds.get(i), outputs.streamObjects.get(i)));
    }
    return CompletableFuture.allOf(uploads.toArray(CompletableFuture[]::new));
  }

  /**
   * A kept stream trimmed (or deleted) past all of its input data while the run worked would be
   * copied into objects holding only dead data: abort; the next run drops it.
   */
  private CompletableFuture<Void> checkNotTrimmedMeanwhile(List<ObjectMetadata> inputs, Set<Long> dead) {
    List<Long> kept = inputs.stream().flatMap(o -> o.ranges().stream()).map(StreamRange::streamId)
        .filter(id -> !dead.contains(id)).distinct().toList();
    if (kept.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    return streams.getStreams(kept).thenAccept(found -> {
      Set<Long> deadNow = deadStreams(inputs, startOffsets(found));
      for (long stream : kept) {
        if (deadNow.contains(stream)) {
          throw new CompactionAbortedException("stream " + stream + " was trimmed or deleted past all of its data"
              + " in objects " + inputs.stream().map(ObjectMetadata::objectId).toList()
              + " while compacting them; the next run will drop it");
        }
      }
    });
  }

  static Map<Long, Long> startOffsets(List<StreamMetadata> found) {
    Map<Long, Long> starts = new HashMap<>();
    for (StreamMetadata s : found) {
      starts.put(s.streamId(), s.startOffset());
    }
    return starts;
  }

  /** The newest epoch under which each stream's input ranges were written. */
  static Map<Long, Long> epochs(List<ObjectMetadata> inputs) {
    Map<Long, Long> epochs = new HashMap<>();
    for (ObjectMetadata o : inputs) {
      for (StreamRange r : o.ranges()) {
        epochs.merge(r.streamId(), r.epoch(), Math::max);
      }
    }
    return epochs;
  }

  static List<CoverageCheck.Span> allSpans(List<ObjectMetadata> inputs) {
    List<CoverageCheck.Span> spans = new ArrayList<>();
    for (ObjectMetadata o : inputs) {
      for (StreamRange r : o.ranges()) {
        spans.add(new CoverageCheck.Span(o.objectId(), r.streamId(), r.startOffset(), r.endOffset()));
      }
    }
    return spans;
  }

  /** The input ranges of the streams kept (every stream not in {@code dead}): outputs must cover them exactly. */
  static List<CoverageCheck.Span> keptSpans(List<ObjectMetadata> inputs, Set<Long> dead) {
    List<CoverageCheck.Span> spans = new ArrayList<>();
    for (CoverageCheck.Span span : allSpans(inputs)) {
      if (!dead.contains(span.streamId())) {
        spans.add(span);
      }
    }
    return spans;
  }
}
