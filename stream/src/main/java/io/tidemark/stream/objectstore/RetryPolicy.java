package io.tidemark.stream.objectstore;

/**
 * How often and how patiently a store retries a failed request: at most {@code maxAttempts}
 * attempts in all, separated by exponential backoff with full jitter: before attempt {@code n+1}
 * the delay is uniform in {@code [0, min(maxDelayMs, baseDelayMs * 2^(n-1)))}, which spreads
 * the retries of many clients that were throttled together.
 */
public record RetryPolicy(int maxAttempts, long baseDelayMs, long maxDelayMs) {

  public RetryPolicy {
    if (maxAttempts < 1 || baseDelayMs < 0 || maxDelayMs < baseDelayMs) {
      throw new IllegalArgumentException("retry policy needs maxAttempts >= 1 and 0 <= baseDelayMs <= maxDelayMs, got "
          + maxAttempts + ", " + baseDelayMs + ", " + maxDelayMs);
    }
  }

  /** Retries nothing. */
  public static RetryPolicy none() {
    return new RetryPolicy(1, 0, 0);
  }

  /** The delay before the attempt after {@code failedAttempt} (1-based), given {@code random} in [0, 1). */
  public long delayMs(int failedAttempt, double random) {
    int doublings = Math.min(Math.max(failedAttempt - 1, 0), 30);
    long ceiling = Math.min(maxDelayMs, baseDelayMs << doublings);
    if (ceiling < 0) {
      ceiling = maxDelayMs; // shift overflow
    }
    return (long) (random * ceiling);
  }
}
