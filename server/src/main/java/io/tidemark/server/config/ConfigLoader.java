package io.tidemark.server.config;

import io.tidemark.stream.config.ConfigException;
import io.tidemark.stream.config.Settings;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;

/**
 * Builds the process configuration from its three sources, later ones winning: a properties file,
 * the environment ({@code TIDEMARK_FOO_BAR} sets {@code foo.bar}), and command-line overrides
 * ({@code key=value}). Then checks it against the {@link ConfigCatalog}: an unknown key is a
 * warning with the closest known key as a hint; a value that does not parse or validate is an
 * error naming the key, and every such error is reported at once.
 *
 * <p>Stateless apart from its catalog; thread-safe.
 */
public final class ConfigLoader {

  /** Environment variables with this prefix are settings. */
  public static final String ENV_PREFIX = "TIDEMARK_";

  /** Variables the launcher itself reads; they are not settings. */
  static final Set<String> LAUNCHER_VARIABLES = Set.of("TIDEMARK_HOME", "TIDEMARK_JAVA_OPTS");

  /** The merged settings, where each value came from, and the warnings to log. */
  public record Loaded(Settings settings, Map<String, String> origins, List<String> warnings) {}

  private final ConfigCatalog catalog;

  public ConfigLoader(ConfigCatalog catalog) {
    this.catalog = catalog;
  }

  /**
   * Merges and validates. Throws {@link InvalidConfigurationException} naming every bad key, or
   * when the file cannot be read; nothing is started in that case.
   */
  public Loaded load(Optional<Path> file, List<String> overrides, Map<String, String> environment) {
    Map<String, String> values = new TreeMap<>();
    Map<String, String> origins = new TreeMap<>();
    List<ConfigException> problems = new ArrayList<>();
    if (file.isPresent()) {
      readFile(file.get()).forEach((k, v) -> {
        values.put(k, v);
        origins.put(k, "file " + file.get());
      });
    }
    environment.forEach((variable, value) -> {
      if (variable.startsWith(ENV_PREFIX) && !LAUNCHER_VARIABLES.contains(variable)) {
        String key = keyOfVariable(variable);
        values.put(key, value);
        origins.put(key, "environment " + variable);
      }
    });
    for (String override : overrides) {
      int eq = override.indexOf('=');
      if (eq <= 0) {
        problems.add(new ConfigException(override, "an override must look like key=value"));
        continue;
      }
      String key = override.substring(0, eq).trim();
      values.put(key, override.substring(eq + 1).trim());
      origins.put(key, "command line");
    }
    Settings settings = new Settings(values);
    List<String> warnings = new ArrayList<>();
    for (Map.Entry<String, String> e : values.entrySet()) {
      String key = e.getKey();
      if (!catalog.isKnown(key)) {
        String hint = catalog.closest(key).map(k -> "; did you mean " + k + "?").orElse("");
        warnings.add("unknown setting " + key + " (from " + origins.get(key) + ") is ignored" + hint);
        continue;
      }
      catalog.key(key).ifPresent(declared -> {
        try {
          declared.parse(e.getValue());
        } catch (ConfigException bad) {
          problems.add(new ConfigException(key, e.getValue(), reasonOf(bad) + " (from " + origins.get(key) + ")"));
        }
      });
    }
    if (!problems.isEmpty()) {
      throw new InvalidConfigurationException(problems);
    }
    return new Loaded(settings, origins, warnings);
  }

  /** {@code TIDEMARK_WAL_CAPACITY_BYTES} → {@code wal.capacity.bytes}. */
  public static String keyOfVariable(String variable) {
    return variable.substring(ENV_PREFIX.length()).toLowerCase(Locale.ROOT).replace('_', '.');
  }

  private static Map<String, String> readFile(Path file) {
    Properties properties = new Properties();
    try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      properties.load(reader);
    } catch (NoSuchFileException e) {
      throw new InvalidConfigurationException(List.of(new ConfigException("--config", "file " + file + " does not exist")));
    } catch (IOException | IllegalArgumentException e) {
      throw new InvalidConfigurationException(
          List.of(new ConfigException("--config", "cannot read " + file + ": " + e.getMessage())));
    }
    Map<String, String> result = new TreeMap<>();
    properties.stringPropertyNames().forEach(name -> result.put(name.trim(), properties.getProperty(name).trim()));
    return result;
  }

  private static String reasonOf(ConfigException e) {
    String message = e.getMessage();
    int colon = message.indexOf(": ");
    return colon >= 0 ? message.substring(colon + 2) : message;
  }
}
