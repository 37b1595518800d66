package io.tidemark.stream.compaction;

import io.tidemark.stream.metadata.CommitStreamObjectRequest;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.ObjectManager;
import io.tidemark.stream.metadata.ObjectMetadata;
import io.tidemark.stream.metadata.StreamManager;
import io.tidemark.stream.metadata.StreamRange;
import io.tidemark.stream.object.EncodedObject;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.object.StreamRecordBatch;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Merges small consecutive stream objects of the given streams. One {@link #runOnce} walks each
 * stream's committed stream objects in offset order, ignores those wholly below the stream's start
 * offset (trimmed: the metadata authority marks them for deletion; compaction never copies them),
 * and groups neighbours whose offsets touch while the group stays within
 * {@code stream.compaction.stream.object.target.bytes}; each group of two or more becomes one new
 * stream object holding exactly its sources' data (the metadata authority requires exact
 * coverage; a partly trimmed first source stays unreadable below the start offset), checked
 * against its sources
 * ({@link CoverageCheck}) and committed with {@link ObjectManager#commitStreamObject}. The whole
 * run reads at most {@code stream.compaction.max.objects} objects and
 * {@code stream.compaction.max.bytes} bytes. Groups are done one after another; a failed group
 * (rejected commit, storage error, failed check) is recorded in the report's skip reason and
 * leaves its sources intact (outputs deleted unless the commit outcome is unknown, see
 * {@link CompactionOutcome}); later groups still run.
 *
 * <p>States: IDLE → RUNNING → IDLE; a {@code runOnce} while RUNNING returns a skipped report.
 * Threading: callable from any thread; steps run on the threads completing storage and metadata
 * futures and touch only the run's local state.
 */
public final class StreamObjectCompactor {

  private final NodeRef node;
  private final ObjectManager objects;
  private final StreamManager streams;
  private final CompactionIo io;
  private final CompactionConfig config;
  private final AtomicBoolean running = new AtomicBoolean();

  public StreamObjectCompactor(NodeRef node, ObjectManager objects, StreamManager streams, ObjectStorage storage,
      ObjectKeys keys, CompactionConfig config) {
    this.node = node;
    this.objects = objects;
    this.streams = streams;
    this.io = new CompactionIo(storage, keys, config);
    this.config = config;
  }

  /** Runs one bounded stream-object compaction over {@code streamIds}; see the class comment. */
  public CompletableFuture<CompactionReport> runOnce(List<Long> streamIds) {
    if (!running.compareAndSet(false, true)) {
      return CompletableFuture.completedFuture(CompactionReport.skipped("a stream-object compaction run is in progress"));
    }
    CompletableFuture<CompactionReport> run;
    try {
      run = streams.getStreams(streamIds).thenCompose(found -> {
        Map<Long, Long> startOffsets = StreamSetObjectCompactor.startOffsets(found);
        return planAll(new ArrayList<>(startOffsets.keySet()), startOffsets).thenCompose(this::mergeAll);
      });
    } catch (RuntimeException e) {
      run = CompletableFuture.failedFuture(e);
    }
    return run.whenComplete((report, error) -> running.set(false));
  }

  /** Touching stream objects of one stream to merge into one. */
  private record Group(long streamId, List<ObjectMetadata> objects) {}

  /** What is left of the run's bounds. */
  private final class Budget {
    int objects = config.maxObjects();
    long bytes = config.maxBytes();
  }

  /** Plans stream after stream (chained in a loop, not recursively: thousands of streams are fine). */
  private CompletableFuture<List<Group>> planAll(List<Long> streamIds, Map<Long, Long> startOffsets) {
    Budget budget = new Budget();
    List<Group> groups = new ArrayList<>();
    CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
    for (long streamId : streamIds) {
      chain = chain.thenCompose(v -> budget.objects < 2 ? CompletableFuture.completedFuture(null)
          : objects.getStreamObjects(streamId).thenAccept(sos ->
              groups.addAll(groups(sos, streamId, startOffsets.get(streamId), budget))));
    }
    return chain.thenApply(v -> groups);
  }

  /** Groups of two or more touching stream objects within the target size and the run's budget. Pure apart from the budget. */
  private List<Group> groups(List<ObjectMetadata> sos, long streamId, long startOffset, Budget budget) {
    List<ObjectMetadata> sorted = new ArrayList<>(sos);
    sorted.sort(Comparator.comparingLong(o -> rangeOf(o, streamId).startOffset()));
    List<Group> groups = new ArrayList<>();
    List<ObjectMetadata> current = new ArrayList<>();
    long currentBytes = 0;
    for (ObjectMetadata o : sorted) {
      StreamRange r = rangeOf(o, streamId);
      if (r.endOffset() <= startOffset) {
        continue; // trimmed: left to the metadata authority's deletion
      }
      boolean touches = !current.isEmpty() && rangeOf(current.getLast(), streamId).endOffset() == r.startOffset();
      boolean fits = currentBytes + o.sizeBytes() <= config.streamObjectTargetBytes()
          && current.size() < budget.objects && currentBytes + o.sizeBytes() <= budget.bytes;
      if (!touches || !fits) {
        close(streamId, current, currentBytes, groups, budget);
        current = new ArrayList<>();
        currentBytes = 0;
        if (o.sizeBytes() > config.streamObjectTargetBytes() || o.sizeBytes() > budget.bytes || budget.objects < 2) {
          continue;
        }
      }
      current.add(o);
      currentBytes += o.sizeBytes();
    }
    close(streamId, current, currentBytes, groups, budget);
    return groups;
  }

  private static void close(long streamId, List<ObjectMetadata> group, long bytes, List<Group> groups,
      Budget budget) {
    if (group.size() >= 2) {
      groups.add(new Group(streamId, List.copyOf(group)));
      budget.objects -= group.size();
      budget.bytes -= bytes;
    }
  }

  /** Merges group after group; a failed group is recorded and the others still run. */
  private CompletableFuture<CompactionReport> mergeAll(List<Group> groups) {
    List<String> failures = new ArrayList<>();
    CompletableFuture<CompactionReport> chain =
        CompletableFuture.completedFuture(CompactionReport.skipped("nothing to merge"));
    for (Group group : groups) {
      chain = chain.thenCompose(report -> merge(group.streamId(), group.objects()).handle((done, error) -> {
        if (error != null) {
          failures.add("stream " + group.streamId() + " objects "
              + group.objects().stream().map(ObjectMetadata::objectId).toList() + ": "
              + CompactionOutcome.unwrap(error).getMessage());
          return report;
        }
        return report.plus(done);
      }));
    }
    return chain.thenApply(report -> report.withFailures(failures));
  }

  private CompletableFuture<CompactionReport> merge(long streamId, List<ObjectMetadata> group) {
    return io.readAll(group).thenCompose(batches -> {
      List<StreamRecordBatch> ofStream = batches.getOrDefault(streamId, List.of());
      CompactionLayout.Layout layout = CompactionLayout.plan(Map.of(streamId, ofStream), Set.of(),
          StreamSetObjectCompactor.epochs(group), Long.MAX_VALUE, true);
      if (layout.streamObjectRuns().size() != 1 || batches.size() != 1) {
        throw new CompactionAbortedException("stream objects " + group.stream().map(ObjectMetadata::objectId).toList()
            + " of stream " + streamId + " do not hold one gap-free range of that stream only");
      }
      CompactionLayout.Run run = layout.streamObjectRuns().getFirst();
      EncodedObject encoded = io.encode(List.of(run));
      List<Long> sourceIds = group.stream().map(ObjectMetadata::objectId).toList();
      return objects.prepareObjects(node, 1, config.prepareTtlMs()).thenCompose(id -> {
        CoverageCheck.verify(StreamSetObjectCompactor.allSpans(group), StreamSetObjectCompactor.allSpans(group),
            CoverageCheck.spans(id, encoded.index()));
        AtomicBoolean committing = new AtomicBoolean();
        CommitStreamObjectRequest request = new CommitStreamObjectRequest(id, encoded.sizeBytes(),
            StreamSetObjectCompactor.range(run), sourceIds);
        return io.upload(id, encoded)
            .thenCompose(v -> stillLive(streamId, run))
            .thenCompose(v -> {
              committing.set(true);
              return objects.commitStreamObject(node, request);
            })
            .handle((v, error) -> CompactionOutcome.settle(io, List.of(id), committing.get(), error))
            .thenCompose(f -> f)
            .thenApply(v -> new CompactionReport(sourceIds, -1, List.of(id),
                group.stream().mapToLong(ObjectMetadata::sizeBytes).sum(), encoded.sizeBytes(), layout.droppedBytes(),
                null, List.of()));
      });
    });
  }

  private CompletableFuture<Void> stillLive(long streamId, CompactionLayout.Run run) {
    return streams.getStreams(List.of(streamId)).thenAccept(found -> {
      Long start = StreamSetObjectCompactor.startOffsets(found).get(streamId);
      if (start == null || run.endOffset() <= start) {
        throw new CompactionAbortedException("stream " + streamId + " was trimmed to " + start
            + " (null: deleted) past merged range [" + run.startOffset() + ", " + run.endOffset() + ")");
      }
    });
  }

  private static StreamRange rangeOf(ObjectMetadata o, long streamId) {
    StreamRange r = o.rangeOf(streamId);
    if (r == null) {
      throw new CompactionAbortedException("stream object " + o.objectId() + " listed for stream " + streamId
          + " has no range of it");
    }
    return r;
  }
}
