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
 * in WAL-offset order.
 *
 * <p>Backpressure: {@code append} never blocks its caller. When the log already holds its bound of
 * bytes not yet durable, it refuses the record at once, with an already failed future
 * ({@link WalFullException}; nothing was written, the caller appends it again after an earlier
 * append completed). A record once accepted waits for log space for as long as it takes (a trim
 * frees space) and fails only when the log itself fails, is fenced or closes: a record never fails
 * merely because space or time ran out, since that would leave a hole between the records written
 * before and after it.
 */
public interface WriteAheadLog extends AutoCloseable {

  /**
   * Reads back every durable record at or above the trim point, in WAL-offset order, stopping
   * cleanly at the first torn or corrupt record. Must be called before {@link #start()}.
   */
  Iterator<WalRecord> recover();

  /** Opens the log for appends after {@link #recover()}; the next offset follows the recovered ones. */
  void start();

  /**
   * Appends one record; completes with its WAL offset once the record is durable, or is already
   * failed with {@link WalFullException} when the log cannot take it now (see the class comment).
   * The log may keep a reference to the bytes between the record's position and limit instead of
   * copying them: the caller must not change them until the future completes (the buffer's own
   * position and limit are left as they were).
   */
  CompletableFuture<Long> append(ByteBuffer record);

  /**
   * Appends one record made of {@code head} followed by {@code body}, as {@link #append(ByteBuffer)}
   * of their concatenation (same offsets, same bytes on recovery, same reference rule for both
   * parts). This default concatenates them (one copy); a log that copies records into its own
   * write buffers anyway writes both parts there directly, so that a stream batch's header and
   * payload reach the WAL write without being joined first ({@link BlockWriteAheadLog} does).
   */
  default CompletableFuture<Long> append(ByteBuffer head, ByteBuffer body) {
    ByteBuffer joined = ByteBuffer.allocate(head.remaining() + body.remaining());
    joined.put(head.duplicate()).put(body.duplicate()).flip();
    return append(joined);
  }

  /**
   * Declares every record with a WAL offset below {@code walOffset} no longer needed (its data is
   * safely in object storage). The space is reused; recovery never returns such records again.
   */
  CompletableFuture<Void> trim(long walOffset);

  /**
   * True while the log is running out of space and wants a {@link #trim} soon (appends would
   * otherwise wait for space). Logs without a fixed capacity never ask. Read from any thread.
   */
  default boolean trimWanted() {
    return false;
  }

  /**
   * False once the log failed for good (an I/O error, or fenced by a newer writer): every later
   * append fails until the process reopens it. Read from any thread.
   */
  default boolean healthy() {
    return true;
  }

  /** Flushes what is pending, completes outstanding appends, releases resources. */
  @Override
  void close();
}
