package io.tidemark.broker.group;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Backoff between attempts to load a coordinator's partition (offsets, transactions) whose log
 * could not be read: 200 ms doubling to at most 5 s, tried for as long as the partition stays open
 * on this broker, so a coordinator never stays unloaded while the process lives.
 */
public final class LoadRetry {

  static final long FIRST_MS = 200;
  static final long MAX_MS = 5_000;

  private LoadRetry() {}

  /** The wait after failed attempt {@code attempt} (1 = the first). */
  public static long backoffMs(int attempt) {
    return Math.min(MAX_MS, FIRST_MS << Math.min(Math.max(attempt - 1, 0), 5));
  }

  /**
   * Runs {@code retry} on {@code owner} after the backoff of failed attempt {@code attempt}, if
   * {@code wanted} still holds then (the partition is still open here, for the same load).
   * Returns the backoff, for the caller's log line.
   */
  public static long schedule(ScheduledExecutorService owner, int attempt, BooleanSupplier wanted, Runnable retry) {
    long backoff = backoffMs(attempt);
    owner.schedule(() -> {
      if (wanted.getAsBoolean()) {
        retry.run();
      }
    }, backoff, TimeUnit.MILLISECONDS);
    return backoff;
  }
}
