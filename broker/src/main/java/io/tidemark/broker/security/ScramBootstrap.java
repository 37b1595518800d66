package io.tidemark.broker.security;

import io.tidemark.stream.config.ConfigException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The first users of a secured cluster, from {@code sasl.scram.bootstrap.credentials} in
 * kafka-storage's {@code --add-scram} form ({@code SCRAM-SHA-256=[name=admin,password=secret]},
 * entries separated by ';', optional {@code iterations=N}). A user that already has a credential
 * for that mechanism keeps it: restarting with the same setting changes nothing, and a password
 * changed since with {@code kafka-configs} is not reset.
 */
public final class ScramBootstrap {

  private static final Pattern ENTRY = Pattern.compile("\\s*(SCRAM-SHA-256|SCRAM-SHA-512)\\s*=\\s*\\[(.*)]\\s*",
      Pattern.CASE_INSENSITIVE);

  /** One user to create. */
  public record Entry(ScramAlgorithm algorithm, String name, String password, int iterations) {}

  private ScramBootstrap() {}

  public static List<Entry> parse(String text) {
    List<Entry> out = new ArrayList<>();
    if (text == null || text.isBlank()) {
      return out;
    }
    for (String raw : text.split(";")) {
      if (raw.isBlank()) {
        continue;
      }
      Matcher m = ENTRY.matcher(raw);
      if (!m.matches()) {
        throw invalid("entry is not SCRAM-SHA-256=[name=...,password=...]");
      }
      String name = null;
      String password = null;
      int iterations = ScramAlgorithm.MIN_ITERATIONS;
      for (String field : m.group(2).split(",")) {
        int eq = field.indexOf('=');
        if (eq <= 0) {
          throw invalid("field without '='");
        }
        String key = field.substring(0, eq).trim().toLowerCase(Locale.ROOT);
        String value = field.substring(eq + 1).trim();
        if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
          value = value.substring(1, value.length() - 1);
        }
        switch (key) {
          case "name" -> name = value;
          case "password" -> password = value;
          case "iterations" -> iterations = Integer.parseInt(value);
          default -> throw invalid("unknown field " + key + " (name, password, iterations)");
        }
      }
      if (name == null || name.isEmpty() || password == null || password.isEmpty()) {
        throw invalid("an entry needs name and password");
      }
      if (iterations < ScramAlgorithm.MIN_ITERATIONS || iterations > ScramAlgorithm.MAX_ITERATIONS) {
        throw invalid("iterations must be within " + ScramAlgorithm.MIN_ITERATIONS + ".." + ScramAlgorithm.MAX_ITERATIONS);
      }
      out.add(new Entry(ScramAlgorithm.ofName(m.group(1)).orElseThrow(), name, password, iterations));
    }
    return out;
  }

  private static ConfigException invalid(String why) {
    return new ConfigException(SecurityConfig.SCRAM_BOOTSTRAP.name(), "[hidden]", why);
  }

  /** Creates the users that have no credential for their mechanism yet; blocks until agreed (at most a minute). */
  public static void apply(String text, ScramCredentialStore store) {
    SecureRandom random = new SecureRandom();
    for (Entry e : parse(text)) {
      if (store.credential(e.name(), e.algorithm()).isPresent()) {
        continue;
      }
      byte[] salt = new byte[32];
      random.nextBytes(salt);
      try {
        store.upsert(e.name(), e.algorithm().credential(e.password(), salt, e.iterations())).get(1, TimeUnit.MINUTES);
      } catch (ExecutionException | TimeoutException ex) {
        throw new IllegalStateException("cannot create the bootstrap SCRAM user " + e.name() + ": " + ex, ex);
      } catch (InterruptedException ex) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while creating the bootstrap SCRAM user " + e.name(), ex);
      }
    }
  }
}
