package io.tidemark.bench.kafka;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A Java child process of the benchmark (a broker or one of Kafka's tools), its standard output and
 * error merged into a log file. {@link #killAll} kills every child still alive together with its
 * descendants; the benchmark calls it from its shutdown hook, so that an exit on an exception or on
 * SIGTERM from {@code run-kafka.sh}'s trap leaves no process behind. Owned by the thread that
 * started it; {@link #close} may be called more than once.
 */
public final class ChildJvm implements AutoCloseable {

  private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();
  private static final Duration GRACEFUL_STOP = Duration.ofSeconds(30);

  private final String name;
  private final Process process;
  private final Path log;

  private ChildJvm(String name, Process process, Path log) {
    this.name = name;
    this.process = process;
    this.log = log;
  }

  /** Starts {@code java [jvmOptions] -cp classpath mainClass [args]} with its output in {@code log}. */
  public static ChildJvm start(String name, Path java, List<String> jvmOptions, String classpath, String mainClass,
                        List<String> args, Path log) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(java.toString());
    command.addAll(jvmOptions);
    command.add("-cp");
    command.add(classpath);
    command.add(mainClass);
    command.addAll(args);
    Files.createDirectories(log.getParent());
    Files.writeString(log, "# " + String.join(" ", command) + "\n", StandardCharsets.UTF_8);
    ProcessBuilder builder = new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    Process process = builder.start();
    LIVE.add(process);
    return new ChildJvm(name, process, log);
  }

  /** Kills every child started here that is still running (and its descendants), waiting for each. */
  public static void killAll() {
    LIVE.forEach(ChildJvm::kill);
    LIVE.clear();
  }

  String name() {
    return name;
  }

  public Path log() {
    return log;
  }

  /** The CPU time the child used so far (every thread), when the OS tells it. */
  public java.util.Optional<Duration> cpuTime() {
    return process.toHandle().info().totalCpuDuration();
  }

  /**
   * The CPU time the child's live threads whose name starts with one of {@code prefixes} used so far, from
   * {@code /proc/PID/task/*} (Linux; clock ticks of 10 ms, {@code USER_HZ} 100); empty where there is no such file.
   */
  public java.util.Optional<Duration> cpuTimeOfThreads(List<String> prefixes) {
    Path tasks = Path.of("/proc", Long.toString(process.pid()), "task");
    if (!Files.isDirectory(tasks)) {
      return java.util.Optional.empty();
    }
    long ticks = 0;
    try (java.util.stream.Stream<Path> threads = Files.list(tasks)) {
      for (Path thread : threads.toList()) {
        try {
          String name = Files.readString(thread.resolve("comm")).strip();
          if (prefixes.stream().noneMatch(name::startsWith)) {
            continue;
          }
          String stat = Files.readString(thread.resolve("stat"));
          // fields after the parenthesised name: state is field 3, utime 14, stime 15
          String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
          ticks += Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
        } catch (IOException | RuntimeException gone) {
          // the thread ended meanwhile
        }
      }
    } catch (IOException e) {
      return java.util.Optional.empty();
    }
    return java.util.Optional.of(Duration.ofMillis(ticks * 10));
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** Waits for the exit; returns the exit code, or empty (and kills the child) when {@code timeout} passed first. */
  public java.util.OptionalInt waitFor(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      kill(process);
      LIVE.remove(process);
      return java.util.OptionalInt.empty();
    }
    LIVE.remove(process);
    return java.util.OptionalInt.of(process.exitValue());
  }

  /** The whole log so far. */
  public String output() throws IOException {
    return Files.readString(log, StandardCharsets.UTF_8);
  }

  /** The last {@code lines} lines of the log, for error messages. */
  public String tail(int lines) {
    try {
      List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(log " + log + " unreadable: " + e.getMessage() + ")";
    }
  }

  /** Kills the child at once (SIGKILL: no shutdown hook runs, as in a crash) and waits for it to be gone. */
  public void killNine() {
    kill(process);
    LIVE.remove(process);
  }

  /** Asks the child to stop (SIGTERM), waits up to 30 s, then kills it and its descendants. */
  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroy();
      if (!process.waitFor(GRACEFUL_STOP.toMillis(), TimeUnit.MILLISECONDS)) {
        kill(process);
      }
    }
    LIVE.remove(process);
  }

  private static void kill(Process process) {
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
