package io.tidemark.registry.compatibility;

import java.util.Locale;

/**
 * Which earlier versions a new schema is checked against and in which direction. BACKWARD: the new
 * schema reads data written with the previous one; FORWARD: the previous one reads data written with
 * the new one; FULL: both. The *_TRANSITIVE levels check every earlier live version, the others the
 * latest only.
 */
public enum CompatibilityLevel {
  NONE(false, false, false),
  BACKWARD(true, false, false),
  BACKWARD_TRANSITIVE(true, false, true),
  FORWARD(false, true, false),
  FORWARD_TRANSITIVE(false, true, true),
  FULL(true, true, false),
  FULL_TRANSITIVE(true, true, true);

  private final boolean backward;
  private final boolean forward;
  private final boolean transitive;

  CompatibilityLevel(boolean backward, boolean forward, boolean transitive) {
    this.backward = backward;
    this.forward = forward;
    this.transitive = transitive;
  }

  public boolean backward() {
    return backward;
  }

  public boolean forward() {
    return forward;
  }

  public boolean transitive() {
    return transitive;
  }

  /** The level with this name (any case), or null when there is none. */
  public static CompatibilityLevel parse(String name) {
    if (name == null) {
      return null;
    }
    try {
      return valueOf(name.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      return null;
    }
  }
}
