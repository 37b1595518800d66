package io.tidemark.registry;

import java.util.List;

/** The answer of a compatibility check; {@code messages} are filled when the caller asked for verbose output. */
public record CompatibilityResult(boolean compatible, List<String> messages) {
  public CompatibilityResult {
    messages = List.copyOf(messages);
  }
}
