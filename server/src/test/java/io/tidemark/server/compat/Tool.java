package io.tidemark.server.compat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs one of Kafka's command-line tools (kafka-tools, on the test class path) in a child JVM and keeps what it printed. */
final class Tool {

  /** Exit code (-1 when it did not exit within two minutes) and standard output. */
  record Run(int code, String out) {}

  private Tool() {}

  static Run run(String mainClass, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
        "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), mainClass));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    boolean exited = p.waitFor(120, TimeUnit.SECONDS);
    if (!exited) {
      p.destroyForcibly();
    }
    return new Run(exited ? p.exitValue() : -1, out);
  }
}
