package io.tidemark.stream.read;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Bounds the object-storage GETs the cold read path keeps in flight, without blocking a thread:
 * an operation beyond {@code maxInFlight} waits in a queue of at most {@code maxWaiting}; beyond
 * that it fails at once with {@link ColdReadBusyException} (the backpressure path). Read-ahead
 * asks {@link #hasSpareCapacity()} first and uses at most half of the permits, so demand reads
 * always find room.
 *
 * <p>States of an operation: waiting → running (holds a permit) → done (permit handed to the next
 * waiter). Threading: thread-safe; the monitor guards the counters and the queue only; operations
 * are started outside it.
 */
public final class GetLimiter {

  private record Waiter(Supplier<CompletableFuture<Object>> operation, CompletableFuture<Object> result) {}

  private final int maxInFlight;
  private final int maxWaiting;
  private final ArrayDeque<Waiter> waiting = new ArrayDeque<>();
  private int inFlight;
  private int peakInFlight;

  public GetLimiter(int maxInFlight, int maxWaiting) {
    if (maxInFlight <= 0 || maxWaiting < 0) {
      throw new IllegalArgumentException("in-flight bound must be positive and waiting bound non-negative, got "
          + maxInFlight + " and " + maxWaiting);
    }
    this.maxInFlight = maxInFlight;
    this.maxWaiting = maxWaiting;
  }

  /** Runs {@code operation} when a permit is free; its result is passed through. */
  @SuppressWarnings("unchecked")
  public <T> CompletableFuture<T> submit(Supplier<CompletableFuture<T>> operation) {
    CompletableFuture<Object> result = new CompletableFuture<>();
    Supplier<CompletableFuture<Object>> erased = (Supplier<CompletableFuture<Object>>) (Supplier<?>) operation;
    synchronized (this) {
      if (inFlight >= maxInFlight) {
        if (waiting.size() >= maxWaiting) {
          return CompletableFuture.failedFuture(new ColdReadBusyException(
              "cold read path busy: " + inFlight + " GETs in flight and " + waiting.size()
                  + " waiting (stream.cold.read.max.inflight.gets=" + maxInFlight + ")"));
        }
        waiting.add(new Waiter(erased, result));
        return (CompletableFuture<T>) (CompletableFuture<?>) result;
      }
      inFlight++;
      peakInFlight = Math.max(peakInFlight, inFlight);
    }
    run(new Waiter(erased, result));
    return (CompletableFuture<T>) (CompletableFuture<?>) result;
  }

  /** Whether read-ahead may start a GET now: under half the permits used and nobody waiting. */
  public synchronized boolean hasSpareCapacity() {
    return waiting.isEmpty() && inFlight < Math.max(1, maxInFlight / 2);
  }

  public synchronized int inFlight() {
    return inFlight;
  }

  /** The most GETs ever in flight at once; never above {@code maxInFlight}. */
  public synchronized int peakInFlight() {
    return peakInFlight;
  }

  private void run(Waiter waiter) {
    CompletableFuture<Object> get;
    try {
      get = waiter.operation().get();
    } catch (RuntimeException e) {
      get = CompletableFuture.failedFuture(e);
    }
    get.whenComplete((value, error) -> {
      release();
      if (error != null) {
        waiter.result().completeExceptionally(error);
      } else {
        waiter.result().complete(value);
      }
    });
  }

  private void release() {
    Waiter next;
    synchronized (this) {
      next = waiting.poll();
      if (next == null) {
        inFlight--;
        return;
      }
    }
    // The permit passes straight to the next waiter. Through the trampoline, so that a long queue
    // of operations completing synchronously runs in a loop instead of a deep recursion.
    trampoline(() -> run(next));
  }

  private static final ThreadLocal<ArrayDeque<Runnable>> TRAMPOLINE = new ThreadLocal<>();

  private static void trampoline(Runnable task) {
    ArrayDeque<Runnable> pending = TRAMPOLINE.get();
    if (pending != null) {
      pending.add(task);
      return;
    }
    pending = new ArrayDeque<>();
    TRAMPOLINE.set(pending);
    try {
      for (Runnable next = task; next != null; next = pending.poll()) {
        next.run();
      }
    } finally {
      TRAMPOLINE.remove();
    }
  }
}
