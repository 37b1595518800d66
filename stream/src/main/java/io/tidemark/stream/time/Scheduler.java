package io.tidemark.stream.time;

import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;

/**
 * Time, timers and randomness of a component, injected so that a test (and, later, a seeded
 * whole-node simulation) runs it on virtual time with a fixed seed ({@link DeterministicScheduler})
 * while production runs it on the system clock and a timer thread ({@link #of}).
 *
 * <p>Timer tasks must be quick (hand work to the component's own thread); a scheduler that no
 * longer runs tasks refuses new ones with {@link RejectedExecutionException}, as a shut-down
 * {@link ScheduledExecutorService} does.
 */
public interface Scheduler {

  /** Milliseconds of this scheduler's clock (wall-clock for the system one, virtual for the deterministic one). */
  long nowMs();

  /** Runs {@code task} once after {@code delay}. */
  Timer schedule(Runnable task, long delay, TimeUnit unit);

  /** Runs {@code task} after {@code initialDelay}, then again {@code delay} after each run ends, until cancelled. */
  Timer scheduleWithFixedDelay(Runnable task, long initialDelay, long delay, TimeUnit unit);

  /** The randomness of the component (jitter, choices): seeded in a deterministic scheduler. */
  RandomGenerator random();

  /** A scheduled task. */
  interface Timer {
    /** Stops later runs; true if it had not run (or, when repeating, was still scheduled). */
    boolean cancel(boolean mayInterruptIfRunning);
  }

  /**
   * The production scheduler: timers on {@code timer}, time from {@code clockMs}, randomness from
   * an unseeded {@link SplittableRandom} (good enough for jitter; not for secrets).
   */
  static Scheduler of(ScheduledExecutorService timer, LongSupplier clockMs) {
    Objects.requireNonNull(timer, "timer");
    Objects.requireNonNull(clockMs, "clockMs");
    RandomGenerator random = new SplittableRandom();
    return new Scheduler() {
      @Override
      public long nowMs() {
        return clockMs.getAsLong();
      }

      @Override
      public Timer schedule(Runnable task, long delay, TimeUnit unit) {
        return timer.schedule(task, delay, unit)::cancel;
      }

      @Override
      public Timer scheduleWithFixedDelay(Runnable task, long initialDelay, long delay, TimeUnit unit) {
        return timer.scheduleWithFixedDelay(task, initialDelay, delay, unit)::cancel;
      }

      @Override
      public RandomGenerator random() {
        return random;
      }
    };
  }
}
