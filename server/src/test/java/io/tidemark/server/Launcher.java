package io.tidemark.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs a {@code bin/tidemark} launcher (of the source tree or of an unpacked archive) as a process,
 * with the test's JDK as JAVA_HOME and, first on PATH, a {@code mvn} that fails loudly: a command
 * that should not build cannot build unnoticed.
 */
final class Launcher {

  /** What {@code mvn} prints if the launcher calls it. */
  static final String MAVEN_CALLED = "FAKE MVN CALLED";

  /** A finished command: exit code, stdout, stderr. */
  record Result(int code, String out, String err) {
    String describe() {
      return "exit " + code + "\nstdout:\n" + out + "\nstderr:\n" + err;
    }
  }

  private final Path launcher;
  private final Path fakeBin;

  /** {@code home} holds bin/tidemark; {@code scratch} is a directory for the fake {@code mvn}. */
  Launcher(Path home, Path scratch) {
    this.launcher = home.resolve("bin/tidemark");
    this.fakeBin = scratch.resolve("fake-bin");
    try {
      Files.createDirectories(fakeBin);
      Path mvn = fakeBin.resolve("mvn");
      Files.writeString(mvn, "#!/bin/sh\necho '" + MAVEN_CALLED + " with' \"$@\" >&2\nexit 97\n");
      Files.setPosixFilePermissions(mvn, PosixFilePermissions.fromString("rwxr-xr-x"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static Path sourceTree() {
    return io.tidemark.server.docs.DocCommands.repositoryRoot();
  }

  /** The process, not yet waited for; its environment as {@link #run} sets it. */
  ProcessBuilder builder(Path workDir, List<String> args) {
    List<String> command = new ArrayList<>(List.of(launcher.toString()));
    command.addAll(args);
    ProcessBuilder builder = new ProcessBuilder(command).directory(workDir.toFile());
    Map<String, String> env = builder.environment();
    env.put("JAVA_HOME", System.getProperty("java.home"));
    env.put("PATH", fakeBin + ":" + env.getOrDefault("PATH", "/usr/bin:/bin"));
    env.remove("TIDEMARK_JAVA_FOUND");
    return builder;
  }

  /** Runs the launcher with {@code args} in {@code workDir} and waits up to {@code timeoutSeconds}. */
  Result run(Path workDir, long timeoutSeconds, String... args) throws Exception {
    return finish(builder(workDir, List.of(args)).start(), timeoutSeconds);
  }

  /** Waits up to {@code timeoutSeconds} for a started process (stdin closed) and collects its output. */
  static Result finish(Process p, long timeoutSeconds) throws Exception {
    p.getOutputStream().close();
    CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
    CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(p.info().commandLine().orElse("the process") + " did not finish in " + timeoutSeconds + " s");
    }
    return new Result(p.exitValue(), out.get(30, TimeUnit.SECONDS), err.get(30, TimeUnit.SECONDS));
  }

  private static String read(java.io.InputStream in) {
    try (in) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
