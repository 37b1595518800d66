package io.tidemark.broker.security;

import io.tidemark.stream.config.ConfigException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the {@code user_<name>="<password>"} options of a Kafka JAAS line
 * ({@code org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="secret";}),
 * and its {@code username}/{@code password} options (the broker's own identity). Values are
 * double-quoted; {@code \"} and {@code \\} escape inside them.
 */
final class JaasUsers {

  private static final Pattern OPTION = Pattern.compile("([A-Za-z0-9_.\\-@]+)\\s*=\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");

  private JaasUsers() {}

  static Map<String, String> options(String jaas, String key) {
    Map<String, String> out = new LinkedHashMap<>();
    if (jaas == null || jaas.isBlank()) {
      return out;
    }
    Matcher m = OPTION.matcher(jaas);
    int matched = 0;
    while (m.find()) {
      out.put(m.group(1), m.group(2).replaceAll("\\\\(.)", "$1"));
      matched++;
    }
    if (matched == 0) {
      throw new ConfigException(key, "[hidden]", "holds no name=\"value\" option");
    }
    return out;
  }

  /** The {@code user_<name>} options as name → password. */
  static Map<String, String> users(String jaas, String key) {
    Map<String, String> out = new LinkedHashMap<>();
    options(jaas, key).forEach((k, v) -> {
      if (k.startsWith("user_") && k.length() > 5) {
        out.put(k.substring(5), v);
      }
    });
    return out;
  }
}
