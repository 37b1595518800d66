package io.tidemark.table.source;

import io.tidemark.broker.partition.PartitionLog;
import java.util.concurrent.CompletableFuture;

/**
 * A {@link PartitionRecordSource} over the broker's {@link PartitionLog} of a partition this
 * broker leads. Committed data only: reads stop at the partition's last stable offset (which is
 * what {@link #highWatermark()} answers here, so a table never gets ahead of an open transaction),
 * and batches of aborted transactions are left out (control batches stay; the sync skips them).
 * For a topic without transactions this is every record up to the high watermark. Stateless; thread safety is the log's (reads take no lock).
 */
public final class PartitionLogSource implements PartitionRecordSource {

  private final PartitionLog log;

  public PartitionLogSource(PartitionLog log) {
    this.log = log;
  }

  /** Sources over the same open log instance are equal (a reopened partition is another instance). */
  @Override
  public boolean equals(Object o) {
    return o instanceof PartitionLogSource other && other.log == log;
  }

  @Override
  public int hashCode() {
    return System.identityHashCode(log);
  }

  @Override
  public CompletableFuture<Batches> read(long offset, int maxBytes) {
    return log.readCommittedOnly(offset, maxBytes).thenApply(r -> new Batches(r.batches(), r.highWatermark(), r.logStartOffset()));
  }

  @Override
  public long logStartOffset() {
    return log.logStartOffset();
  }

  @Override
  public long highWatermark() {
    return log.lastStableOffset();
  }

  @Override
  public CompletableFuture<Long> offsetForTimestamp(long timestampMs) {
    return log.offsetForTimestamp(timestampMs).thenApply(hit -> hit == null ? highWatermark() : Math.min(hit[0],
        highWatermark()));
  }
}
