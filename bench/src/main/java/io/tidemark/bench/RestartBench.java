package io.tidemark.bench;

import io.tidemark.bench.kafka.ChildJvm;
import io.tidemark.bench.kafka.Setup;
import io.tidemark.bench.restart.RestartBenchmark;
import io.tidemark.bench.restart.RestartReport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Runs the restart benchmark (issue 11) and writes its section of {@code docs/benchmarks.md}.
 *
 * <pre>
 *   bench/run-restart.sh [--restarts N] [--topics N] [--partitions-per-topic N] [--records-per-partition N]
 *                        [--node-jvm-options 'OPTS'] [--output FILE | --no-output] [--work-dir DIR]
 * </pre>
 *
 * Defaults: 10 restarts of a node with 10 × 10 partitions and 100 records per partition, node JVM
 * {@code -Xmx2g} (what {@code bin/tidemark start} uses); the section is written to
 * {@code docs/benchmarks.md} unless {@code --no-output} or {@code --output} says otherwise. The
 * nodes run from this JVM's class path; their logs stay in {@code bench/target/restart-bench-logs}.
 */
public final class RestartBench {

  private RestartBench() {}

  public static void main(String[] args) throws Exception {
    int restarts = 10;
    int topics = 10;
    int partitionsPerTopic = 10;
    int records = 100;
    List<String> jvmOptions = List.of("-Xmx2g");
    Optional<Path> output = Optional.of(Path.of("docs", "benchmarks.md"));
    Path workParent = Path.of(System.getProperty("java.io.tmpdir"));
    boolean aotCache = Runtime.version().feature() >= 25;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (arg.equals("--no-output")) {
        output = Optional.empty();
        continue;
      }
      if (arg.equals("--no-aot-cache")) {
        aotCache = false;
        continue;
      }
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException(arg + " needs a value (or is unknown)");
      }
      String value = args[++i];
      switch (arg) {
        case "--restarts" -> restarts = Integer.parseInt(value);
        case "--topics" -> topics = Integer.parseInt(value);
        case "--partitions-per-topic" -> partitionsPerTopic = Integer.parseInt(value);
        case "--records-per-partition" -> records = Integer.parseInt(value);
        case "--node-jvm-options" -> jvmOptions = List.of(value.trim().split("\\s+"));
        case "--output" -> output = Optional.of(Path.of(value));
        case "--work-dir" -> workParent = Path.of(value);
        default -> throw new IllegalArgumentException("unknown argument " + arg);
      }
    }
    RestartBenchmark.Plan plan = new RestartBenchmark.Plan(topics, partitionsPerTopic, records, restarts);
    String command = command(plan, jvmOptions, aotCache);
    Path workDir = Files.createTempDirectory(workParent, "tidemark-restart-bench-");
    Path logDir = Path.of("bench", "target", "restart-bench-logs");
    Runtime.getRuntime().addShutdownHook(new Thread(() -> cleanUp(workDir), "restart-bench-cleanup"));
    String loadAtStart = Setup.loadAverage();
    String startedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    List<RestartBenchmark.Restart> measured;
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    String classpath = System.getProperty("java.class.path");
    List<String> nodeOptions = jvmOptions;
    try {
      if (aotCache) {
        nodeOptions = new ArrayList<>(jvmOptions);
        nodeOptions.add("-XX:AOTCache=" + trainAotCache(java, jvmOptions, classpath, workDir, logDir));
      }
      measured = new RestartBenchmark(plan, java, nodeOptions, classpath, workDir, logDir).run();
    } finally {
      cleanUp(workDir);
    }
    RestartReport.Environment env = new RestartReport.Environment(Runtime.getRuntime().availableProcessors(),
        loadAtStart, Setup.loadAverage(), Runtime.version().toString(), String.join(" ", jvmOptions)
        + (aotCache ? " -XX:AOTCache=tidemark.aot" : ""), startedAt);
    String section = RestartReport.render(plan, measured, env, command);
    System.out.println();
    System.out.println(section);
    if (output.isPresent()) {
      BenchmarksPage.writeSection(output.get(), RestartReport.SECTION_TITLE, section);
    }
    System.out.println("node logs: " + logDir);
    System.out.println("reproduce with: " + command);
  }

  /**
   * What {@code bin/tidemark aot-cache} does, on this benchmark's class path (a cache is only used with the
   * class path it was trained on): the training node ({@code StartupTraining}) under
   * {@code -XX:AOTCacheOutput}; returns the cache. Not part of any measured time.
   */
  private static Path trainAotCache(Path java, List<String> jvmOptions, String classpath, Path workDir, Path logDir)
      throws Exception {
    Path cache = workDir.resolve("tidemark.aot");
    List<String> options = new ArrayList<>(jvmOptions);
    options.add("-XX:AOTCacheOutput=" + cache);
    options.add("-Xlog:aot=error");
    System.out.println("training the AOT cache " + cache + "...");
    ChildJvm training = ChildJvm.start("aot-training", java, options, classpath, "io.tidemark.server.StartupTraining",
        List.of(), logDir.resolve("aot-training.log"));
    java.util.OptionalInt exit = training.waitFor(Duration.ofMinutes(15));
    if (exit.isEmpty() || exit.getAsInt() != 0 || !Files.isRegularFile(cache)) {
      throw new IllegalStateException("the AOT training run failed (exit " + exit + "); its log " + training.log()
          + " ends with:\n" + training.tail(30));
    }
    return cache;
  }

  private static String command(RestartBenchmark.Plan plan, List<String> jvmOptions, boolean aotCache) {
    List<String> parts = new ArrayList<>(List.of("bench/run-restart.sh"));
    if (!aotCache) {
      parts.add("--no-aot-cache");
    }
    if (plan.restarts() != 10) {
      parts.addAll(List.of("--restarts", Integer.toString(plan.restarts())));
    }
    if (plan.topics() != 10) {
      parts.addAll(List.of("--topics", Integer.toString(plan.topics())));
    }
    if (plan.partitionsPerTopic() != 10) {
      parts.addAll(List.of("--partitions-per-topic", Integer.toString(plan.partitionsPerTopic())));
    }
    if (plan.recordsPerPartition() != 100) {
      parts.addAll(List.of("--records-per-partition", Integer.toString(plan.recordsPerPartition())));
    }
    if (!jvmOptions.equals(List.of("-Xmx2g"))) {
      parts.addAll(List.of("--node-jvm-options", "'" + String.join(" ", jvmOptions) + "'"));
    }
    return String.join(" ", parts);
  }

  private static void cleanUp(Path workDir) {
    ChildJvm.killAll();
    try {
      Setup.deleteRecursively(workDir);
    } catch (IOException e) {
      System.err.println("run-restart: could not delete " + workDir + ": " + e.getMessage());
    }
  }
}
