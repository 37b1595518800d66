package io.tidemark.bench.kafka;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The command line of a benchmark main: the flags {@code --quick} and {@code --no-output}, and
 * {@code --name value} options. Immutable.
 *
 * @param options every {@code --name value} pair, by name without the dashes
 * @param quick whether {@code --quick} was given
 * @param noOutput whether {@code --no-output} was given
 */
record BenchArgs(Map<String, String> options, boolean quick, boolean noOutput) {

  static BenchArgs parse(String[] args) {
    Map<String, String> o = new LinkedHashMap<>();
    boolean quick = false;
    boolean noOutput = false;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick" -> quick = true;
        case "--no-output" -> noOutput = true;
        default -> {
          if (!args[i].startsWith("--") || i + 1 >= args.length) {
            throw new IllegalArgumentException("unknown or incomplete argument " + args[i]);
          }
          o.put(args[i].substring(2), args[++i]);
        }
      }
    }
    return new BenchArgs(o, quick, noOutput);
  }

  /** The option {@code key}, which {@code script} always passes. */
  String require(String key, String script) {
    String v = options.get(key);
    if (v == null) {
      throw new IllegalArgumentException("--" + key + " is required (" + script + " passes it)");
    }
    return v;
  }

  /** Where the section goes: {@code --output}, else nowhere for a quick run or {@code --no-output}, else docs/benchmarks.md. */
  java.util.Optional<java.nio.file.Path> output() {
    return options.containsKey("output") ? java.util.Optional.of(java.nio.file.Path.of(options.get("output")))
        : noOutput || quick ? java.util.Optional.empty() : java.util.Optional.of(java.nio.file.Path.of("docs", "benchmarks.md"));
  }
}
