package io.tidemark.bench.kafka;

import io.tidemark.bench.BenchmarksPage;
import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The command line of the Kafka comparison: parses the arguments, runs {@link KafkaComparison},
 * prints the section and writes it into the benchmarks page. Runs on the caller's thread.
 */
public final class KafkaComparisonMain {

  private static final String USAGE = "usage: [--quick] [--repetitions N] [--output FILE | --no-output] "
      + "--kafka-classpath CP --tidemark-classpath CP --kafka-version V [--work-dir DIR] [--log-dir DIR] "
      + "[--node-jvm-options OPTS] [--tool-timeout-seconds S]";

  private static final Duration DEFAULT_TOOL_TIMEOUT = Duration.ofMinutes(15);

  private KafkaComparisonMain() {}

  /** Runs the comparison; returns the process exit code (0, or 1 when a measurement failed). */
  public static int run(String[] args) throws Exception {
    Options options = Options.parse(args);
    Plan plan = options.quick ? Plan.quick(options.repetitions) : Plan.full(options.repetitions);
    Path workDir = Files.createTempDirectory(options.workParent, "tidemark-kafka-bench-");
    Runtime.getRuntime().addShutdownHook(new Thread(() -> cleanUp(workDir), "kafka-bench-cleanup"));
    Setup.deleteRecursively(options.logDir);
    Files.createDirectories(options.logDir);
    Setup setup = new Setup(Path.of(System.getProperty("java.home"), "bin", "java"), options.nodeJvmOptions,
        List.of("-Xmx512m"), options.kafkaClasspath, options.tidemarkClasspath, workDir, options.logDir);
    String loadAtStart = Setup.loadAverage();
    String startedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    String filesystem = filesystem(workDir);
    Map<Contender, Map<Integer, Cell>> results;
    try {
      results = new KafkaComparison(setup, plan, new KafkaTools(setup, options.toolTimeout)).run();
    } finally {
      cleanUp(workDir);
    }
    ComparisonReport.Environment env = new ComparisonReport.Environment(options.kafkaVersion,
        Runtime.getRuntime().availableProcessors(), loadAtStart, Setup.loadAverage(), Runtime.version().toString(),
        String.join(" ", options.nodeJvmOptions), filesystem, startedAt);
    String section = ComparisonReport.render(plan, results, env, options.command());
    System.out.println();
    System.out.println(section);
    Optional<Path> output = options.output.or(() -> options.noOutput || options.quick
        ? Optional.empty() : Optional.of(Path.of("docs", "benchmarks.md")));
    if (output.isPresent()) {
      BenchmarksPage.writeSection(output.get(), ComparisonReport.SECTION_TITLE, section);
    }
    System.out.println("logs of every broker and tool run: " + options.logDir);
    System.out.println("reproduce with: " + options.command());
    return ComparisonReport.anyFailure(results) ? 1 : 0;
  }

  /** Kills the children still running and deletes the scratch directory; also the shutdown hook (SIGTERM). */
  private static void cleanUp(Path workDir) {
    ChildJvm.killAll();
    try {
      Setup.deleteRecursively(workDir);
    } catch (IOException e) {
      System.err.println("run-kafka: could not delete " + workDir + ": " + e.getMessage());
    }
  }

  private static String filesystem(Path dir) {
    try {
      FileStore store = Files.getFileStore(dir);
      return store.type() + " (" + store.name() + ")";
    } catch (IOException e) {
      return "an unknown filesystem";
    }
  }

  /** The parsed command line. */
  private static final class Options {
    boolean quick;
    Optional<Integer> repetitions = Optional.empty();
    Optional<Path> output = Optional.empty();
    boolean noOutput;
    String kafkaClasspath;
    String tidemarkClasspath;
    String kafkaVersion;
    Path workParent = Path.of(System.getProperty("java.io.tmpdir"));
    Path logDir = Path.of("bench", "target", "kafka-bench-logs");
    List<String> nodeJvmOptions = List.of("-Xmx2g");
    Duration toolTimeout = DEFAULT_TOOL_TIMEOUT;

    static Options parse(String[] args) {
      Options o = new Options();
      for (int i = 0; i < args.length; i++) {
        String arg = args[i];
        if (arg.equals("--quick")) {
          o.quick = true;
          continue;
        }
        if (arg.equals("--no-output")) {
          o.noOutput = true;
          continue;
        }
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException(arg + " needs a value (or is unknown); " + USAGE);
        }
        String value = args[++i];
        switch (arg) {
          case "--repetitions" -> o.repetitions = Optional.of(Integer.parseInt(value));
          case "--output" -> o.output = Optional.of(Path.of(value));
          case "--kafka-classpath" -> o.kafkaClasspath = value;
          case "--tidemark-classpath" -> o.tidemarkClasspath = value;
          case "--kafka-version" -> o.kafkaVersion = value;
          case "--work-dir" -> o.workParent = Path.of(value);
          case "--log-dir" -> o.logDir = Path.of(value);
          case "--node-jvm-options" -> o.nodeJvmOptions = List.of(value.trim().split("\\s+"));
          case "--tool-timeout-seconds" -> o.toolTimeout = Duration.ofSeconds(Long.parseLong(value));
          default -> throw new IllegalArgumentException("unknown argument " + arg + "; " + USAGE);
        }
      }
      if (o.kafkaClasspath == null || o.tidemarkClasspath == null || o.kafkaVersion == null) {
        throw new IllegalArgumentException("--kafka-classpath, --tidemark-classpath and --kafka-version are required "
            + "(bench/run-kafka.sh passes them); " + USAGE);
      }
      return o;
    }

    /** The user-facing command that reproduces this run (the class paths are the script's business). */
    String command() {
      List<String> parts = new ArrayList<>(List.of("bench/run-kafka.sh"));
      if (quick) {
        parts.add("--quick");
      }
      repetitions.ifPresent(r -> parts.addAll(List.of("--repetitions", r.toString())));
      if (!toolTimeout.equals(DEFAULT_TOOL_TIMEOUT)) {
        parts.addAll(List.of("--tool-timeout-seconds", Long.toString(toolTimeout.toSeconds())));
      }
      if (!nodeJvmOptions.equals(List.of("-Xmx2g"))) {
        parts.addAll(List.of("--node-jvm-options", "'" + String.join(" ", nodeJvmOptions) + "'"));
      }
      return String.join(" ", parts);
    }
  }
}
