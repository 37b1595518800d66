package io.tidemark.server.config;

import java.util.List;

/**
 * The other modules' declared settings, one section per component, in the order of the data path.
 * Kept apart from {@link ConfigCatalog} so that wiring in a newly landed module is one line here.
 */
final class ModuleKeys {

  private ModuleKeys() {}

  static List<ConfigCatalog.Section> sections() {
    return List.of();
  }

  /** Prefixes whose keys are handed to a library unchanged and therefore not validated one by one. */
  static List<String> passThroughPrefixes() {
    return List.of();
  }
}
