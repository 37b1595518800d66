package io.tidemark.bench.storage;

import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * One benchmark cell's result: throughput in bytes and operations per second and latency
 * percentiles in microseconds (NaN where a figure does not apply).
 */
record Measurement(double bytesPerSecond, double opsPerSecond, double p50Micros, double p99Micros) {

  double megabytesPerSecond() {
    return bytesPerSecond / 1_000_000.0;
  }

  /** The median of each figure over repetitions (each figure independently). */
  static Measurement median(List<Measurement> runs) {
    return new Measurement(
        median(runs, Measurement::bytesPerSecond),
        median(runs, Measurement::opsPerSecond),
        median(runs, Measurement::p50Micros),
        median(runs, Measurement::p99Micros));
  }

  private static double median(List<Measurement> runs, ToDoubleFunction<Measurement> figure) {
    double[] values = runs.stream().mapToDouble(figure).filter(v -> !Double.isNaN(v)).sorted().toArray();
    if (values.length == 0) {
      return Double.NaN;
    }
    int mid = values.length / 2;
    return values.length % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
  }

  @Override
  public String toString() {
    return String.format("%.1f MB/s, %.0f ops/s, p50 %.0f µs, p99 %.0f µs", megabytesPerSecond(), opsPerSecond,
        p50Micros, p99Micros);
  }
}
