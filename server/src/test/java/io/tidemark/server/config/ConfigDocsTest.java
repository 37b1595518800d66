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
  void everyDeclaredKeyAppearsWithItsVariableAndDefault() {
    // Goal: the page documents each key, its environment variable and its default (secrets hidden).
    String page = ConfigDocs.render(ConfigCatalog.standard());
    for (String name : ConfigCatalog.standard().names()) {
      assertThat(page).contains("`" + name + "`").contains("`" + ConfigDocs.variableOf(name) + "`");
    }
    assertThat(page).contains("| `admin.port` | int | `9644` |");
  }
}
