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
 * <p>Threading: the engine's loop thread owns the write-side fields (offset assignment, pending
 * count, state changes); the volatile fields are read by any thread for fetch validation.
 */
final class EngineStream implements Stream {

  enum State { OPEN, CLOSING, CLOSED, FENCED, FAILED }

  private final StreamEngine engine;
  private final long streamId;
  private final long epoch;

  volatile State state = State.OPEN;
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
