package io.tidemark.stream.read;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.api.StreamException;
import io.tidemark.stream.cache.BlockCache;
import io.tidemark.stream.cache.BlockKey;
import io.tidemark.stream.engine.ColdReader;
import io.tidemark.stream.metadata.ObjectManager;
import io.tidemark.stream.metadata.ObjectMetadata;
import io.tidemark.stream.metadata.StreamRange;
import io.tidemark.stream.object.CorruptObjectException;
import io.tidemark.stream.object.DataBlock;
import io.tidemark.stream.object.IndexEntry;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.object.ObjectReader;
import io.tidemark.stream.object.StreamRecordBatch;
import io.tidemark.stream.objectstore.ObjectNotFoundException;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.LongSupplier;

/**
 * Reads committed stream data back from object storage: locates the objects holding an offset
 * range through {@link ObjectManager#getObjects} (the local metadata image, no RPC), opens each
 * object's index through the {@link ObjectIndexCache}, then fetches only the data blocks needed
 * with ranged GETs through the {@link BlockCache} (adjacent blocks of one pass share one GET of at
 * most {@value #MAX_GET_BYTES} bytes, see {@link CoalescedGets}), and starts adaptive read-ahead
 * ({@link ReadAheadTracker}) for sequential readers. One read fetches from up to
 * {@code stream.cold.read.parallel.objects} objects at once (their indexes, then its blocks within
 * its byte budget), so a stream spread over many stream-set objects costs one GET round trip per
 * lookup, not one per object.
 *
 * <p>Result semantics are those of {@link io.tidemark.stream.api.Stream#fetch}: whole batches,
 * the first one holding {@code startOffset}; batches until {@code endOffset} or until their
 * payloads total {@code maxBytes}, at least one when any exists. An empty list means no committed
 * object holds {@code startOffset} or anything after it. An offset inside the committed range that
 * no object holds fails with {@link ColdDataMissingException}; a corrupt or truncated object fails
 * with {@link CorruptObjectException} naming its key (the bad block is dropped from the cache).
 * An object deleted between lookup and GET (replaced by compaction) is looked up again, at most
 * {@value #MAX_RELOOKUPS} times per read.
 *
 * <p>Threading: every step after the call runs on the {@link ColdReadExecutor}, never on the
 * caller's thread and never on the append path; object-store GETs are bounded by the
 * {@link GetLimiter}, cold reads in progress by the executor's admission bound. The reader holds
 * no per-read mutable state outside one {@code ReadTask} that is only touched by one step at a
 * time (steps run one after another through future chaining).
 */
public final class CachedColdReader implements ColdReader, AutoCloseable {

  static final int OBJECTS_PER_LOOKUP = 8;
  static final int MAX_RELOOKUPS = 2;
  /** How many objects past the last one read read-ahead may open. */
  static final int READAHEAD_OBJECTS = 4;
  /** Adjacent blocks are fetched together in ranged GETs of at most this many bytes. */
  static final long MAX_GET_BYTES = 8L << 20;

  private final ObjectManager objects;
  private final ObjectKeys keys;
  private final LimitedGets storage;
  private final GetLimiter limiter;
  private final BlockCache blockCache;
  private final ObjectIndexCache indexCache;
  private final ReadAheadTracker readAhead;
  private final ColdReadExecutor executor;
  private final boolean ownsExecutor;
  private final int parallelObjects;
  private final int objectsPerLookup;
  private final Counter reads;
  private final Counter bytesRead;
  private final Counter readAheadSkipped;

  CachedColdReader(ObjectManager objects, ObjectStorage storage, ObjectKeys keys, BlockCache blockCache,
      ReadAheadTracker readAhead, GetLimiter limiter, ColdReadExecutor executor, boolean ownsExecutor,
      long indexCacheBytes, int parallelObjects, MeterRegistry registry) {
    this.objects = objects;
    this.parallelObjects = parallelObjects;
    this.objectsPerLookup = Math.max(OBJECTS_PER_LOOKUP, parallelObjects);
    this.keys = keys;
    this.limiter = limiter;
    this.storage = new LimitedGets(storage, limiter);
    this.blockCache = blockCache;
    this.indexCache = new ObjectIndexCache(this.storage, indexCacheBytes, registry);
    this.readAhead = readAhead;
    this.executor = executor;
    this.ownsExecutor = ownsExecutor;
    this.reads = registry.counter("tidemark.stream.cold.read.requests");
    this.bytesRead = registry.counter("tidemark.stream.cold.read.bytes");
    this.readAheadSkipped = registry.counter("tidemark.stream.readahead.skipped");
  }

  /** A reader with its own caches, limiter and executor, all sized from {@code config}. */
  public static CachedColdReader create(ReadConfig config, ObjectManager objects, ObjectStorage storage,
      ObjectKeys keys, MeterRegistry registry, LongSupplier clockMs) {
    BlockCache blockCache = new BlockCache(config.blockCacheSizeBytes(), config.readAheadCacheSharePercent() / 100.0,
        registry);
    GetLimiter limiter = new GetLimiter(config.coldReadMaxInflightGets(), config.coldReadMaxPending());
    return new CachedColdReader(objects, storage, keys, blockCache, ReadAheadTracker.of(config, clockMs), limiter,
        ColdReadExecutor.of(config), true, config.indexCacheSizeBytes(), config.coldReadParallelObjects(), registry);
  }

  /** See the class comment for the result semantics. */
  @Override
  public CompletableFuture<List<StreamBatch>> read(long streamId, long startOffset, long endOffset, int maxBytes) {
    if (startOffset < 0 || endOffset < startOffset || maxBytes < 0) {
      return CompletableFuture.failedFuture(new IllegalArgumentException("bad cold read of stream " + streamId
          + ": [" + startOffset + ", " + endOffset + ") maxBytes " + maxBytes));
    }
    reads.increment();
    return executor.admit(() -> new ReadTask(streamId, startOffset, endOffset, maxBytes).run());
  }

  public BlockCache blockCache() {
    return blockCache;
  }

  public GetLimiter limiter() {
    return limiter;
  }

  @Override
  public void close() {
    if (ownsExecutor) {
      executor.close();
    }
  }

  /** One read in progress: a cursor moving through the objects of one stream. */
  private final class ReadTask {
    final long streamId;
    final long startOffset;
    final long endOffset;
    final int maxBytes;
    final List<StreamBatch> out = new ArrayList<>();
    long cursor;
    long bytes;
    int relookups;
    ObjectMetadata lastObject;
    IndexEntry lastEntry;

    ReadTask(long streamId, long startOffset, long endOffset, int maxBytes) {
      this.streamId = streamId;
      this.startOffset = startOffset;
      this.endOffset = endOffset;
      this.maxBytes = maxBytes;
      this.cursor = startOffset;
    }

    boolean done() {
      return cursor >= endOffset || (!out.isEmpty() && bytes >= maxBytes);
    }

    CompletableFuture<List<StreamBatch>> run() {
      return lookup().thenApply(v -> finish());
    }

    private CompletableFuture<Void> lookup() {
      if (done()) {
        return CompletableFuture.completedFuture(null);
      }
      long cursorBefore = cursor;
      return objects.getObjects(streamId, cursor, endOffset, objectsPerLookup)
          .thenComposeAsync(found -> {
            warmFollowingObjects(found);
            return readObjects(found, 0, cursorBefore);
          }, executor)
          .exceptionallyComposeAsync(this::retryIfReplaced, executor);
    }

    private CompletableFuture<Void> retryIfReplaced(Throwable error) {
      Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
      if (cause instanceof ObjectNotFoundException && relookups < MAX_RELOOKUPS) {
        relookups++;
        return lookup();
      }
      return CompletableFuture.failedFuture(cause);
    }

    private CompletableFuture<Void> readObjects(List<ObjectMetadata> found, int i, long cursorAtLookup) {
      if (done()) {
        return CompletableFuture.completedFuture(null);
      }
      if (i == found.size()) {
        boolean more = found.size() == objectsPerLookup && cursor > cursorAtLookup;
        return more ? lookup() : CompletableFuture.completedFuture(null);
      }
      ObjectMetadata object = found.get(i);
      StreamRange range = rangeHolding(object);
      if (range == null) {
        return readObjects(found, i + 1, cursorAtLookup);
      }
      if (range.startOffset() > cursor) {
        if (!out.isEmpty()) {
          return CompletableFuture.completedFuture(null);
        }
        return CompletableFuture.failedFuture(new ColdDataMissingException("offset " + cursor + " of stream "
            + streamId + " is in no committed object; the next data starts at offset " + range.startOffset()
            + " in object " + object.objectId()));
      }
      String key = keys.key(object.objectId());
      return indexCache.open(object.objectId(), key, object.sizeBytes())
          .thenComposeAsync(reader -> readBlocks(object, reader, range), executor)
          // The same object again: it may hold more of the range than the blocks just read.
          .thenComposeAsync(v -> readObjects(found, i, cursorAtLookup), executor)
          .exceptionallyComposeAsync(error -> {
            indexCache.forget(object.objectId());
            return CompletableFuture.failedFuture(error);
          }, executor);
    }

    /**
     * Starts, beside the walk, the GETs this read will need from the objects after the first one of
     * a lookup: their indexes at once, then the blocks of this stream in offset order within the
     * bytes the read still wants. A stream's data spread over many stream-set objects is then
     * fetched with one GET per object in parallel instead of one object after another; the walk
     * itself stays the only thing that decides what the read returns (it finds these blocks in the
     * {@link BlockCache}, loaded or loading: one GET per block either way). Like read-ahead, it
     * starts a GET only while the {@link GetLimiter} has spare capacity, so demand reads keep
     * their permits; failures are left to the walk, which reports them.
     */
    private void warmFollowingObjects(List<ObjectMetadata> found) {
      long budget = maxBytes - bytes;
      long from = cursor;
      List<ObjectMetadata> holding = new ArrayList<>();
      List<StreamRange> ranges = new ArrayList<>();
      for (ObjectMetadata object : found) {
        StreamRange range = rangeHolding(object);
        if (range != null && holding.size() < parallelObjects) {
          holding.add(object);
          ranges.add(range);
        }
      }
      if (holding.size() < 2 || budget <= 0 || !limiter.hasSpareCapacity()) {
        return;
      }
      ObjectMetadata firstObject = holding.getFirst();
      // The first object's index (which the walk opens too, one shared open) says whether the read goes past it.
      indexCache.open(firstObject.objectId(), keys.key(firstObject.objectId()), firstObject.sizeBytes())
          .thenComposeAsync(first -> {
            long[] plan = {from, 0}; // next offset, bytes planned
            if (!planObject(first, firstObject, ranges.getFirst(), plan, budget, false)) {
              return CompletableFuture.completedFuture(null);
            }
            List<CompletableFuture<ObjectReader>> indexes = new ArrayList<>();
            for (int k = 1; k < holding.size() && limiter.hasSpareCapacity(); k++) {
              ObjectMetadata object = holding.get(k);
              indexes.add(indexCache.open(object.objectId(), keys.key(object.objectId()), object.sizeBytes()));
            }
            return CompletableFuture.allOf(indexes.toArray(CompletableFuture[]::new)).thenRunAsync(() -> {
              for (int k = 0; k < indexes.size(); k++) {
                if (!planObject(indexes.get(k).join(), holding.get(k + 1), ranges.get(k + 1), plan, budget, true)) {
                  return;
                }
              }
            }, executor);
          }, executor)
          .exceptionally(error -> null);
    }

    /**
     * Walks this stream's blocks of one object from {@code plan[0]} within the budget, starting their
     * GETs when {@code fetch}; false when the read ends here (budget spent, a gap, no spare GETs).
     */
    private boolean planObject(ObjectReader reader, ObjectMetadata object, StreamRange range, long[] plan, long budget,
        boolean fetch) {
      if (range.startOffset() > plan[0]) {
        return false; // a gap: the walk stops (or fails) there
      }
      CoalescedGets gets = new CoalescedGets(storage, reader.key(), MAX_GET_BYTES);
      try {
        for (IndexEntry e : reader.find(streamId, plan[0], Math.min(endOffset, range.endOffset()))) {
          if (plan[1] >= budget || (fetch && !limiter.hasSpareCapacity())) {
            return false;
          }
          if (fetch) {
            blockCache.read(new BlockKey(object.objectId(), e.blockPosition()), e.blockSizeBytes(), () -> gets.add(e))
                .exceptionally(error -> null);
          }
          plan[1] += e.blockSizeBytes();
          plan[0] = e.endOffset();
        }
      } finally {
        gets.flush();
      }
      plan[0] = Math.max(plan[0], range.endOffset());
      return plan[1] < budget && plan[0] < endOffset;
    }

    /** The range of this stream in {@code object} that ends after the cursor (objects may hold several). */
    private StreamRange rangeHolding(ObjectMetadata object) {
      StreamRange best = null;
      for (StreamRange r : object.ranges()) {
        if (r.streamId() == streamId && r.endOffset() > cursor && (best == null || r.startOffset() < best.startOffset())) {
          best = r;
        }
      }
      return best;
    }

    private CompletableFuture<Void> readBlocks(ObjectMetadata object, ObjectReader reader, StreamRange range) {
      List<IndexEntry> needed = new ArrayList<>();
      long planned = bytes;
      for (IndexEntry e : reader.find(streamId, cursor, Math.min(endOffset, range.endOffset()))) {
        needed.add(e);
        planned += e.blockSizeBytes();
        if (planned >= maxBytes) {
          break;
        }
      }
      if (needed.isEmpty()) {
        return CompletableFuture.failedFuture(new CorruptObjectException(reader.key(), "index has no block of stream "
            + streamId + " at offset " + cursor + " although its metadata range is " + range));
      }
      List<CompletableFuture<DataBlock>> blocks = new ArrayList<>(needed.size());
      CoalescedGets gets = new CoalescedGets(storage, reader.key(), MAX_GET_BYTES);
      try {
        for (IndexEntry e : needed) {
          blocks.add(readBlock(object.objectId(), reader.key(), e, gets));
        }
      } finally {
        gets.flush();
      }
      long cursorBefore = cursor;
      return CompletableFuture.allOf(blocks.toArray(CompletableFuture[]::new)).thenRun(() -> {
        for (CompletableFuture<DataBlock> block : blocks) {
          take(block.join());
          if (done()) {
            break;
          }
        }
        lastObject = object;
        lastEntry = needed.getLast();
        if (cursor == cursorBefore && !done()) {
          throw new CorruptObjectException(reader.key(), "blocks " + needed + " listed for offset " + cursorBefore
              + " of stream " + streamId + " do not hold it");
        }
      });
    }

    private void take(DataBlock block) {
      for (StreamRecordBatch batch : block.batches()) {
        if (batch.nextOffset() <= cursor) {
          continue;
        }
        if (done()) {
          return;
        }
        out.add(batch.toStreamBatch());
        bytes += batch.payloadBytes();
        cursor = batch.nextOffset();
      }
    }

    private List<StreamBatch> finish() {
      bytesRead.increment(bytes);
      if (lastEntry != null) {
        long window = readAhead.onRead(streamId, startOffset, cursor);
        if (window > 0) {
          ObjectMetadata object = lastObject;
          IndexEntry after = lastEntry;
          executor.execute(() -> readAhead(streamId, object, after, window));
        }
      }
      return List.copyOf(out);
    }
  }

  /** Reads one block through the cache; a block that fails to decode is dropped from the cache. */
  private CompletableFuture<DataBlock> readBlock(long objectId, String key, IndexEntry entry, CoalescedGets gets) {
    BlockKey blockKey = new BlockKey(objectId, entry.blockPosition());
    return blockCache.read(blockKey, entry.blockSizeBytes(), () -> gets.add(entry))
        .thenApplyAsync(bytes -> {
          try {
            return DataBlock.decode(key, entry, bytes);
          } catch (CorruptObjectException e) {
            blockCache.invalidate(blockKey);
            throw e;
          }
        }, executor);
  }

  /**
   * Fills the block cache with the blocks of {@code streamId} after {@code after}, up to
   * {@code windowBytes}, first in the same object, then in the next few objects. Stops as soon as
   * the cache is under pressure or the GET limiter has no spare capacity. Runs on the executor;
   * failures are ignored (a later demand read reports them).
   */
  private void readAhead(long streamId, ObjectMetadata object, IndexEntry after, long windowBytes) {
    if (!roomForReadAhead()) {
      readAheadSkipped.increment();
      return;
    }
    long[] budget = {windowBytes};
    indexCache.open(object.objectId(), keys.key(object.objectId()), object.sizeBytes())
        .thenAcceptAsync(reader -> prefetch(object.objectId(), reader, streamId, after.endOffset(), budget), executor)
        .thenComposeAsync(v -> budget[0] > 0 && roomForReadAhead()
            ? objects.getObjects(streamId, after.endOffset(), Long.MAX_VALUE, READAHEAD_OBJECTS + 1)
            : CompletableFuture.completedFuture(List.<ObjectMetadata>of()), executor)
        .thenComposeAsync(next -> prefetchObjects(streamId, next, 0, object.objectId(), after.endOffset(), budget),
            executor)
        .exceptionally(error -> null);
  }

  private CompletableFuture<Void> prefetchObjects(long streamId, List<ObjectMetadata> next, int i, long skipObjectId,
      long fromOffset, long[] budget) {
    if (i == next.size() || budget[0] <= 0 || !roomForReadAhead()) {
      return CompletableFuture.completedFuture(null);
    }
    ObjectMetadata object = next.get(i);
    if (object.objectId() == skipObjectId) {
      return prefetchObjects(streamId, next, i + 1, skipObjectId, fromOffset, budget);
    }
    return indexCache.open(object.objectId(), keys.key(object.objectId()), object.sizeBytes())
        .thenAcceptAsync(reader -> prefetch(object.objectId(), reader, streamId, fromOffset, budget), executor)
        .thenComposeAsync(v -> prefetchObjects(streamId, next, i + 1, skipObjectId, fromOffset, budget), executor);
  }

  private void prefetch(long objectId, ObjectReader reader, long streamId, long fromOffset, long[] budget) {
    CoalescedGets gets = new CoalescedGets(storage, reader.key(), MAX_GET_BYTES);
    try {
      for (IndexEntry e : reader.find(streamId, fromOffset, Long.MAX_VALUE)) {
        if (budget[0] <= 0) {
          return;
        }
        budget[0] -= e.blockSizeBytes();
        if (!limiter.hasSpareCapacity() || blockCache.prefetch(new BlockKey(objectId, e.blockPosition()),
            e.blockSizeBytes(), () -> gets.add(e)) == BlockCache.Prefetch.REFUSED) {
          budget[0] = 0; // the cache or the GET limiter is under pressure: stop this read-ahead
          readAheadSkipped.increment();
          return;
        }
      }
    } finally {
      gets.flush();
    }
  }

  private boolean roomForReadAhead() {
    return !blockCache.underPressure() && limiter.hasSpareCapacity();
  }
}
