package io.tidemark.stream.metadata;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Object metadata in the metadata authority. An object is PREPARED (id reserved with a
 * time-to-live; never committed ones are deleted when it expires), then COMMITTED (its stream
 * ranges readable), then MARKED_FOR_DELETION (replaced by compaction or trimmed away), then
 * DELETED after a delay, by the authority, in batches.
 *
 * <p>Commits are atomic and checked: node epoch, stream epoch, every object id prepared and not
 * yet committed, and offset continuity (each stream range starts exactly at the stream's current
 * end offset: no gaps, no overlaps). A rejected commit changes nothing.
 */
public interface ObjectManager {

  /** Reserves {@code count} consecutive object ids that expire after {@code ttlMs}; returns the first. */
  CompletableFuture<Long> prepareObjects(NodeRef node, int count, long ttlMs);

  /**
   * Commits what one upload (or one stream-set compaction) produced: an optional stream-set
   * object, any number of stream objects, and the objects they replace. Advances stream end
   * offsets for an upload; for a compaction the replaced ranges must be exactly covered.
   */
  CompletableFuture<Void> commitStreamSetObject(NodeRef node, CommitStreamSetObjectRequest request);

  /**
   * Commits one stream object that replaces the data of its stream in {@code sourceObjectIds}
   * (compaction, log cleaning). The sources' ranges of the stream must cover the new range exactly.
   * A stream object source is replaced whole; a stream-set object source (written by any node) only
   * loses that stream's range, keeps its other ranges and is replaced whole once it holds none.
   */
  CompletableFuture<Void> commitStreamObject(NodeRef node, CommitStreamObjectRequest request);

  /**
   * The committed objects holding data of {@code streamId} in {@code [startOffset, endOffset)}, in
   * offset order, at most {@code limit}. A range of an object may start before {@code startOffset}.
   */
  CompletableFuture<List<ObjectMetadata>> getObjects(long streamId, long startOffset, long endOffset, int limit);

  /** The committed stream-set objects written by {@code nodeId}, oldest first (input to compaction). */
  CompletableFuture<List<ObjectMetadata>> getStreamSetObjects(int nodeId);

  /** The committed stream objects of one stream, in offset order (input to stream-object compaction). */
  CompletableFuture<List<ObjectMetadata>> getStreamObjects(long streamId);
}
