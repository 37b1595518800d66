package io.tidemark.stream.time;

import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;

/**
 * A {@link Scheduler} on virtual time: nothing runs until {@link #advance} or {@link #runDue} is
 * called, and then due tasks run on the calling thread in (time, scheduling order), so the same
 * calls with the same seed give the same runs. Randomness is a {@link SplittableRandom} of the
 * given seed. Thread-safe (tasks may be scheduled from any thread), but tasks run only on the
 * thread that advances time. {@link #shutdown()} refuses further tasks like a shut-down executor.
 */
public final class DeterministicScheduler implements Scheduler {

  private final class Task implements Timer, Comparable<Task> {
    final Runnable body;
    final long periodMs; // 0: once
    final long seq;
    long dueMs;
    boolean cancelled;

    Task(Runnable body, long dueMs, long periodMs, long seq) {
      this.body = body;
      this.dueMs = dueMs;
      this.periodMs = periodMs;
      this.seq = seq;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      synchronized (DeterministicScheduler.this) {
        boolean wasPending = !cancelled && queue.remove(this);
        cancelled = true;
        return wasPending;
      }
    }

    @Override
    public int compareTo(Task o) {
      return dueMs != o.dueMs ? Long.compare(dueMs, o.dueMs) : Long.compare(seq, o.seq);
    }
  }

  private final long seed;
  private final SplittableRandom random;
  private final PriorityQueue<Task> queue = new PriorityQueue<>();
  private long nowMs;
  private long nextSeq;
  private boolean shutdown;

  /** Starts at virtual time {@code startMs} with randomness from {@code seed}. */
  public DeterministicScheduler(long seed, long startMs) {
    this.seed = seed;
    this.random = new SplittableRandom(seed);
    this.nowMs = startMs;
  }

  public long seed() {
    return seed;
  }

  @Override
  public synchronized long nowMs() {
    return nowMs;
  }

  @Override
  public Timer schedule(Runnable task, long delay, TimeUnit unit) {
    return add(task, unit.toMillis(Math.max(0, delay)), 0);
  }

  @Override
  public Timer scheduleWithFixedDelay(Runnable task, long initialDelay, long delay, TimeUnit unit) {
    if (delay <= 0) {
      throw new IllegalArgumentException("fixed delay must be positive, was " + delay);
    }
    return add(task, unit.toMillis(Math.max(0, initialDelay)), Math.max(1, unit.toMillis(delay)));
  }

  private synchronized Task add(Runnable body, long delayMs, long periodMs) {
    if (shutdown) {
      throw new RejectedExecutionException("deterministic scheduler is shut down");
    }
    Task task = new Task(body, nowMs + delayMs, periodMs, nextSeq++);
    queue.add(task);
    return task;
  }

  @Override
  public synchronized RandomGenerator random() {
    return random;
  }

  /** Moves virtual time forward by {@code ms}, running every task due up to then, in order; returns how many ran. */
  public int advance(long ms) {
    if (ms < 0) {
      throw new IllegalArgumentException("time cannot go back: " + ms + " ms");
    }
    long target;
    synchronized (this) {
      target = nowMs + ms;
    }
    int ran = 0;
    while (true) {
      Task next;
      synchronized (this) {
        next = queue.peek();
        if (next == null || next.dueMs > target) {
          nowMs = target;
          return ran;
        }
        queue.poll();
        nowMs = Math.max(nowMs, next.dueMs);
      }
      next.body.run(); // outside the lock: a task may schedule more
      ran++;
      synchronized (this) {
        if (next.periodMs > 0 && !next.cancelled && !shutdown) {
          next.dueMs = nowMs + next.periodMs;
          queue.add(next);
        }
      }
    }
  }

  /** Runs the tasks due now without moving time. */
  public int runDue() {
    return advance(0);
  }

  /** Tasks waiting to run. */
  public synchronized int pending() {
    return queue.size();
  }

  /** Drops every waiting task and refuses new ones. */
  public synchronized void shutdown() {
    shutdown = true;
    queue.clear();
  }
}
