package io.tidemark.stream.engine;

import io.tidemark.stream.api.FetchResult;
import io.tidemark.stream.api.Stream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One stream open on this node's {@link StreamEngine}. States: OPEN (appends accepted), CLOSING
 * (draining appends and uploading), CLOSED, FENCED (a newer epoch took it; every call fails with
 * {@code StreamFencedException}), FAILED (a WAL write failed, or its batches can never be
 * committed; offsets after it are void). Backpressure never changes the state: a refused append
 * leaves everything as it was.
 *
 * <p>Threading: the engine's loop thread is the single owner of every field that changes (state,
 * offsets, pending count, waiters); state changes go through {@link #transition}, which asserts
 * the owning thread and throws with the current state on a step the lifecycle does not have. The
 * volatile fields are read by any thread (fetch validation, {@link #nextOffset()}).
 */
final class EngineStream implements Stream {

  /** A stream's lifecycle on this node; CLOSED, FENCED and FAILED are final. */
  enum State {
    OPEN, CLOSING, CLOSED, FENCED, FAILED;

    boolean canMoveTo(State next) {
      return switch (this) {
        case OPEN -> next == CLOSING || next == FENCED || next == FAILED;
        case CLOSING -> next == CLOSED || next == FENCED || next == FAILED;
        case CLOSED, FENCED, FAILED -> false;
      };
    }
  }

  private final StreamEngine engine;
  private final long streamId;
  private final long epoch;

  /** Written only by {@link #transition} on the engine's loop thread; read by any thread. */
  private volatile State state = State.OPEN;
  volatile long startOffset;
  /** Every offset below it is durable and in the cache or objects. */
  volatile long confirmedNextOffset;
  /** Every offset below it is committed to object storage. */
  volatile long committedEndOffset;
  volatile String failure;

  // loop-owned
  long nextAssignedOffset;
  int pendingAppends;
  final List<CompletableFuture<Void>> drainWaiters = new ArrayList<>();
  CompletableFuture<Void> closeFuture;

  State state() {
    return state;
  }

  /**
   * Moves the stream from {@code from} to {@code to}; on the engine's loop thread only (asserted).
   *
   * @throws IllegalStateException naming the current state when it is not {@code from} or the
   *     step is not one of the lifecycle's
   */
  void transition(State from, State to) {
    assert engine.ownsState() : "stream " + streamId + " changed from " + from + " to " + to + " on thread "
        + Thread.currentThread().getName() + ", not on the engine's loop thread";
    State current = state;
    if (current != from || !from.canMoveTo(to)) {
      throw new IllegalStateException("stream " + streamId + " (epoch " + epoch + ") cannot move from " + from
          + " to " + to + ": it is " + current);
    }
    state = to;
  }

  EngineStream(StreamEngine engine, long streamId, long epoch, long startOffset, long endOffset) {
    this.engine = engine;
    this.streamId = streamId;
    this.epoch = epoch;
    this.startOffset = startOffset;
    this.confirmedNextOffset = endOffset;
    this.committedEndOffset = endOffset;
    this.nextAssignedOffset = endOffset;
  }

  @Override
  public long streamId() {
    return streamId;
  }

  @Override
  public long epoch() {
    return epoch;
  }

  @Override
  public long startOffset() {
    return startOffset;
  }

  @Override
  public long nextOffset() {
    return confirmedNextOffset;
  }

  @Override
  public CompletableFuture<Long> append(int recordCount, ByteBuffer payload) {
    if (recordCount < 1) {
      return CompletableFuture.failedFuture(new IllegalArgumentException("record count " + recordCount
          + " must be >= 1 (stream " + streamId + ")"));
    }
    ByteBuffer copy = ByteBuffer.allocate(payload.remaining()).put(payload.duplicate()).flip();
    return engine.append(this, recordCount, copy);
  }

  /**
   * Keeps the caller's bytes without a copy when they fill their heap array but for at most an
   * eighth of their size ({@link #keepsWithoutCopy}): the cache then holds at most 12.5% more
   * than it accounts. Anything else is copied as {@link #append} does.
   */
  @Override
  public CompletableFuture<Long> appendOwned(int recordCount, ByteBuffer payload) {
    if (recordCount < 1 || !keepsWithoutCopy(payload)) {
      return append(recordCount, payload);
    }
    return engine.append(this, recordCount, payload.slice());
  }

  /** Whether an owned payload is kept as it is: a heap buffer whose array is at most 1/8 larger than it. */
  static boolean keepsWithoutCopy(ByteBuffer payload) {
    return payload.hasArray() && (long) (payload.array().length - payload.remaining()) * 8 <= payload.remaining();
  }

  @Override
  public CompletableFuture<FetchResult> fetch(long startOffset, long endOffset, int maxBytes) {
    return engine.fetch(this, startOffset, endOffset, maxBytes);
  }

  @Override
  public CompletableFuture<Void> trim(long newStartOffset) {
    return engine.trim(this, newStartOffset);
  }

  @Override
  public CompletableFuture<Void> close() {
    return engine.closeStream(this);
  }

  @Override
  public String toString() {
    return "stream " + streamId + " (epoch " + epoch + ", " + state + ", offsets [" + startOffset + ", "
        + confirmedNextOffset + "))";
  }
}
