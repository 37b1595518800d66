package io.tidemark.stream.config;

import java.util.Objects;
import java.util.function.Function;

/**
 * One declared setting: its name (units last, e.g. {@code wal.capacity.bytes}), type, default,
 * validation and documentation. Each component declares its keys once, as constants, and lists
 * them in a {@code public static List<ConfigKey<?>> KEYS}; the server gathers every list to
 * validate configuration at start-up and to generate {@code docs/configuration.md}.
 *
 * @param <T> the parsed value type
 */
public final class ConfigKey<T> {

  /** Checks a parsed value; returns null when valid, or the reason it is not. */
  @FunctionalInterface
  public interface Validator<T> {
    String check(T value);
  }

  private final String name;
  private final String type;
  private final T defaultValue;
  private final Function<String, T> parser;
  private final Validator<T> validator;
  private final String doc;

  private ConfigKey(String name, String type, T defaultValue, Function<String, T> parser, Validator<T> validator, String doc) {
    this.name = Objects.requireNonNull(name);
    this.type = type;
    this.defaultValue = defaultValue;
    this.parser = parser;
    this.validator = validator;
    this.doc = doc;
  }

  public static ConfigKey<String> string(String name, String defaultValue, String doc) {
    return new ConfigKey<>(name, "string", defaultValue, s -> s, v -> null, doc);
  }

  /** A secret string: never printed in logs or the docs' default column. */
  public static ConfigKey<String> password(String name, String defaultValue, String doc) {
    return new ConfigKey<>(name, "password", defaultValue, s -> s, v -> null, doc);
  }

  public static ConfigKey<Integer> integer(String name, int defaultValue, String doc) {
    return new ConfigKey<>(name, "int", defaultValue, s -> Integer.parseInt(s.trim()), v -> null, doc);
  }

  public static ConfigKey<Long> longKey(String name, long defaultValue, String doc) {
    return new ConfigKey<>(name, "long", defaultValue, s -> Long.parseLong(s.trim().replace("_", "")), v -> null, doc);
  }

  public static ConfigKey<Boolean> bool(String name, boolean defaultValue, String doc) {
    return new ConfigKey<>(name, "boolean", defaultValue, ConfigKey::parseBoolean, v -> null, doc);
  }

  /** One of a fixed set of lower-case words. */
  public static ConfigKey<String> choice(String name, String defaultValue, String doc, String... allowed) {
    java.util.List<String> options = java.util.List.of(allowed);
    return new ConfigKey<>(name, "one of " + options, defaultValue, s -> s.trim().toLowerCase(java.util.Locale.ROOT),
        v -> options.contains(v) ? null : "must be one of " + options, doc);
  }

  /** The same key with an extra check (for example a range). */
  public ConfigKey<T> validate(Validator<T> extra) {
    Validator<T> first = validator;
    return new ConfigKey<>(name, type, defaultValue, parser, v -> {
      String reason = first.check(v);
      return reason != null ? reason : extra.check(v);
    }, doc);
  }

  /** The same key restricted to {@code [min, max]}. */
  public static <N extends Number & Comparable<N>> Validator<N> between(N min, N max) {
    return v -> v.compareTo(min) < 0 || v.compareTo(max) > 0 ? "must be between " + min + " and " + max : null;
  }

  /** Parses and validates {@code raw}; throws {@link ConfigException} naming this key. */
  public T parse(String raw) {
    T value;
    try {
      value = parser.apply(raw);
    } catch (RuntimeException e) {
      throw new ConfigException(name, raw, "is not a valid " + type);
    }
    String reason = validator.check(value);
    if (reason != null) {
      throw new ConfigException(name, raw, reason);
    }
    return value;
  }

  public String name() {
    return name;
  }

  public String type() {
    return type;
  }

  public T defaultValue() {
    return defaultValue;
  }

  public String doc() {
    return doc;
  }

  public boolean secret() {
    return "password".equals(type);
  }

  private static Boolean parseBoolean(String s) {
    String v = s.trim().toLowerCase(java.util.Locale.ROOT);
    if (v.equals("true") || v.equals("false")) {
      return Boolean.valueOf(v);
    }
    throw new IllegalArgumentException(s);
  }

  @Override
  public String toString() {
    return name;
  }
}
