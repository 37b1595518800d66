package io.tidemark.stream.wal;

import java.nio.ByteBuffer;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;

/**
 * A broker's write-ahead log, shared by all its streams. Records are opaque byte strings; the log
 * gives each a <em>WAL offset</em> (a position in the log's own logical address space, unrelated
 * to stream offsets) that only grows.
 *
 * <p>Lifecycle: {@code recover()} once (it returns the durable records above the trim point and
 * fences any older writer of the same log), then {@code start()}, then {@code append}/{@code trim}
 * from any thread, then {@code close()}.
 *
 * <p>Durability: the future returned by {@link #append} completes only when the record is
 * durable (fsync'd, written with O_DIRECT and synced, or stored as an object). Records complete
 * in WAL-offset order. When the log is full, appends wait for space (backpressure) up to the
 * configured bound, then fail with {@link WalFullException}; they never grow memory without bound.
 */
public interface WriteAheadLog extends AutoCloseable {

  /**
   * Reads back every durable record at or above the trim point, in WAL-offset order, stopping
   * cleanly at the first torn or corrupt record. Must be called before {@link #start()}.
   */
  Iterator<WalRecord> recover();

  /** Opens the log for appends after {@link #recover()}; the next offset follows the recovered ones. */
  void start();

  /** Appends one record; completes with its WAL offset once the record is durable. */
  CompletableFuture<Long> append(ByteBuffer record);

  /**
   * Declares every record with a WAL offset below {@code walOffset} no longer needed (its data is
   * safely in object storage). The space is reused; recovery never returns such records again.
   */
  CompletableFuture<Void> trim(long walOffset);

  /** Flushes what is pending, completes outstanding appends, releases resources. */
  @Override
  void close();
}
