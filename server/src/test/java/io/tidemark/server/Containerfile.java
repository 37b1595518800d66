package io.tidemark.server;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict reader of Containerfiles (Dockerfiles) for tests: instructions with their arguments,
 * continuation lines joined, comments dropped. An unknown instruction fails with its line number, so a
 * typo is caught here rather than by a container engine the test machine does not have.
 */
final class Containerfile {

  private static final List<String> INSTRUCTIONS = List.of("FROM", "ARG", "ADD", "COPY", "RUN", "USER", "WORKDIR",
      "VOLUME", "ENV", "EXPOSE", "HEALTHCHECK", "STOPSIGNAL", "ENTRYPOINT", "CMD", "LABEL", "SHELL", "ONBUILD");

  private Containerfile() {}

  /** Each instruction's arguments, one entry per occurrence, in file order. */
  static Map<String, List<String>> parse(String text) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    StringBuilder pending = new StringBuilder();
    int number = 0;
    int startedAt = 0;
    for (String raw : text.split("\n", -1)) {
      number++;
      String line = raw.strip();
      if (pending.isEmpty() && (line.isEmpty() || line.startsWith("#"))) {
        continue;
      }
      if (pending.isEmpty()) {
        startedAt = number;
      }
      boolean continued = line.endsWith("\\");
      pending.append(continued ? line.substring(0, line.length() - 1) : line).append(' ');
      if (!continued) {
        String instruction = pending.toString().strip();
        pending.setLength(0);
        int space = instruction.indexOf(' ');
        String name = space < 0 ? instruction : instruction.substring(0, space);
        if (!INSTRUCTIONS.contains(name)) {
          throw new IllegalArgumentException("line " + startedAt + ": unknown instruction " + name);
        }
        out.computeIfAbsent(name, k -> new ArrayList<>())
            .add(space < 0 ? "" : instruction.substring(space + 1).strip().replaceAll("\\s+", " "));
      }
    }
    if (!pending.isEmpty()) {
      throw new IllegalArgumentException("the last instruction ends with a continuation");
    }
    return out;
  }
}
