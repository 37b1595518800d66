package io.tidemark.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ConfigDocsTest {

  @Test
  void committedConfigurationReferenceIsCurrent() throws Exception {
    // Goal: docs/configuration.md equals what the declarations generate; regenerate it when this fails.
    Path committed = Path.of("..", "docs", "configuration.md");
    String expected = ConfigDocs.render(ConfigCatalog.standard());
    assertThat(committed).as("docs/configuration.md exists").exists();
    assertThat(Files.readString(committed, StandardCharsets.UTF_8))
        .as("docs/configuration.md is stale; regenerate with: " + ConfigDocs.REGENERATE_COMMAND)
        .isEqualTo(expected);
  }

  @Test
  void committedExamplePropertiesAreCurrentAndLoadWithoutWarnings() throws Exception {
    // Goal: config/tidemark.properties equals what the declarations generate, and it (like s3.properties and the
    // three-node cluster files) loads cleanly.
    Path committed = Path.of("..", "config", "tidemark.properties");
    assertThat(Files.readString(committed, StandardCharsets.UTF_8))
        .as("config/tidemark.properties is stale; regenerate with: " + ConfigDocs.REGENERATE_COMMAND)
        .isEqualTo(ConfigDocs.renderProperties(ConfigCatalog.standard()));
    ConfigLoader loader = new ConfigLoader(ConfigCatalog.standard());
    for (String name : new String[] {"tidemark.properties", "s3.properties", "cluster/node-1.properties",
        "cluster/node-2.properties", "cluster/node-3.properties", "cluster-one-controller/node-1.properties",
        "cluster-one-controller/node-2.properties", "cluster-one-controller/node-3.properties",
        "secured/node.properties", "secured-cluster/node-1.properties", "secured-cluster/node-2.properties",
        "secured-cluster/node-3.properties"}) {
      ConfigLoader.Loaded loaded = loader.load(java.util.Optional.of(Path.of("..", "config", name)), java.util.List.of(),
          java.util.Map.of());
      assertThat(loaded.warnings()).as(name).isEmpty();
    }
  }

  @Test
  void uncommentingEveryDefaultGivesAValidConfiguration() {
    // Goal: every declared default passes its own validation (a default the loader would reject is a bug).
    String uncommented = ConfigDocs.renderProperties(ConfigCatalog.standard()).lines()
        .filter(l -> l.matches("#[a-z0-9.]+=.*")).map(l -> l.substring(1)).reduce("", (a, b) -> a + b + "\n");
    java.util.List<String> overrides = uncommented.lines().filter(l -> !l.endsWith("=")).toList();
    assertThat(overrides).hasSizeGreaterThan(10);
    ConfigLoader.Loaded loaded = new ConfigLoader(ConfigCatalog.standard()).load(java.util.Optional.empty(), overrides,
        java.util.Map.of());
    assertThat(loaded.warnings()).isEmpty();
  }

  @Test
  void everyDeclaredKeyAppearsWithItsVariableAndDefault() {
    // Goal: the page documents each key, its environment variable and its default (secrets hidden).
    String page = ConfigDocs.render(ConfigCatalog.standard());
    for (String name : ConfigCatalog.standard().names()) {
      assertThat(page).contains("`" + name + "`").contains("`" + ConfigDocs.variableOf(name) + "`");
    }
    assertThat(page).contains("| `admin.port` | int | `9644` |");
  }
}
