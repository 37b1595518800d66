package io.tidemark.stream.metadata;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Stream lifecycle in the metadata authority (the replicated controller, or the in-memory and
 * journaled implementations used standalone and in tests). Every call is checked against the
 * caller's node epoch: a fenced or stale node fails with {@link NodeFencedException} and changes
 * nothing.
 *
 * <p>Epoch rules: {@code openStream} with an epoch below the current one fails with
 * {@link io.tidemark.stream.api.StreamFencedException}; an equal or higher epoch takes the stream
 * (the previous holder, if any, is fenced because its commits carry the older epoch). Trim, close
 * and commits must carry the current epoch.
 */
public interface StreamManager {

  /** Creates a closed, empty stream (epoch 0, offsets [0, 0)) and returns its id. */
  CompletableFuture<Long> createStream(NodeRef node, Map<String, String> tags);

  /** Opens the stream on {@code node} with {@code epoch}; returns its state after opening. */
  CompletableFuture<StreamMetadata> openStream(NodeRef node, long streamId, long epoch);

  /** Closes the stream; its end offset is final until the next open. */
  CompletableFuture<Void> closeStream(NodeRef node, long streamId, long epoch);

  /** Moves the start offset forward (never back, never past the end offset). */
  CompletableFuture<Void> trimStream(NodeRef node, long streamId, long epoch, long newStartOffset);

  /** Deletes the stream; all its objects are marked for deletion. */
  CompletableFuture<Void> deleteStream(NodeRef node, long streamId, long epoch);

  /** The streams with these ids that exist, in the order asked. */
  CompletableFuture<List<StreamMetadata>> getStreams(List<Long> streamIds);

  /** The streams currently open on {@code nodeId} (used by a restarting node to recover and close them). */
  CompletableFuture<List<StreamMetadata>> getOpeningStreams(NodeRef node);
}
