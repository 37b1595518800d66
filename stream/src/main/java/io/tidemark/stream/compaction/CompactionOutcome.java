package io.tidemark.stream.compaction;

import io.tidemark.stream.metadata.MetadataException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * How a compaction step that uploaded outputs ends. Success passes through. A failure before the
 * commit was sent, or a commit the metadata authority rejected ({@link MetadataException}: it
 * changed nothing), deletes the uploaded outputs. Any other commit failure is an unknown outcome:
 * the commit may have taken effect, so nothing is deleted (ids never committed are expired by the
 * controller). The inputs are never touched here. Stateless.
 */
final class CompactionOutcome {

  private CompactionOutcome() {}

  static CompletableFuture<Void> settle(CompactionIo io, List<Long> outputIds, boolean commitSent, Throwable error) {
    if (error == null) {
      return CompletableFuture.completedFuture(null);
    }
    Throwable cause = unwrap(error);
    boolean notCommitted = !commitSent || cause instanceof MetadataException;
    CompletableFuture<Void> cleanup = notCommitted ? io.deleteQuietly(outputIds) : CompletableFuture.completedFuture(null);
    return cleanup.thenCompose(v -> CompletableFuture.failedFuture(cause));
  }

  static Throwable unwrap(Throwable error) {
    Throwable e = error;
    while (e instanceof CompletionException && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }
}
