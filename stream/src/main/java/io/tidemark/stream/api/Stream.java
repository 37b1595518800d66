package io.tidemark.stream.api;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * An append-only sequence of batches addressed by dense logical offsets: a batch of {@code n}
 * records occupies offsets {@code [base, base + n)}. The payload of a batch is opaque to the
 * stream (for Kafka partitions it is one Kafka record batch, unmodified).
 *
 * <p>States: OPEN after {@link StreamStore#openStream}, FENCED when a newer epoch opened the same
 * stream elsewhere (every call then fails with {@link StreamFencedException}), CLOSED after
 * {@link #close()}. Appends are acknowledged only when durable in the write-ahead log; they are
 * assigned offsets in call order.
 */
public interface Stream {

  long streamId();

  /** The epoch this stream was opened with; commits with an older epoch are rejected. */
  long epoch();

  /** The first readable offset (moved forward by {@link #trim}). */
  long startOffset();

  /** The offset the next append will get; every offset below it is durable and readable. */
  long nextOffset();

  /**
   * Appends one batch of {@code recordCount} records ({@code recordCount >= 1}); completes with
   * the batch's base offset once it is durable. Fails with {@link StreamFencedException} or
   * {@link StreamClosedException}. When the store is full for now, the returned future is
   * <em>already</em> failed with {@link AppendBackpressureException}: nothing was written and no
   * offset assigned, so a caller that assigns offsets itself may undo nothing and retry later.
   * A full store never fails an append it accepted; that one waits (backpressure).
   */
  CompletableFuture<Long> append(int recordCount, ByteBuffer payload);

  /**
   * As {@link #append}, but the caller hands the payload's bytes over: it never changes them (nor
   * reuses their buffer) afterwards, so the store may keep them instead of copying them. A store
   * still copies when keeping them would hold much more memory than the payload (a small slice of a
   * large array). This default copies as {@link #append} does.
   */
  default CompletableFuture<Long> appendOwned(int recordCount, ByteBuffer payload) {
    return append(recordCount, payload);
  }

  /**
   * Reads whole batches covering {@code [startOffset, endOffset)}: the first batch returned
   * contains {@code startOffset} (it may start before it); batches are returned until
   * {@code endOffset} is reached or their total size reaches {@code maxBytes}, but at least one
   * batch is returned when any exists. Fails with {@link OffsetOutOfRangeException} when
   * {@code startOffset} is below {@link #startOffset()} or above {@link #nextOffset()}.
   */
  CompletableFuture<FetchResult> fetch(long startOffset, long endOffset, int maxBytes);

  /** Moves the start offset forward; data wholly below it is deleted later. */
  CompletableFuture<Void> trim(long newStartOffset);

  /**
   * Stops appends, waits for those in flight, uploads and commits this stream's data (only this
   * stream's: the other streams of the store are not flushed), closes it in the metadata and
   * releases its cache. Then the stream can be opened elsewhere with a newer epoch.
   */
  CompletableFuture<Void> close();
}
