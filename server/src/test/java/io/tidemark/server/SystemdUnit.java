package io.tidemark.server;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A strict reader of systemd unit files for tests: sections of {@code Key=Value} lines; a line that
 * is neither, a key outside a section, or a repeated section fails with the line number. (Keys that
 * systemd allows to repeat keep their last value; the tests look at single-valued ones.)
 */
final class SystemdUnit {

  private SystemdUnit() {}

  static Map<String, Map<String, String>> parse(String unit) {
    Map<String, Map<String, String>> sections = new LinkedHashMap<>();
    Map<String, String> current = null;
    int number = 0;
    for (String raw : unit.split("\n", -1)) {
      number++;
      String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#") || line.startsWith(";")) {
        continue;
      }
      if (line.startsWith("[") && line.endsWith("]")) {
        String name = line.substring(1, line.length() - 1);
        if (sections.containsKey(name)) {
          throw new IllegalArgumentException("line " + number + ": section [" + name + "] appears twice");
        }
        current = new LinkedHashMap<>();
        sections.put(name, current);
        continue;
      }
      int eq = line.indexOf('=');
      if (eq <= 0 || current == null || line.endsWith("\\")) {
        throw new IllegalArgumentException("line " + number + ": not Key=Value inside a section: " + raw);
      }
      current.put(line.substring(0, eq).strip(), line.substring(eq + 1).strip());
    }
    return sections;
  }
}
