package io.tidemark.bench.kafka;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;

/**
 * The repetitions of one system at one partition count: every sample of every {@link Figure} and
 * the failures met on the way. Reported figures are medians. Filled by the benchmark's main thread.
 */
final class Cell {

  private final EnumMap<Figure, List<Double>> samples = new EnumMap<>(Figure.class);
  private final List<String> failures = new ArrayList<>();

  void add(Figure figure, double value) {
    samples.computeIfAbsent(figure, f -> new ArrayList<>()).add(value);
  }

  void fail(String failure) {
    failures.add(failure);
  }

  List<String> failures() {
    return List.copyOf(failures);
  }

  int sampleCount(Figure figure) {
    return samples.getOrDefault(figure, List.of()).size();
  }

  /** The median of the samples of {@code figure}, NaN when there are none. */
  double median(Figure figure) {
    return median(samples.getOrDefault(figure, List.of()));
  }

  /** The smallest and largest sample of {@code figure} (NaN, NaN when there are none). */
  double[] range(Figure figure) {
    List<Double> values = samples.getOrDefault(figure, List.of()).stream().filter(v -> !Double.isNaN(v)).sorted().toList();
    return values.isEmpty() ? new double[] {Double.NaN, Double.NaN}
        : new double[] {values.getFirst(), values.getLast()};
  }

  static double median(List<Double> values) {
    List<Double> sorted = values.stream().filter(v -> !Double.isNaN(v)).sorted().toList();
    if (sorted.isEmpty()) {
      return Double.NaN;
    }
    int middle = sorted.size() / 2;
    return sorted.size() % 2 == 1 ? sorted.get(middle) : (sorted.get(middle - 1) + sorted.get(middle)) / 2;
  }
}
