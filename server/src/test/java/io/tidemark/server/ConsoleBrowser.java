package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Runs one of the console's browser checks ({@code src/test/js/console-*check.mjs}: Debian's headless
 * Chromium driven by playwright-core) against a node's console and asserts that it passed. In CI a
 * missing browser or npm install fails the test; elsewhere the test is skipped.
 */
final class ConsoleBrowser {

  static final Path JS_DIR = Path.of("src", "test", "js");
  private static final String CHROMIUM = "/usr/bin/chromium";
  private static final ObjectMapper JSON = new ObjectMapper();

  /** What the script's stdin gets when it prints a line; returns true to close stdin. */
  @FunctionalInterface
  interface OnLine {
    void accept(String line, OutputStream stdin) throws Exception;
  }

  private ConsoleBrowser() {}

  /** The {@code node} executable, or the test is aborted (failed in CI) when the browser check cannot run here. */
  static String requireBrowser() {
    String node = nodeIfAvailable();
    if (node == null) {
      Assumptions.abort("node, " + CHROMIUM + " or npm packages missing (apt-get install chromium; npm ci --prefix server/src/test/js)");
    }
    return node;
  }

  /** The {@code node} executable, or null when the browser check cannot run here (outside CI; in CI it fails). */
  static String nodeIfAvailable() {
    String node = KafkajsSchemaRegistryTest.findNode();
    boolean installed = Files.isDirectory(JS_DIR.resolve("node_modules").resolve("playwright-core"));
    if (node == null || !installed || !new File(CHROMIUM).canExecute()) {
      if (System.getenv("CI") != null) {
        throw new AssertionError("node, chromium or the npm packages in " + JS_DIR + " are missing; .ci/run installs them");
      }
      return null;
    }
    return node;
  }

  /** Runs {@code script} on the console at {@code adminPort} with {@code want}; returns its JSON summary's timings. */
  static JsonNode run(String node, String script, int adminPort, Map<String, Object> want, OnLine onLine) throws Exception {
    Process browser = new ProcessBuilder(node, script, "http://127.0.0.1:" + adminPort, JSON.writeValueAsString(want))
        .directory(JS_DIR.toFile()).start();
    try {
      CompletableFuture<String> stderr = CompletableFuture.supplyAsync(() -> {
        try {
          return new String(browser.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
          return e.toString();
        }
      });
      List<String> out = new ArrayList<>();
      try (BufferedReader lines = new BufferedReader(new InputStreamReader(browser.getInputStream(), StandardCharsets.UTF_8));
           OutputStream stdin = browser.getOutputStream()) {
        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
          out.add(line);
          onLine.accept(line, stdin);
        }
      }
      assertThat(browser.waitFor(120, TimeUnit.SECONDS)).as("the browser script finished").isTrue();
      String errors = stderr.get(10, TimeUnit.SECONDS);
      assertThat(browser.exitValue()).as(script + " failed:\n" + errors + "\nstdout:\n" + String.join("\n", out)).isZero();
      JsonNode result = JSON.readTree(out.get(out.size() - 1));
      assertThat(result.path("ok").asBoolean()).isTrue();
      return result.path("timings");
    } finally {
      browser.destroyForcibly();
    }
  }
}
