package io.tidemark.bench.kafka;

import java.util.List;
import java.util.Optional;

/**
 * How much one comparison run measures: the same for every system. Immutable.
 *
 * @param mode "full" or "quick"
 * @param repetitions runs of every measurement per system and partition count (medians are reported)
 * @param partitions the partition counts of the topics
 * @param throughputRecords records per ProducerPerformance run without a rate limit (then consumed again)
 * @param latencyRecordsPerSecond the fixed rate of the produce-latency run
 * @param latencyRecords records per fixed-rate run
 * @param endToEndRecords records per EndToEndLatency run
 */
record Plan(String mode, int repetitions, List<Integer> partitions, long throughputRecords, int latencyRecordsPerSecond,
            long latencyRecords, long endToEndRecords) {

  Plan {
    if (repetitions < 1) {
      throw new IllegalArgumentException("repetitions must be at least 1, got " + repetitions);
    }
    partitions = List.copyOf(partitions);
  }

  /**
   * 3 repetitions, 60k records (59 MiB) per throughput run: sized so that the whole comparison ends
   * within about 40 minutes even when the two cores are shared with busy builds.
   */
  static Plan full(Optional<Integer> repetitions) {
    return new Plan("full", repetitions.orElse(3), List.of(1, 16), 60_000, 1_000, 15_000, 600);
  }

  /** A smoke run of a few minutes: every tool once against every system, small counts. */
  static Plan quick(Optional<Integer> repetitions) {
    return new Plan("quick", repetitions.orElse(1), List.of(1, 16), 10_000, 500, 2_000, 200);
  }
}
