package io.tidemark.stream.metadata;

import io.tidemark.stream.api.OffsetOutOfRangeException;
import io.tidemark.stream.api.StreamFencedException;
import io.tidemark.stream.api.StreamNotFoundException;
import io.tidemark.stream.metadata.MetadataRecord.NodeRegistered;
import io.tidemark.stream.metadata.MetadataRecord.ObjectCommitted;
import io.tidemark.stream.metadata.MetadataRecord.ObjectsDeleted;
import io.tidemark.stream.metadata.MetadataRecord.ObjectsMarkedForDeletion;
import io.tidemark.stream.metadata.MetadataRecord.ObjectsPrepared;
import io.tidemark.stream.metadata.MetadataRecord.StreamClosed;
import io.tidemark.stream.metadata.MetadataRecord.StreamCreated;
import io.tidemark.stream.metadata.MetadataRecord.StreamDeleted;
import io.tidemark.stream.metadata.MetadataRecord.StreamEndAdvanced;
import io.tidemark.stream.metadata.MetadataRecord.StreamOpened;
import io.tidemark.stream.metadata.MetadataRecord.StreamTrimmed;
import io.tidemark.stream.metadata.ObjectMetadata.ObjectKind;
import io.tidemark.stream.metadata.StreamMetadata.StreamState;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * A test fixture: an in-memory metadata authority (node epochs, streams and objects) for the
 * stream module's tests, the broker's unit tests and the storage benchmark, optionally journaled
 * to a local file ({@link #openJournaled}) so that a test can {@code kill -9} a node. The product's
 * only metadata authority, and the only place its commit rules live, is the controller in
 * {@code metadata/}; this fixture mirrors them closely enough to drive the engine without one.
 *
 * <p>Compute, then replay: every handler validates the request against the current state and
 * computes the {@link MetadataRecord}s that express its effect, without mutating anything; the
 * records are appended to the journal (if any, fsync'd) and only then applied by
 * {@link #replay}. A rejected request therefore changes nothing.
 *
 * <p>Objects: PREPARED (id reserved with a time-to-live) → COMMITTED → MARKED_FOR_DELETION
 * (compacted, trimmed away, stream deleted, or prepared and expired) → deleted from object storage
 * by {@link #tick()} after {@link StreamMetadataConfig#objectDeleteDelayMs()}, at most
 * {@link StreamMetadataConfig#objectDeleteBatchMax()} per tick in one batched delete, then forgotten.
 *
 * <p>Threading: every handler and {@link #replay} runs under this instance's monitor; calls return
 * already-completed futures, except {@link #tick()} whose future waits for the object deletes.
 * After a journal write fails the instance refuses every further change (its memory may be
 * ahead of the file); reopen it from the journal.
 */
public final class MemoryStreamMetadata implements StreamManager, ObjectManager, AutoCloseable {

  /** Where records go before they are applied (a journal); throws if they could not be made durable. */
  interface RecordSink extends AutoCloseable {
    void append(List<MetadataRecord> records) throws IOException;

    /** Whether the sink would like to be rewritten from the current state. */
    default boolean wantsCompaction() {
      return false;
    }

    /** Replaces everything written so far by {@code state}. */
    default void compact(List<MetadataRecord> state) throws IOException {}

    @Override
    void close();
  }

  private enum ObjectState { PREPARED, COMMITTED, MARKED_FOR_DELETION }

  private static final class ObjectEntry {
    final long objectId;
    final int nodeId;
    ObjectState state = ObjectState.PREPARED;
    long expiresAtMs;
    ObjectMetadata metadata;
    long markedAtMs;

    ObjectEntry(long objectId, int nodeId, long expiresAtMs) {
      this.objectId = objectId;
      this.nodeId = nodeId;
      this.expiresAtMs = expiresAtMs;
    }
  }

  private static final class StreamEntry {
    final long streamId;
    final Map<String, String> tags;
    long epoch;
    long startOffset;
    long endOffset;
    StreamState state = StreamState.CLOSED;
    int ownerNodeId = -1;
    /** Live (committed, not marked) objects holding this stream, by the start offset of their range. */
    final NavigableMap<Long, Long> objectsByStart = new TreeMap<>();

    StreamEntry(long streamId, Map<String, String> tags) {
      this.streamId = streamId;
      this.tags = tags;
    }

    StreamMetadata snapshot() {
      return new StreamMetadata(streamId, epoch, startOffset, endOffset, state, ownerNodeId, tags);
    }
  }

  private record Result<T>(List<MetadataRecord> records, T response) {}

  private final LongSupplier clockMs;
  private final ObjectStorage storage;
  private final ObjectKeys keys;
  private final StreamMetadataConfig config;
  private RecordSink sink;
  private boolean failed;

  private final Map<Integer, Long> nodeEpochs = new HashMap<>();
  private final TreeMap<Long, StreamEntry> streams = new TreeMap<>();
  private final TreeMap<Long, ObjectEntry> objects = new TreeMap<>();
  private final Set<Long> deleting = new HashSet<>();
  private long nextStreamId;
  private long nextObjectId;
  private ScheduledFuture<?> lifecycleTask;

  /** An in-memory authority (state lost on restart). */
  public MemoryStreamMetadata(LongSupplier clockMs, ObjectStorage storage, ObjectKeys keys, StreamMetadataConfig config) {
    this.clockMs = clockMs;
    this.storage = storage;
    this.keys = keys;
    this.config = config;
  }

  /**
   * An authority journaled to {@code journalFile}: the file is replayed on open (a torn tail from
   * a crash is cut off), and every change is appended and fsync'd before it is applied.
   */
  public static MemoryStreamMetadata openJournaled(Path journalFile, LongSupplier clockMs, ObjectStorage storage,
      ObjectKeys keys, StreamMetadataConfig config) throws IOException {
    return openJournaled(journalFile, clockMs, storage, keys, config, DEFAULT_JOURNAL_COMPACT_BYTES);
  }

  /** Journal files are rewritten from the current state once they pass this size (and doubled since). */
  public static final long DEFAULT_JOURNAL_COMPACT_BYTES = 64L * 1024 * 1024;

  /** As {@link #openJournaled(Path, LongSupplier, ObjectStorage, ObjectKeys, StreamMetadataConfig)}, compacting at {@code journalCompactBytes}. */
  public static MemoryStreamMetadata openJournaled(Path journalFile, LongSupplier clockMs, ObjectStorage storage,
      ObjectKeys keys, StreamMetadataConfig config, long journalCompactBytes) throws IOException {
    MemoryStreamMetadata metadata = new MemoryStreamMetadata(clockMs, storage, keys, config);
    MetadataJournal journal = MetadataJournal.open(journalFile, metadata::replay, journalCompactBytes);
    synchronized (metadata) {
      metadata.sink = journal;
    }
    return metadata;
  }

  /** Runs {@link #tick()} every {@code periodMs} on {@code scheduler} until {@link #close()}. */
  public synchronized void startLifecycle(ScheduledExecutorService scheduler, long periodMs) {
    if (lifecycleTask != null) {
      throw new IllegalStateException("lifecycle already started");
    }
    lifecycleTask = scheduler.scheduleWithFixedDelay(this::tick, periodMs, periodMs, TimeUnit.MILLISECONDS);
  }

  // ---------------------------------------------------------------------------------------------
  // Nodes

  /** Registers (or re-registers after a restart) node {@code nodeId} with a new, higher epoch. */
  public synchronized NodeRef registerNode(int nodeId) {
    if (nodeId < 0) {
      throw new IllegalArgumentException("node id " + nodeId + " must be >= 0");
    }
    long epoch = nodeEpochs.getOrDefault(nodeId, 0L) + 1;
    apply(List.of(new NodeRegistered(nodeId, epoch)));
    return new NodeRef(nodeId, epoch);
  }

  private void requireNode(NodeRef node) {
    Long current = nodeEpochs.get(node.nodeId());
    if (current == null) {
      throw new NodeFencedException("node " + node.nodeId() + " is not registered; register it before use");
    }
    if (current != node.nodeEpoch()) {
      throw new NodeFencedException("node " + node.nodeId() + " epoch " + node.nodeEpoch()
          + " is not current (current epoch " + current + "); this node instance was replaced and must stop");
    }
  }

  // ---------------------------------------------------------------------------------------------
  // StreamManager

  @Override
  public CompletableFuture<Long> createStream(NodeRef node, Map<String, String> tags) {
    return handle(() -> {
      requireNode(node);
      long id = nextStreamId;
      return new Result<>(List.of(new StreamCreated(id, tags)), id);
    });
  }

  @Override
  public CompletableFuture<StreamMetadata> openStream(NodeRef node, long streamId, long epoch) {
    return handle(() -> {
      requireNode(node);
      StreamEntry stream = requireStream(streamId);
      if (epoch < stream.epoch) {
        throw new StreamFencedException("stream " + streamId + " open with epoch " + epoch
            + " is fenced: current epoch is " + stream.epoch);
      }
      if (epoch == stream.epoch && stream.state == StreamState.OPEN && stream.ownerNodeId == node.nodeId()) {
        return new Result<>(List.of(), stream.snapshot());
      }
      StreamMetadata after = new StreamMetadata(streamId, epoch, stream.startOffset, stream.endOffset,
          StreamState.OPEN, node.nodeId(), stream.tags);
      return new Result<>(List.of(new StreamOpened(streamId, epoch, node.nodeId())), after);
    });
  }

  @Override
  public CompletableFuture<Void> closeStream(NodeRef node, long streamId, long epoch) {
    return handle(() -> {
      requireNode(node);
      StreamEntry stream = requireCurrentEpoch(streamId, epoch, "close");
      if (stream.state == StreamState.CLOSED) {
        return new Result<>(List.of(), null);
      }
      requireOwner(stream, node, "close");
      return new Result<>(List.of(new StreamClosed(streamId)), null);
    });
  }

  @Override
  public CompletableFuture<Void> trimStream(NodeRef node, long streamId, long epoch, long newStartOffset) {
    return handle(() -> {
      requireNode(node);
      StreamEntry stream = requireCurrentEpoch(streamId, epoch, "trim");
      if (newStartOffset > stream.endOffset) {
        throw new OffsetOutOfRangeException("cannot trim stream " + streamId + " to " + newStartOffset
            + ": beyond its committed end offset " + stream.endOffset);
      }
      if (newStartOffset <= stream.startOffset) {
        return new Result<>(List.of(), null);
      }
      List<MetadataRecord> records = new ArrayList<>();
      records.add(new StreamTrimmed(streamId, newStartOffset));
      List<Long> dead = deadObjects(stream, Map.of(streamId, newStartOffset), Set.of());
      if (!dead.isEmpty()) {
        records.add(new ObjectsMarkedForDeletion(dead, clockMs.getAsLong()));
      }
      return new Result<>(records, null);
    });
  }

  @Override
  public CompletableFuture<Void> deleteStream(NodeRef node, long streamId, long epoch) {
    return handle(() -> {
      requireNode(node);
      StreamEntry stream = requireCurrentEpoch(streamId, epoch, "delete");
      List<MetadataRecord> records = new ArrayList<>();
      List<Long> dead = deadObjects(stream, Map.of(), Set.of(streamId));
      if (!dead.isEmpty()) {
        records.add(new ObjectsMarkedForDeletion(dead, clockMs.getAsLong()));
      }
      records.add(new StreamDeleted(streamId));
      return new Result<>(records, null);
    });
  }

  @Override
  public synchronized CompletableFuture<List<StreamMetadata>> getStreams(List<Long> streamIds) {
    List<StreamMetadata> result = new ArrayList<>();
    for (long id : streamIds) {
      StreamEntry stream = streams.get(id);
      if (stream != null) {
        result.add(stream.snapshot());
      }
    }
    return CompletableFuture.completedFuture(result);
  }

  @Override
  public CompletableFuture<List<StreamMetadata>> getOpeningStreams(NodeRef node) {
    return handle(() -> {
      requireNode(node);
      List<StreamMetadata> result = new ArrayList<>();
      for (StreamEntry s : streams.values()) {
        if (s.state == StreamState.OPEN && s.ownerNodeId == node.nodeId()) {
          result.add(s.snapshot());
        }
      }
      return new Result<>(List.of(), result);
    });
  }

  // ---------------------------------------------------------------------------------------------
  // ObjectManager

  @Override
  public CompletableFuture<Long> prepareObjects(NodeRef node, int count, long ttlMs) {
    return handle(() -> {
      requireNode(node);
      if (count < 1 || count > config.prepareCountMax()) {
        throw new IllegalArgumentException("prepare count " + count + " must be in [1, " + config.prepareCountMax() + "]");
      }
      if (ttlMs <= 0) {
        throw new IllegalArgumentException("prepare time-to-live " + ttlMs + " ms must be > 0");
      }
      long first = nextObjectId;
      return new Result<>(List.of(new ObjectsPrepared(first, count, node.nodeId(), clockMs.getAsLong() + ttlMs)), first);
    });
  }

  @Override
  public CompletableFuture<Void> commitStreamSetObject(NodeRef node, CommitStreamSetObjectRequest request) {
    return handle(() -> {
      requireNode(node);
      long now = clockMs.getAsLong();
      List<Long> newIds = new ArrayList<>();
      if (request.objectId() != -1) {
        newIds.add(request.objectId());
        if (request.ranges().isEmpty()) {
          throw new InvalidCommitException("stream-set object " + request.objectId() + " has no stream ranges");
        }
      } else if (!request.ranges().isEmpty()) {
        throw new InvalidCommitException("stream ranges " + request.ranges() + " given without a stream-set object id");
      }
      request.streamObjects().forEach(so -> newIds.add(so.objectId()));
      if (newIds.isEmpty()) {
        throw new InvalidCommitException("commit holds no object");
      }
      requirePrepared(node, newIds, now);
      requireOneRangePerStream(request.objectId(), request.ranges());
      List<StreamRange> all = new ArrayList<>(request.ranges());
      request.streamObjects().forEach(so -> all.add(so.range()));
      for (StreamRange r : all) {
        if (r.endOffset() == r.startOffset()) {
          throw new InvalidCommitException("empty range " + r + " in commit of objects " + newIds);
        }
      }
      List<MetadataRecord> records = new ArrayList<>();
      long orderId;
      if (request.compactedObjectIds().isEmpty()) {
        records.addAll(checkUploadRanges(node, all));
        orderId = request.objectId();
      } else {
        orderId = checkCompaction(node, request.compactedObjectIds(), all);
        records.add(0, new ObjectsMarkedForDeletion(request.compactedObjectIds(), now));
      }
      if (request.objectId() != -1) {
        records.add(new ObjectCommitted(request.objectId(), request.objectSizeBytes(), ObjectKind.STREAM_SET,
            node.nodeId(), request.ranges(), orderId, now));
      }
      for (CommitStreamSetObjectRequest.StreamObject so : request.streamObjects()) {
        records.add(new ObjectCommitted(so.objectId(), so.sizeBytes(), ObjectKind.STREAM, node.nodeId(),
            List.of(so.range()), so.objectId(), now));
      }
      return new Result<>(records, null);
    });
  }

  @Override
  public CompletableFuture<Void> commitStreamObject(NodeRef node, CommitStreamObjectRequest request) {
    return handle(() -> {
      requireNode(node);
      long now = clockMs.getAsLong();
      requirePrepared(node, List.of(request.objectId()), now);
      StreamRange range = request.range();
      requireStream(range.streamId());
      if (request.sourceObjectIds().isEmpty()) {
        throw new InvalidCommitException("stream object " + request.objectId() + " replaces no source object");
      }
      List<StreamRange> sources = new ArrayList<>();
      for (long id : new LinkedHashSet<>(request.sourceObjectIds())) {
        ObjectEntry source = objects.get(id);
        if (source == null || source.state != ObjectState.COMMITTED || source.metadata.rangeOf(range.streamId()) == null) {
          throw new InvalidCommitException("source object " + id + " is not a committed object holding stream "
              + range.streamId());
        }
        sources.add(source.metadata.rangeOf(range.streamId()));
      }
      if (sources.size() != request.sourceObjectIds().size()) {
        throw new InvalidCommitException("duplicate source object ids " + request.sourceObjectIds());
      }
      List<long[]> merged = mergeIntervals(sources);
      if (merged.size() != 1 || merged.getFirst()[0] != range.startOffset() || merged.getFirst()[1] != range.endOffset()) {
        throw new InvalidCommitException("stream object " + request.objectId() + " range [" + range.startOffset()
            + ", " + range.endOffset() + ") does not exactly cover its sources " + describe(merged));
      }
      // a stream object source is replaced whole; a stream-set object source only loses this stream's range
      // (the other streams' data stays readable in it), and is replaced whole once it holds no range
      List<Long> replaced = new ArrayList<>();
      List<MetadataRecord> records = new ArrayList<>();
      for (long id : request.sourceObjectIds()) {
        ObjectEntry source = objects.get(id);
        List<StreamRange> left = source.metadata.ranges().stream().filter(r -> r.streamId() != range.streamId()).toList();
        if (left.isEmpty()) {
          replaced.add(id);
        } else {
          ObjectMetadata m = source.metadata;
          records.add(new ObjectCommitted(id, m.sizeBytes(), m.kind(), source.nodeId, left, m.orderId(), m.committedAtMs()));
        }
      }
      if (!replaced.isEmpty()) {
        records.addFirst(new ObjectsMarkedForDeletion(replaced, now));
      }
      records.add(new ObjectCommitted(request.objectId(), request.sizeBytes(), ObjectKind.STREAM, node.nodeId(),
          List.of(range), request.objectId(), now));
      return new Result<>(records, null);
    });
  }

  @Override
  public synchronized CompletableFuture<List<ObjectMetadata>> getObjects(long streamId, long startOffset,
      long endOffset, int limit) {
    List<ObjectMetadata> result = new ArrayList<>();
    StreamEntry stream = streams.get(streamId);
    if (stream == null || limit < 1 || endOffset <= startOffset) {
      return CompletableFuture.completedFuture(result);
    }
    Long floor = stream.objectsByStart.floorKey(startOffset);
    for (Map.Entry<Long, Long> e : stream.objectsByStart.tailMap(floor == null ? startOffset : floor, true).entrySet()) {
      if (e.getKey() >= endOffset || result.size() >= limit) {
        break;
      }
      ObjectMetadata object = objects.get(e.getValue()).metadata;
      if (object.rangeOf(streamId).endOffset() > startOffset) {
        result.add(object);
      }
    }
    return CompletableFuture.completedFuture(result);
  }

  @Override
  public synchronized CompletableFuture<List<ObjectMetadata>> getStreamSetObjects(int nodeId) {
    List<ObjectMetadata> result = new ArrayList<>();
    for (ObjectEntry e : objects.values()) {
      if (e.state == ObjectState.COMMITTED && e.nodeId == nodeId && e.metadata.kind() == ObjectKind.STREAM_SET) {
        result.add(e.metadata);
      }
    }
    result.sort(Comparator.comparingLong(ObjectMetadata::orderId));
    return CompletableFuture.completedFuture(result);
  }

  @Override
  public synchronized CompletableFuture<List<ObjectMetadata>> getStreamObjects(long streamId) {
    List<ObjectMetadata> result = new ArrayList<>();
    StreamEntry stream = streams.get(streamId);
    if (stream != null) {
      for (long id : stream.objectsByStart.values()) {
        ObjectMetadata object = objects.get(id).metadata;
        if (object.kind() == ObjectKind.STREAM) {
          result.add(object);
        }
      }
    }
    return CompletableFuture.completedFuture(result);
  }

  // ---------------------------------------------------------------------------------------------
  // Lifecycle: expiry of prepared objects and delayed, batched deletion

  /**
   * Marks expired prepared objects for deletion and deletes (in one batched request) up to
   * {@code objectDeleteBatchMax} objects whose deletion delay has passed; completes when that
   * delete has finished and been recorded. Objects whose delete failed are retried next tick.
   */
  public CompletableFuture<Void> tick() {
    List<Long> batch = new ArrayList<>();
    synchronized (this) {
      if (failed) {
        return CompletableFuture.failedFuture(new MetadataException("metadata journal failed; reopen it"));
      }
      long now = clockMs.getAsLong();
      List<Long> expired = new ArrayList<>();
      for (ObjectEntry e : objects.values()) {
        if (e.state == ObjectState.PREPARED && e.expiresAtMs <= now) {
          expired.add(e.objectId);
        }
      }
      if (!expired.isEmpty()) {
        apply(List.of(new ObjectsMarkedForDeletion(expired, now)));
      }
      for (ObjectEntry e : objects.values()) {
        if (batch.size() >= config.objectDeleteBatchMax()) {
          break;
        }
        if (e.state == ObjectState.MARKED_FOR_DELETION && e.markedAtMs + config.objectDeleteDelayMs() <= now
            && !deleting.contains(e.objectId)) {
          batch.add(e.objectId);
        }
      }
      deleting.addAll(batch);
    }
    if (batch.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    List<String> objectKeys = batch.stream().map(keys::key).toList();
    return storage.delete(objectKeys).handle((v, error) -> {
      synchronized (this) {
        batch.forEach(deleting::remove);
        if (error == null && !failed) {
          apply(List.of(new ObjectsDeleted(batch)));
        }
      }
      return null;
    });
  }

  /** How many objects are in each state (for metrics and tests): PREPARED, COMMITTED, MARKED_FOR_DELETION. */
  public synchronized Map<String, Integer> objectCounts() {
    Map<String, Integer> counts = new TreeMap<>();
    for (ObjectState s : ObjectState.values()) {
      counts.put(s.name(), 0);
    }
    objects.values().forEach(e -> counts.merge(e.state.name(), 1, Integer::sum));
    return counts;
  }

  @Override
  public synchronized void close() {
    if (lifecycleTask != null) {
      lifecycleTask.cancel(false);
    }
    if (sink != null) {
      sink.close();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Replay: the only place that mutates state

  /** Applies one record; used for live changes and for journal replay alike. */
  public synchronized void replay(MetadataRecord record) {
    switch (record) {
      case MetadataRecord.IdsReserved r -> {
        nextStreamId = Math.max(nextStreamId, r.nextStreamId());
        nextObjectId = Math.max(nextObjectId, r.nextObjectId());
      }
      case NodeRegistered r -> nodeEpochs.put(r.nodeId(), r.nodeEpoch());
      case StreamCreated r -> {
        streams.put(r.streamId(), new StreamEntry(r.streamId(), r.tags()));
        nextStreamId = Math.max(nextStreamId, r.streamId() + 1);
      }
      case StreamOpened r -> {
        StreamEntry s = streams.get(r.streamId());
        s.epoch = r.epoch();
        s.state = StreamState.OPEN;
        s.ownerNodeId = r.nodeId();
      }
      case StreamClosed r -> {
        StreamEntry s = streams.get(r.streamId());
        s.state = StreamState.CLOSED;
        s.ownerNodeId = -1;
      }
      case StreamTrimmed r -> streams.get(r.streamId()).startOffset = r.startOffset();
      case StreamDeleted r -> streams.remove(r.streamId());
      case StreamEndAdvanced r -> streams.get(r.streamId()).endOffset = r.endOffset();
      case ObjectsPrepared r -> {
        for (int i = 0; i < r.count(); i++) {
          long id = r.firstObjectId() + i;
          objects.put(id, new ObjectEntry(id, r.nodeId(), r.expiresAtMs()));
        }
        nextObjectId = Math.max(nextObjectId, r.firstObjectId() + r.count());
      }
      case ObjectCommitted r -> {
        ObjectEntry e = objects.get(r.objectId());
        if (e.state == ObjectState.COMMITTED) {
          // a stream-set object that lost a stream's range to a rewrite: re-index its ranges
          for (StreamRange range : e.metadata.ranges()) {
            StreamEntry s = streams.get(range.streamId());
            if (s != null) {
              s.objectsByStart.remove(range.startOffset(), r.objectId());
            }
          }
        }
        e.state = ObjectState.COMMITTED;
        e.metadata = new ObjectMetadata(r.objectId(), r.sizeBytes(), r.kind(), r.ranges(), r.orderId(),
            r.committedAtMs());
        for (StreamRange range : r.ranges()) {
          StreamEntry s = streams.get(range.streamId());
          if (s != null) {
            s.objectsByStart.put(range.startOffset(), r.objectId());
          }
        }
      }
      case ObjectsMarkedForDeletion r -> {
        for (long id : r.objectIds()) {
          ObjectEntry e = objects.get(id);
          if (e == null) {
            continue;
          }
          if (e.state == ObjectState.COMMITTED) {
            for (StreamRange range : e.metadata.ranges()) {
              StreamEntry s = streams.get(range.streamId());
              if (s != null) {
                s.objectsByStart.remove(range.startOffset(), id);
              }
            }
          }
          e.state = ObjectState.MARKED_FOR_DELETION;
          e.markedAtMs = r.markedAtMs();
        }
      }
      case ObjectsDeleted r -> r.objectIds().forEach(objects::remove);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers (pure: read state, never mutate)

  private synchronized <T> CompletableFuture<T> handle(Supplier<Result<T>> handler) {
    try {
      if (failed) {
        throw new MetadataException("metadata journal failed earlier; reopen the metadata from its journal");
      }
      Result<T> result = handler.get();
      apply(result.records());
      return CompletableFuture.completedFuture(result.response());
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private void apply(List<MetadataRecord> records) {
    if (records.isEmpty()) {
      return;
    }
    if (sink != null) {
      try {
        sink.append(records);
      } catch (IOException | RuntimeException e) {
        failed = true;
        throw new MetadataException("could not write the metadata journal (" + e + "); the metadata refuses "
            + "further changes until reopened");
      }
    }
    records.forEach(this::replay);
    if (sink != null && sink.wantsCompaction()) {
      try {
        sink.compact(stateRecords());
      } catch (IOException | RuntimeException e) {
        // the old journal is intact (compaction replaces it atomically); try again after the next change
        System.getLogger(MemoryStreamMetadata.class.getName()).log(System.Logger.Level.WARNING,
            "metadata journal compaction failed; keeping the full journal", e);
      }
    }
  }

  /** Records that rebuild the current state from nothing (journal compaction). */
  List<MetadataRecord> stateRecords() {
    List<MetadataRecord> records = new ArrayList<>();
    records.add(new MetadataRecord.IdsReserved(nextStreamId, nextObjectId));
    nodeEpochs.forEach((nodeId, epoch) -> records.add(new NodeRegistered(nodeId, epoch)));
    for (StreamEntry s : streams.values()) {
      records.add(new StreamCreated(s.streamId, s.tags));
      if (s.state == StreamState.OPEN) {
        records.add(new StreamOpened(s.streamId, s.epoch, s.ownerNodeId));
      } else if (s.epoch != 0) {
        records.add(new StreamOpened(s.streamId, s.epoch, -1));
        records.add(new StreamClosed(s.streamId));
      }
      if (s.startOffset != 0) {
        records.add(new StreamTrimmed(s.streamId, s.startOffset));
      }
      if (s.endOffset != 0) {
        records.add(new StreamEndAdvanced(s.streamId, s.endOffset));
      }
    }
    for (ObjectEntry e : objects.values()) {
      records.add(new ObjectsPrepared(e.objectId, 1, e.nodeId, e.expiresAtMs));
      if (e.state == ObjectState.COMMITTED) {
        ObjectMetadata m = e.metadata;
        records.add(new ObjectCommitted(m.objectId(), m.sizeBytes(), m.kind(), e.nodeId, m.ranges(), m.orderId(),
            m.committedAtMs()));
      } else if (e.state == ObjectState.MARKED_FOR_DELETION) {
        records.add(new ObjectsMarkedForDeletion(List.of(e.objectId), e.markedAtMs));
      }
    }
    return records;
  }

  private StreamEntry requireStream(long streamId) {
    StreamEntry stream = streams.get(streamId);
    if (stream == null) {
      throw new StreamNotFoundException("stream " + streamId + " does not exist");
    }
    return stream;
  }

  private StreamEntry requireCurrentEpoch(long streamId, long epoch, String operation) {
    StreamEntry stream = requireStream(streamId);
    if (epoch != stream.epoch) {
      throw new StreamFencedException("cannot " + operation + " stream " + streamId + " with epoch " + epoch
          + ": its current epoch is " + stream.epoch);
    }
    return stream;
  }

  private static void requireOwner(StreamEntry stream, NodeRef node, String operation) {
    if (stream.state != StreamState.OPEN || stream.ownerNodeId != node.nodeId()) {
      throw new StreamFencedException("node " + node.nodeId() + " cannot " + operation + " stream " + stream.streamId
          + ": it is " + stream.state + " on node " + stream.ownerNodeId + " at epoch " + stream.epoch);
    }
  }

  private void requirePrepared(NodeRef node, List<Long> ids, long now) {
    if (new HashSet<>(ids).size() != ids.size()) {
      throw new InvalidCommitException("duplicate object ids in commit: " + ids);
    }
    for (long id : ids) {
      ObjectEntry e = objects.get(id);
      if (e == null) {
        throw new InvalidCommitException("object " + id + " was never prepared (or is long gone)");
      }
      if (e.state == ObjectState.COMMITTED) {
        throw new InvalidCommitException("object " + id + " is already committed");
      }
      if (e.state == ObjectState.MARKED_FOR_DELETION) {
        throw new InvalidCommitException("object " + id + " expired or was marked for deletion; upload it again "
            + "under a new id");
      }
      if (e.expiresAtMs <= now) {
        throw new InvalidCommitException("object " + id + " prepared until " + e.expiresAtMs + " has expired (now "
            + now + ")");
      }
      if (e.nodeId != node.nodeId()) {
        throw new InvalidCommitException("object " + id + " was prepared by node " + e.nodeId + ", not node "
            + node.nodeId());
      }
    }
  }

  private static void requireOneRangePerStream(long objectId, List<StreamRange> ranges) {
    Set<Long> seen = new HashSet<>();
    for (StreamRange r : ranges) {
      if (!seen.add(r.streamId())) {
        throw new InvalidCommitException("stream-set object " + objectId + " has more than one range of stream "
            + r.streamId());
      }
    }
  }

  /** Checks epochs, ownership and continuity of an upload; returns the end-offset records. */
  private List<MetadataRecord> checkUploadRanges(NodeRef node, List<StreamRange> ranges) {
    Map<Long, List<StreamRange>> byStream = new TreeMap<>();
    ranges.forEach(r -> byStream.computeIfAbsent(r.streamId(), k -> new ArrayList<>()).add(r));
    List<MetadataRecord> records = new ArrayList<>();
    for (Map.Entry<Long, List<StreamRange>> e : byStream.entrySet()) {
      StreamEntry stream = requireStream(e.getKey());
      List<StreamRange> list = e.getValue();
      list.sort(Comparator.comparingLong(StreamRange::startOffset));
      long expected = stream.endOffset;
      for (StreamRange r : list) {
        if (r.epoch() != stream.epoch) {
          throw new StreamFencedException("commit of stream " + stream.streamId + " with epoch " + r.epoch()
              + " is fenced: current epoch is " + stream.epoch);
        }
        requireOwner(stream, node, "commit to");
        if (r.startOffset() != expected) {
          throw new InvalidCommitException("range [" + r.startOffset() + ", " + r.endOffset() + ") of stream "
              + stream.streamId + " does not start at its end offset " + expected
              + (r.startOffset() > expected ? " (gap)" : " (overlap)"));
        }
        expected = r.endOffset();
      }
      records.add(new StreamEndAdvanced(stream.streamId, expected));
    }
    return records;
  }

  /** Checks that the compaction outputs exactly cover its inputs; returns the output order id. */
  private long checkCompaction(NodeRef node, List<Long> compacted, List<StreamRange> outputs) {
    if (new HashSet<>(compacted).size() != compacted.size()) {
      throw new InvalidCommitException("duplicate compacted object ids " + compacted);
    }
    long orderId = Long.MAX_VALUE;
    Map<Long, List<StreamRange>> inputs = new TreeMap<>();
    for (long id : compacted) {
      ObjectEntry e = objects.get(id);
      if (e == null || e.state != ObjectState.COMMITTED || e.metadata.kind() != ObjectKind.STREAM_SET
          || e.nodeId != node.nodeId()) {
        throw new InvalidCommitException("compacted object " + id + " is not a committed stream-set object of node "
            + node.nodeId());
      }
      orderId = Math.min(orderId, e.metadata.orderId());
      e.metadata.ranges().forEach(r -> inputs.computeIfAbsent(r.streamId(), k -> new ArrayList<>()).add(r));
    }
    Map<Long, List<StreamRange>> out = new TreeMap<>();
    outputs.forEach(r -> out.computeIfAbsent(r.streamId(), k -> new ArrayList<>()).add(r));
    for (Map.Entry<Long, List<StreamRange>> e : out.entrySet()) {
      List<StreamRange> in = inputs.get(e.getKey());
      if (in == null) {
        throw new InvalidCommitException("compaction output holds stream " + e.getKey() + " absent from its inputs");
      }
      List<long[]> outMerged = mergeIntervals(e.getValue());
      List<long[]> inMerged = mergeIntervals(in);
      if (!sameIntervals(outMerged, inMerged)) {
        throw new InvalidCommitException("compaction output of stream " + e.getKey() + " covers " + describe(outMerged)
            + " but its inputs cover " + describe(inMerged));
      }
    }
    for (Map.Entry<Long, List<StreamRange>> e : inputs.entrySet()) {
      if (!out.containsKey(e.getKey())) {
        StreamEntry stream = streams.get(e.getKey());
        long inputEnd = e.getValue().stream().mapToLong(StreamRange::endOffset).max().orElse(0);
        if (stream != null && stream.startOffset < inputEnd) {
          throw new InvalidCommitException("compaction dropped live data of stream " + e.getKey() + " below offset "
              + inputEnd + " (stream start offset " + stream.startOffset + ")");
        }
      }
    }
    return orderId;
  }

  /** Objects holding {@code stream} that would be dead once starts move to {@code newStarts} and {@code deleted} go. */
  private List<Long> deadObjects(StreamEntry stream, Map<Long, Long> newStarts, Set<Long> deleted) {
    List<Long> dead = new ArrayList<>();
    for (long id : new LinkedHashSet<>(stream.objectsByStart.values())) {
      ObjectMetadata object = objects.get(id).metadata;
      boolean allDead = true;
      for (StreamRange r : object.ranges()) {
        StreamEntry s = streams.get(r.streamId());
        boolean rangeDead = s == null || deleted.contains(r.streamId())
            || r.endOffset() <= newStarts.getOrDefault(r.streamId(), s.startOffset);
        if (!rangeDead) {
          allDead = false;
          break;
        }
      }
      if (allDead) {
        dead.add(id);
      }
    }
    return dead;
  }

  private static List<long[]> mergeIntervals(List<StreamRange> ranges) {
    List<StreamRange> sorted = new ArrayList<>(ranges);
    sorted.sort(Comparator.comparingLong(StreamRange::startOffset));
    List<long[]> merged = new ArrayList<>();
    for (StreamRange r : sorted) {
      if (!merged.isEmpty() && merged.getLast()[1] > r.startOffset()) {
        throw new InvalidCommitException("ranges of stream " + r.streamId() + " overlap at offset " + r.startOffset());
      }
      if (!merged.isEmpty() && merged.getLast()[1] == r.startOffset()) {
        merged.getLast()[1] = r.endOffset();
      } else {
        merged.add(new long[] {r.startOffset(), r.endOffset()});
      }
    }
    return merged;
  }

  private static boolean sameIntervals(List<long[]> a, List<long[]> b) {
    if (a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      if (a.get(i)[0] != b.get(i)[0] || a.get(i)[1] != b.get(i)[1]) {
        return false;
      }
    }
    return true;
  }

  private static String describe(List<long[]> intervals) {
    StringBuilder sb = new StringBuilder();
    for (long[] i : intervals) {
      sb.append('[').append(i[0]).append(", ").append(i[1]).append(')');
    }
    return sb.toString();
  }
}
