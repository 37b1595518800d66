package io.tidemark.bench;

import io.tidemark.bench.kafka.KafkaComparisonMain;

/**
 * Compares Tidemark with Apache Kafka using Kafka's own performance tools and writes the section
 * "Kafka comparison" of {@code docs/benchmarks.md}. Started by {@code bench/run-kafka.sh}, which
 * builds Tidemark, fetches Kafka and passes the class paths:
 *
 * <pre>
 *   bench/run-kafka.sh [--quick] [--repetitions N] [--output FILE | --no-output]
 * </pre>
 *
 * The full mode writes {@code docs/benchmarks.md}; {@code --quick} (a smoke run of a few minutes)
 * prints only. Exits with 1 when any measurement failed (the failures are listed in the section).
 */
public final class KafkaBench {

  private KafkaBench() {}

  public static void main(String[] args) throws Exception {
    System.exit(KafkaComparisonMain.run(args));
  }
}
