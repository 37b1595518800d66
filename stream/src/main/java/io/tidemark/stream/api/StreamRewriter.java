package io.tidemark.stream.api;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Rewrites a stream's older data in object storage without changing its offsets: the seam a log
 * cleaner (Kafka's compacted topics) uses. Only data committed to object storage can be rewritten,
 * whether it sits in stream objects or in stream-set objects shared with other streams: the active
 * tail in the write-ahead log and the log cache is never touched, so appends and hot reads never
 * wait for a rewrite. A rewrite replaces consecutive pieces by one new object holding batches that cover
 * exactly the same offsets (one atomic metadata commit); readers see either the old or the new
 * object. Implementations are thread-safe.
 */
public interface StreamRewriter {

  /** One object of a stream's rewritable data: offsets {@code [startOffset, endOffset)}, its size and commit time. */
  record Piece(long objectId, long startOffset, long endOffset, long sizeBytes, long committedAtMs) {}

  /**
   * Replacement batches for the batches of some consecutive pieces (given in offset order). The
   * result must cover exactly the same offsets, in order and without gaps or overlaps, with
   * batches of at least one offset each; a batch may span what several input batches spanned.
   */
  @FunctionalInterface
  interface BatchRewrite {
    List<StreamBatch> rewrite(List<StreamBatch> batches);
  }

  /** What one {@link #rewrite} did. */
  record Rewritten(long startOffset, long endOffset, long bytesRead, long bytesWritten, long objectId) {}

  /** Most pieces {@link #pieces} lists and one {@link #rewrite} replaces. */
  int MAX_PIECES_PER_REWRITE = 1000;

  /**
   * The stream's rewritable pieces, oldest first: the committed objects holding its data (a
   * stream-set object's piece is its range of this stream), forming one gap-free run from the object
   * holding the stream's start offset, at most {@link #MAX_PIECES_PER_REWRITE}.
   */
  CompletableFuture<List<Piece>> pieces(long streamId);

  /**
   * Reads {@code pieces} (consecutive, from {@link #pieces}; their total size is the caller's bound on
   * memory), applies {@code rewrite}, writes one object and commits it in place of the pieces. Fails
   * without changing anything when a piece was replaced meanwhile (another rewrite or a merge) or
   * the result does not cover the same offsets.
   */
  CompletableFuture<Rewritten> rewrite(long streamId, List<Piece> pieces, BatchRewrite rewrite);
}
