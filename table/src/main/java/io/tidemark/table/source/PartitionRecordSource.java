package io.tidemark.table.source;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Where a table topic's records come from: whole Kafka record batches (v2 format, as stored) of
 * one topic partition, read directly from the partition log, with no Kafka consumer.
 * Implementations must be safe to call from one thread at a time.
 */
public interface PartitionRecordSource {

  /** Kafka record batches read from a partition, and the partition's bounds at read time. */
  record Batches(List<ByteBuffer> batches, long highWatermark, long logStartOffset) {}

  /**
   * Whole batches starting at the batch holding {@code offset}, up to the high watermark, about
   * {@code maxBytes} in total (at least one batch when any exists).
   */
  CompletableFuture<Batches> read(long offset, int maxBytes);

  /** The first offset still in the log. */
  long logStartOffset();

  /** Every offset below it is durable, decided (no open transaction) and readable: the last stable offset. */
  long highWatermark();

  /**
   * The offset of the first record with a timestamp at or after {@code timestampMs}, or the high watermark when
   * there is none (a table's backfill from a timestamp). Sources that cannot search by time fail the future.
   */
  default CompletableFuture<Long> offsetForTimestamp(long timestampMs) {
    return CompletableFuture.failedFuture(new UnsupportedOperationException(getClass().getSimpleName()
        + " cannot find an offset by timestamp"));
  }
}
