package io.tidemark.bench;

import io.tidemark.bench.table.FreshnessRun;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Table-topic freshness: time from produce to visible in a fresh Iceberg table scan, p50 and p99,
 * with commit intervals of 1 s and 10 s. Prints a Markdown table.
 *
 * <pre>
 *   bench/run-table-freshness.sh [--seconds N] [--rate RECORDS_PER_SECOND] [--warmup-seconds N] [--dir DIR]
 * </pre>
 */
public final class TableFreshnessBench {

  private TableFreshnessBench() {}

  public static void main(String[] args) throws Exception {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
    long seconds = 60;
    int rate = 500;
    Path dir = Path.of("data", "bench-table");
    long warmupSeconds = 15;
    for (int i = 0; i < args.length; i++) {
      String value = i + 1 < args.length ? args[i + 1] : null;
      switch (args[i]) {
        case "--seconds" -> { seconds = Long.parseLong(value); i++; }
        case "--rate" -> { rate = Integer.parseInt(value); i++; }
        case "--dir" -> { dir = Path.of(value); i++; }
        case "--warmup-seconds" -> { warmupSeconds = Long.parseLong(value); i++; }
        default -> throw new IllegalArgumentException("unknown argument " + args[i]
            + "; usage: [--seconds N] [--rate RECORDS_PER_SECOND] [--warmup-seconds N] [--dir DIR]");
      }
    }
    List<FreshnessRun.Result> results = new ArrayList<>();
    for (long interval : new long[] {1_000, 10_000}) {
      Path runDir = dir.resolve("interval-" + interval);
      deleteRecursively(runDir);
      results.add(new FreshnessRun(runDir, interval, seconds * 1000, rate, warmupSeconds * 1000).run());
    }
    System.out.println();
    System.out.println("Command: bench/run-table-freshness.sh --seconds " + seconds + " --rate " + rate
        + " --warmup-seconds " + warmupSeconds);
    System.out.println();
    System.out.println("| commit interval | records produced | records seen | p50 ms | p99 ms | max ms | p50 ms after warm-up"
        + " | p99 ms after warm-up | target p99 ms (interval + 1 s) |");
    System.out.println("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (FreshnessRun.Result r : results) {
      System.out.printf("| %d s | %d | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %d |%n", r.commitIntervalMs() / 1000, r.produced(),
          r.freshnessMs().length, FreshnessRun.Result.percentile(r.freshnessMs(), 0.5),
          FreshnessRun.Result.percentile(r.freshnessMs(), 0.99), FreshnessRun.Result.percentile(r.freshnessMs(), 1.0),
          FreshnessRun.Result.percentile(r.afterWarmupMs(), 0.5), FreshnessRun.Result.percentile(r.afterWarmupMs(), 0.99),
          r.commitIntervalMs() + 1000);
    }
  }

  private static void deleteRecursively(Path dir) throws Exception {
    if (!Files.exists(dir)) {
      return;
    }
    try (var paths = Files.walk(dir)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
