package io.tidemark.registry.compatibility;

import io.tidemark.registry.schema.ParsedSchema;
import java.util.ArrayList;
import java.util.List;

/** Applies a {@link CompatibilityLevel} to a candidate schema and the live earlier versions. Stateless. */
public final class CompatibilityChecker {

  private CompatibilityChecker() {}

  /**
   * Why {@code candidate} may not follow {@code previous} (oldest first) under {@code level}; empty when it may.
   * Schemas of another type than the candidate's are always incompatible.
   */
  public static List<String> check(CompatibilityLevel level, ParsedSchema candidate, List<ParsedSchema> previous) {
    if (level == CompatibilityLevel.NONE || previous.isEmpty()) {
      return List.of();
    }
    List<ParsedSchema> against = level.transitive() ? previous : List.of(previous.get(previous.size() - 1));
    List<String> messages = new ArrayList<>();
    for (int i = against.size() - 1; i >= 0; i--) {
      ParsedSchema old = against.get(i);
      if (old.type() != candidate.type()) {
        messages.add("Incompatible because of different schema type: " + old.type() + " to " + candidate.type());
        continue;
      }
      if (level.backward()) {
        for (String m : candidate.readerIncompatibilities(old)) {
          messages.add("BACKWARD: " + m);
        }
      }
      if (level.forward()) {
        for (String m : old.readerIncompatibilities(candidate)) {
          messages.add("FORWARD: " + m);
        }
      }
    }
    if (!messages.isEmpty()) {
      messages.add("{compatibility: '" + level + "'}");
    }
    return messages;
  }
}
