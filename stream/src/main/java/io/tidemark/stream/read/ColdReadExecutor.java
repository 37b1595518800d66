package io.tidemark.stream.read;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The threads of the cold read path: decoding object indexes and blocks, assembling results and
 * starting read-ahead. A fixed pool of {@code stream.cold.read.threads} daemon threads named
 * {@code tidemark-cold-read-N}, never shared with the append path, so a stalled object store can
 * slow cold reads but never appends.
 *
 * <p>Bound and backpressure: {@link #admit} lets at most {@code stream.cold.read.max.pending} cold
 * reads be in progress; one more fails at once with {@link ColdReadBusyException}. The task queue
 * itself is not size-limited because a refused continuation would strand a future: its length is
 * bounded by the admitted reads (each has a few tasks queued at most) plus read-ahead completions
 * (bounded by the {@link GetLimiter}).
 *
 * <p>States: running → closed ({@link #close()} stops the threads; pending reads never complete,
 * so close it only after its users).
 */
public final class ColdReadExecutor implements Executor, AutoCloseable {

  private final ThreadPoolExecutor pool;
  private final int maxPending;
  private final AtomicInteger pending = new AtomicInteger();

  public ColdReadExecutor(int threads, int maxPending) {
    AtomicInteger ids = new AtomicInteger();
    ThreadFactory factory = runnable -> {
      Thread thread = new Thread(runnable, "tidemark-cold-read-" + ids.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
    this.maxPending = maxPending;
    this.pool = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), factory);
  }

  public static ColdReadExecutor of(ReadConfig config) {
    return new ColdReadExecutor(config.coldReadThreads(), config.coldReadMaxPending());
  }

  @Override
  public void execute(Runnable task) {
    pool.execute(task);
  }

  /**
   * Starts {@code read} on this executor if fewer than {@code maxPending} reads are in progress;
   * otherwise returns a future failed with {@link ColdReadBusyException} without starting it.
   */
  public <T> CompletableFuture<T> admit(Supplier<CompletableFuture<T>> read) {
    if (pending.incrementAndGet() > maxPending) {
      pending.decrementAndGet();
      return CompletableFuture.failedFuture(new ColdReadBusyException(
          "cold read refused: " + maxPending + " cold reads already in progress (stream.cold.read.max.pending)"));
    }
    CompletableFuture<T> result = CompletableFuture.supplyAsync(read, this).thenCompose(f -> f);
    result.whenComplete((value, error) -> pending.decrementAndGet());
    return result;
  }

  /** Cold reads in progress now. */
  public int pending() {
    return pending.get();
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }
}
