package io.tidemark.server.config;

import io.tidemark.stream.config.ConfigKey;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Every setting any Tidemark module declares, in one place: the server validates configuration
 * against it at start-up and generates {@code docs/configuration.md} from it. A module adds its
 * {@code KEYS} list here as one {@link Section}; nothing else needs to change.
 *
 * <p>Immutable and thread-safe. Key names are unique across sections (checked on construction).
 */
public final class ConfigCatalog {

  /** One component's settings, in declaration order. */
  public record Section(String title, String description, List<ConfigKey<?>> keys) {}

  private final List<Section> sections;
  private final List<String> passThroughPrefixes;
  private final Map<String, ConfigKey<?>> byName = new LinkedHashMap<>();

  public ConfigCatalog(List<Section> sections, List<String> passThroughPrefixes) {
    this.sections = List.copyOf(sections);
    this.passThroughPrefixes = List.copyOf(passThroughPrefixes);
    for (Section section : sections) {
      for (ConfigKey<?> key : section.keys()) {
        ConfigKey<?> previous = byName.putIfAbsent(key.name(), key);
        if (previous != null && previous != key) {
          throw new IllegalStateException("setting " + key.name() + " is declared twice (second time in " + section.title() + ")");
        }
      }
    }
  }

  /** The catalog of this build: every module's declared keys. */
  public static ConfigCatalog standard() {
    List<Section> sections = new ArrayList<>();
    sections.add(new Section("Server", "The process: node identity, data directory, roles, admin/metrics HTTP.",
        ServerConfig.KEYS));
    // Further modules add their sections here as they land (see ModuleKeys).
    sections.addAll(ModuleKeys.sections());
    return new ConfigCatalog(sections, ModuleKeys.passThroughPrefixes());
  }

  public List<Section> sections() {
    return sections;
  }

  public Optional<ConfigKey<?>> key(String name) {
    return Optional.ofNullable(byName.get(name));
  }

  /** All declared key names, in section order. */
  public List<String> names() {
    return List.copyOf(byName.keySet());
  }

  /** True when {@code name} is declared or falls under a pass-through prefix (handed to a library as is). */
  public boolean isKnown(String name) {
    if (byName.containsKey(name)) {
      return true;
    }
    for (String prefix : passThroughPrefixes) {
      if (name.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }

  /** The declared key closest to {@code name} by edit distance, if it is close enough to be a likely typo. */
  public Optional<String> closest(String name) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String candidate : byName.keySet()) {
      int d = editDistance(name, candidate);
      if (d < bestDistance) {
        best = candidate;
        bestDistance = d;
      }
    }
    int tolerance = Math.max(2, name.length() / 4);
    return best != null && bestDistance <= tolerance ? Optional.of(best) : Optional.empty();
  }

  static int editDistance(String a, String b) {
    int[] previous = new int[b.length() + 1];
    int[] current = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      previous[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      current[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        current[j] = Math.min(Math.min(current[j - 1] + 1, previous[j] + 1), previous[j - 1] + cost);
      }
      int[] swap = previous;
      previous = current;
      current = swap;
    }
    return previous[b.length()];
  }
}
