package io.tidemark.table.source;

import io.tidemark.broker.partition.PartitionLog;
import java.util.concurrent.CompletableFuture;

/**
 * A {@link PartitionRecordSource} over the broker's {@link PartitionLog} of a partition this
 * broker leads. Stateless; thread safety is the log's (reads take no lock).
 */
public final class PartitionLogSource implements PartitionRecordSource {

  private final PartitionLog log;

  public PartitionLogSource(PartitionLog log) {
    this.log = log;
  }

  @Override
  public CompletableFuture<Batches> read(long offset, int maxBytes) {
    return log.read(offset, maxBytes).thenApply(r -> new Batches(r.batches(), r.highWatermark(), r.logStartOffset()));
  }

  @Override
  public long logStartOffset() {
    return log.logStartOffset();
  }

  @Override
  public long highWatermark() {
    return log.highWatermark();
  }
}
