package io.tidemark.table.sync;

import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The read budget of partitions that are backfilling ({@code table.topic.backfill.max.bytes.per.sec}): one token
 * bucket per partition holding at most one second of bytes, refilled with the clock. A pass asks
 * {@link #allowance} before it reads and reports what it read with {@link #spent}; a read may overshoot the
 * allowance by one batch, which leaves the bucket in debt until the clock pays it back. A rate of 0 means no bound.
 * Owned by the {@link TableSync} that holds it (its single round thread).
 */
final class BackfillThrottle {

  private static final long NANOS_PER_SECOND = 1_000_000_000L;

  private final long bytesPerSecond;
  private final LongSupplier nanoTime;
  private final Map<Integer, long[]> buckets = new HashMap<>(); // partition -> {tokens, refilledAtNanos}

  BackfillThrottle(long bytesPerSecond, LongSupplier nanoTime) {
    this.bytesPerSecond = bytesPerSecond;
    this.nanoTime = nanoTime;
  }

  boolean bounded() {
    return bytesPerSecond > 0;
  }

  /** Bytes the partition may read now: positive, or 0 or less while the bucket is empty or in debt. */
  long allowance(int partition) {
    if (!bounded()) {
      return Long.MAX_VALUE;
    }
    long now = nanoTime.getAsLong();
    long[] b = buckets.computeIfAbsent(partition, p -> new long[] {bytesPerSecond, now});
    long elapsed = Math.max(0, now - b[1]);
    long refill = (long) Math.min(bytesPerSecond, (double) elapsed * bytesPerSecond / NANOS_PER_SECOND);
    if (refill > 0) { // else keep the older refill time, so that frequent calls still accumulate
      b[0] = Math.min(bytesPerSecond, b[0] + refill);
      b[1] = now;
    }
    return b[0];
  }

  void spent(int partition, long bytes) {
    if (bounded() && bytes > 0) {
      buckets.computeIfAbsent(partition, p -> new long[] {bytesPerSecond, nanoTime.getAsLong()})[0] -= bytes;
    }
  }
}
