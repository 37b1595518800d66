package io.tidemark.bench.storage;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Latency samples in nanoseconds, recorded lock-free from any thread into a fixed array (at most
 * {@code capacity} samples are kept; later ones are counted but not kept, and
 * {@link #dropped()} says how many). Percentiles sort a copy.
 */
final class LatencyRecorder {

  private final long[] samples;
  private final AtomicInteger next = new AtomicInteger();
  private final AtomicLong dropped = new AtomicLong();

  LatencyRecorder(int capacity) {
    this.samples = new long[capacity];
  }

  void record(long nanos) {
    int i = next.getAndIncrement();
    if (i < samples.length) {
      samples[i] = nanos;
    } else {
      dropped.incrementAndGet();
    }
  }

  long count() {
    return Math.min(next.get(), samples.length) + dropped.get();
  }

  long dropped() {
    return dropped.get();
  }

  /** The {@code q}-quantile (0..1) in microseconds, or NaN without samples. */
  double percentileMicros(double q) {
    int n = Math.min(next.get(), samples.length);
    if (n == 0) {
      return Double.NaN;
    }
    long[] sorted = Arrays.copyOf(samples, n);
    Arrays.sort(sorted);
    int index = (int) Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1));
    return sorted[index] / 1_000.0;
  }
}
