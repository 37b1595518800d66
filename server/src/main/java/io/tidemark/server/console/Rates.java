package io.tidemark.server.console;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * Per-second rates of growing totals (a topic's end offsets, a node's byte counters), from the last
 * two samples of each: the console samples when it computes a page, so a rate covers the time since
 * the previous computation (a few seconds while someone watches). A total that went down (a counter
 * restarted, a topic re-created) restarts the rate. Bounded: at most {@code maxKeys} totals are
 * followed; keys not sampled for {@code forgetMs} are dropped first.
 *
 * <p>Thread-safe (one monitor; each call is a few map operations).
 */
final class Rates {

  private record Sample(double total, long atMs, Double rate) {}

  private final int maxKeys;
  private final long forgetMs;
  private final Map<String, Sample> samples = new HashMap<>();

  Rates(int maxKeys, long forgetMs) {
    this.maxKeys = maxKeys;
    this.forgetMs = forgetMs;
  }

  /**
   * Records {@code total} for {@code key} at {@code nowMs} and answers the rate per second since the
   * previous sample, or null when there is none yet (a sample less than 500 ms after the previous one
   * is not taken and answers the previous rate).
   */
  synchronized Double sample(String key, double total, long nowMs) {
    Sample last = samples.get(key);
    if (last != null && nowMs - last.atMs() < 500) {
      return last.rate(); // too close to the last sample to measure; keep its rate
    }
    Double rate = last == null || total < last.total() ? null : (total - last.total()) * 1000.0 / (nowMs - last.atMs());
    if (last == null && samples.size() >= maxKeys) {
      forget(nowMs);
      if (samples.size() >= maxKeys) {
        return null;
      }
    }
    samples.put(key, new Sample(total, nowMs, rate));
    return rate;
  }

  private void forget(long nowMs) {
    for (Iterator<Sample> it = samples.values().iterator(); it.hasNext(); ) {
      if (nowMs - it.next().atMs() > forgetMs) {
        it.remove();
      }
    }
  }
}
