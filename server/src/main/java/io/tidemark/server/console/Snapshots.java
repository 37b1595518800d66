package io.tidemark.server.console;

import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The console's answers, computed at most once per key and freshness window however many browsers
 * poll: every request for a key within {@code ttlMs} of the last computation gets that result, and
 * requests that arrive while it is being computed wait for the same computation (single flight).
 * So the cost of the console on the node is bounded by the number of distinct keys per window, not by
 * the number of clients.
 *
 * <p>Bounds: at most {@code maxEntries} keys are kept (the oldest computed is dropped first), and at most
 * {@code maxComputing} computations run at once; a request that would start one more is refused at once
 * with {@link BusyException} (answered 503), so a client asking for many distinct pages cannot hold the
 * admin threads that health probes and other clients need. A failed computation is not kept.
 *
 * <p>Thread-safe: called from the admin HTTP threads; the map is the only shared state.
 */
final class Snapshots {

  /** Refused: too many distinct answers are being computed now. */
  static final class BusyException extends RuntimeException {
    BusyException(String message) {
      super(message);
    }
  }

  private record Entry(long atMs, CompletableFuture<Object> value) {}

  private final LongSupplier clockMs;
  private final int maxEntries;
  private final Semaphore computing;
  private final long waitMs;
  private final Map<String, Entry> entries = new ConcurrentHashMap<>();

  Snapshots(LongSupplier clockMs, int maxEntries, int maxComputing, long waitMs) {
    this.clockMs = clockMs;
    this.maxEntries = maxEntries;
    this.computing = new Semaphore(maxComputing);
    this.waitMs = waitMs;
  }

  /** The answer for {@code key}: the one computed less than {@code ttlMs} ago, the one being computed, or a new one. */
  @SuppressWarnings("unchecked")
  <T> T get(String key, long ttlMs, Supplier<T> compute) {
    long now = clockMs.getAsLong();
    Entry fresh = new Entry(now, new CompletableFuture<>());
    Entry current = entries.compute(key, (k, old) ->
        old != null && (!old.value().isDone() || now - old.atMs() < ttlMs) ? old : fresh);
    if (current == fresh) {
      run(key, fresh, compute);
    }
    try {
      return (T) current.value().get(waitMs, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw new IllegalStateException(e.getCause());
    } catch (TimeoutException e) {
      throw new BusyException("the answer for " + key + " took longer than " + waitMs + " ms; retry");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BusyException("interrupted");
    }
  }

  private void run(String key, Entry entry, Supplier<?> compute) {
    if (!computing.tryAcquire()) {
      entries.remove(key, entry);
      entry.value().completeExceptionally(new BusyException("the console is computing too many answers at once; retry"));
      return;
    }
    try {
      entry.value().complete(compute.get());
      evictOverflow();
    } catch (RuntimeException | Error e) {
      entries.remove(key, entry);
      entry.value().completeExceptionally(e);
    } finally {
      computing.release();
    }
  }

  private void evictOverflow() {
    while (entries.size() > maxEntries) {
      entries.entrySet().stream().filter(e -> e.getValue().value().isDone())
          .min(Comparator.comparingLong(e -> e.getValue().atMs()))
          .ifPresentOrElse(e -> entries.remove(e.getKey(), e.getValue()), () -> { });
      if (entries.values().stream().noneMatch(e -> e.value().isDone())) {
        return;
      }
    }
  }

  int size() {
    return entries.size();
  }
}
