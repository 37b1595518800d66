package io.tidemark.table.sync;

import java.util.function.LongSupplier;

/**
 * Keeps the log readable when a topic carries many bad records: at most {@code perWindow} lines
 * per window, then silence until the window ends; the first line of the next window says how many
 * were left out. Every bad record is still counted in the table's status and meters.
 *
 * <p>Thread-safe (one lock); one instance per table topic.
 */
final class BadRecordLog {

  private final LongSupplier nanos;
  private final long windowNanos;
  private final int perWindow;
  private long windowStart;
  private int logged;
  private long suppressed;

  BadRecordLog(LongSupplier nanos, long windowNanos, int perWindow) {
    this.nanos = nanos;
    this.windowNanos = windowNanos;
    this.perWindow = perWindow;
    this.windowStart = nanos.getAsLong();
  }

  /**
   * Whether one more line may be logged now: -1 when it must be left out, otherwise how many lines
   * were left out since the last one logged (to mention in it).
   */
  synchronized long admit() {
    long now = nanos.getAsLong();
    if (now - windowStart >= windowNanos) {
      windowStart = now;
      logged = 0;
    }
    if (logged >= perWindow) {
      suppressed++;
      return -1;
    }
    logged++;
    long left = suppressed;
    suppressed = 0;
    return left;
  }
}
