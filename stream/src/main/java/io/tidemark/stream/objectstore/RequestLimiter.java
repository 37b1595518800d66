package io.tidemark.stream.objectstore;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Bounds the number of requests in flight to a store: at most {@code maxInFlight} operations run
 * at once, at most {@code maxQueued} more wait in FIFO order, and a request beyond both fails at
 * once with {@link ObjectStorageException} (the caller's backpressure signal) instead of growing a
 * queue without bound.
 *
 * <p>Thread-safe: the counters and the queue are guarded by this object's monitor, held only to
 * update them; operations start outside it, on the thread that submits or on the thread that
 * completes the previous operation. After {@link #close()} queued and new requests fail.
 */
final class RequestLimiter {

  private final String storeName;
  private final int maxInFlight;
  private final int maxQueued;
  private final ArrayDeque<Pending> queue = new ArrayDeque<>();
  private int inFlight;
  private boolean closed;

  RequestLimiter(String storeName, int maxInFlight, int maxQueued) {
    if (maxInFlight < 1 || maxQueued < 0) {
      throw new IllegalArgumentException("maxInFlight must be >= 1 and maxQueued >= 0");
    }
    this.storeName = storeName;
    this.maxInFlight = maxInFlight;
    this.maxQueued = maxQueued;
  }

  /** Runs {@code operation} when a permit is free; the permit is held until its future completes. */
  <T> CompletableFuture<T> submit(Supplier<CompletableFuture<T>> operation) {
    CompletableFuture<T> result = new CompletableFuture<>();
    Pending start = new Pending(() -> run(operation, result), result);
    synchronized (this) {
      if (closed) {
        return CompletableFuture.failedFuture(new ObjectStorageException(storeName + " is closed"));
      }
      if (inFlight >= maxInFlight) {
        if (queue.size() >= maxQueued) {
          return CompletableFuture.failedFuture(new ObjectStorageException(storeName + " is overloaded: "
              + inFlight + " requests in flight and " + queue.size() + " queued (limits " + maxInFlight + " and "
              + maxQueued + "); slow down or raise the concurrency limit"));
        }
        queue.add(start);
        return result;
      }
      inFlight++;
    }
    start.start().run();
    return result;
  }

  private record Pending(Runnable start, CompletableFuture<?> result) {}

  private <T> void run(Supplier<CompletableFuture<T>> operation, CompletableFuture<T> result) {
    CompletableFuture<T> running;
    try {
      running = operation.get();
    } catch (RuntimeException e) {
      running = CompletableFuture.failedFuture(e);
    }
    running.whenComplete((value, error) -> {
      release();
      if (error != null) {
        result.completeExceptionally(error);
      } else {
        result.complete(value);
      }
    });
  }

  private void release() {
    Pending next;
    synchronized (this) {
      next = queue.poll();
      if (next == null) {
        inFlight--;
        return;
      }
    }
    // The permit passes straight to the next queued request.
    next.start().run();
  }

  synchronized int inFlight() {
    return inFlight;
  }

  synchronized int queued() {
    return queue.size();
  }

  /** Fails every queued request; requests in flight finish on their own. */
  void close() {
    ArrayDeque<Pending> dropped;
    synchronized (this) {
      closed = true;
      dropped = new ArrayDeque<>(queue);
      queue.clear();
    }
    dropped.forEach(p -> p.result().completeExceptionally(new ObjectStorageException(storeName + " is closed")));
  }
}
