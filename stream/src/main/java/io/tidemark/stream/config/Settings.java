package io.tidemark.stream.config;

import java.util.Map;
import java.util.TreeMap;

/**
 * An immutable view of configuration values (strings by setting name), read through declared
 * {@link ConfigKey}s: a missing key gives the key's default, a bad value throws
 * {@link ConfigException} naming the key.
 */
public final class Settings {

  private final Map<String, String> values;

  public Settings(Map<String, String> values) {
    this.values = Map.copyOf(values);
  }

  public static Settings empty() {
    return new Settings(Map.of());
  }

  public <T> T get(ConfigKey<T> key) {
    String raw = values.get(key.name());
    return raw == null ? key.defaultValue() : key.parse(raw);
  }

  public boolean contains(ConfigKey<?> key) {
    return values.containsKey(key.name());
  }

  /** A copy with {@code key} set to {@code value}. */
  public Settings with(String key, String value) {
    Map<String, String> copy = new TreeMap<>(values);
    copy.put(key, value);
    return new Settings(copy);
  }

  /** Every value whose name starts with {@code prefix}, with the prefix removed (for pass-through properties). */
  public Map<String, String> withPrefix(String prefix) {
    Map<String, String> result = new TreeMap<>();
    values.forEach((k, v) -> {
      if (k.startsWith(prefix)) {
        result.put(k.substring(prefix.length()), v);
      }
    });
    return result;
  }

  public Map<String, String> asMap() {
    return values;
  }
}
