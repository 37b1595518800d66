package io.tidemark.stream.api;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The storage engine of one node: creates and opens streams backed by this node's write-ahead
 * log, its caches and the shared object storage. Before serving, it recovers the node's WAL and
 * uploads what was acknowledged but not yet in object storage.
 */
public interface StreamStore extends AutoCloseable {

  /** Creates an empty, closed stream and returns its id. */
  CompletableFuture<Long> createStream(Map<String, String> tags);

  /**
   * Opens a stream on this node with {@code epoch}. An epoch below the stream's current epoch
   * fails with {@link StreamFencedException}; opening bumps the stream's epoch and fences any
   * other holder with an older epoch.
   */
  CompletableFuture<Stream> openStream(long streamId, long epoch);

  /** The stream if it is open on this node. */
  Optional<Stream> stream(long streamId);

  /** The rewriter of this store's data in object storage, when it keeps data there (a log cleaner's seam). */
  default Optional<StreamRewriter> rewriter() {
    return Optional.empty();
  }

  /** Closes every open stream, uploads what the WAL holds, and stops. */
  @Override
  void close();
}
