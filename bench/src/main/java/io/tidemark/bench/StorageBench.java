package io.tidemark.bench;

import io.tidemark.bench.storage.StorageBenchmark;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;

/**
 * Runs the storage-engine benchmark and writes its section of {@code docs/benchmarks.md}.
 *
 * <pre>
 *   bench/run-storage.sh [--mode quick|full] [--dir DIR] [--output FILE | --no-output] [--repetitions N]
 * </pre>
 *
 * {@code --dir} is where the files are written (default {@code data/bench}: the filesystem the
 * node's data lives on); the full mode writes {@code docs/benchmarks.md} by default, the quick mode
 * (a few seconds, a smoke test) prints only.
 */
public final class StorageBench {

  private StorageBench() {}

  public static void main(String[] args) throws Exception {
    StorageBenchmark.Mode mode = StorageBenchmark.Mode.FULL;
    Path dir = Path.of("data", "bench");
    Optional<Path> output = Optional.empty();
    boolean noOutput = false;
    Optional<Integer> repetitions = Optional.empty();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      String value = i + 1 < args.length ? args[i + 1] : null;
      switch (arg) {
        case "--mode" -> { mode = StorageBenchmark.Mode.valueOf(need(arg, value).toUpperCase(Locale.ROOT)); i++; }
        case "--dir" -> { dir = Path.of(need(arg, value)); i++; }
        case "--output" -> { output = Optional.of(Path.of(need(arg, value))); i++; }
        case "--no-output" -> noOutput = true;
        case "--repetitions" -> { repetitions = Optional.of(Integer.parseInt(need(arg, value))); i++; }
        default -> throw new IllegalArgumentException("unknown argument " + arg
            + "; usage: [--mode quick|full] [--dir DIR] [--output FILE | --no-output] [--repetitions N]");
      }
    }
    if (output.isEmpty() && !noOutput && mode == StorageBenchmark.Mode.FULL) {
      output = Optional.of(Path.of("docs", "benchmarks.md"));
    }
    String command = "bench/run-storage.sh --mode " + mode.name().toLowerCase(Locale.ROOT)
        + repetitions.map(r -> " --repetitions " + r).orElse("");
    String previous = output.isPresent() && Files.exists(output.get())
        ? StorageBenchmark.section(Files.readString(output.get(), StandardCharsets.UTF_8)) : "";
    String section = new StorageBenchmark(mode, dir, repetitions, command).run(previous);
    System.out.println();
    System.out.println(section);
    if (output.isPresent()) {
      Path file = output.get();
      String page = Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
      if (file.getParent() != null) {
        Files.createDirectories(file.getParent());
      }
      Files.writeString(file, StorageBenchmark.replaceSection(page, section), StandardCharsets.UTF_8);
      System.out.println("wrote " + file);
    }
    System.out.println("reproduce with: " + command);
  }

  private static String need(String arg, String value) {
    if (value == null) {
      throw new IllegalArgumentException(arg + " needs a value");
    }
    return value;
  }
}
