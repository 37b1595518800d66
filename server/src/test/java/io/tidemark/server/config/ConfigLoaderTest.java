package io.tidemark.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.stream.config.ConfigKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {

  private final ConfigLoader loader = new ConfigLoader(ConfigCatalog.standard());

  @Test
  void laterSourcesWinFileThenEnvironmentThenCommandLine(@TempDir Path dir) throws Exception {
    // Goal: file < environment < command line, and TIDEMARK_FOO_BAR maps to foo.bar.
    Path file = dir.resolve("t.properties");
    Files.writeString(file, "node.id=1\nadmin.port=1000\ndata.dir=/from/file\n");
    ConfigLoader.Loaded loaded = loader.load(Optional.of(file), List.of("admin.port=3000"),
        Map.of("TIDEMARK_ADMIN_PORT", "2000", "TIDEMARK_NODE_ID", "7", "PATH", "/bin"));
    ServerConfig config = ServerConfig.from(loaded.settings());
    assertThat(config.adminPort()).isEqualTo(3000);
    assertThat(config.nodeId()).isEqualTo(7);
    assertThat(config.dataDir()).isEqualTo(Path.of("/from/file"));
    assertThat(loaded.origins()).containsEntry("node.id", "environment TIDEMARK_NODE_ID");
    assertThat(loaded.warnings()).isEmpty();
  }

  @Test
  void unknownKeyWarnsWithTheClosestKnownKey() {
    // Goal: a typo is not fatal but the warning names the key the user probably meant.
    ConfigLoader.Loaded loaded = loader.load(Optional.empty(), List.of("admin.prot=1", "completely.unrelated.thing=x"), Map.of());
    assertThat(loaded.warnings()).hasSize(2);
    assertThat(loaded.warnings()).anySatisfy(w -> assertThat(w).contains("admin.prot").contains("did you mean admin.port?"));
    assertThat(loaded.warnings()).anySatisfy(w -> assertThat(w).contains("completely.unrelated.thing").doesNotContain("did you mean"));
  }

  @Test
  void launcherVariablesAreNotSettings() {
    // Goal: TIDEMARK_HOME and TIDEMARK_JAVA_OPTS (read by bin/tidemark) produce no warning.
    ConfigLoader.Loaded loaded = loader.load(Optional.empty(), List.of(),
        Map.of("TIDEMARK_HOME", "/opt/tidemark", "TIDEMARK_JAVA_OPTS", "-Xmx1g"));
    assertThat(loaded.warnings()).isEmpty();
    assertThat(loaded.settings().asMap()).isEmpty();
  }

  @Test
  void everyInvalidValueIsReportedNamingItsKeyAndSource() {
    // Goal: bad values fail before anything starts, and the error names each key, value and origin.
    assertThatThrownBy(() -> loader.load(Optional.empty(), List.of("admin.port=70000", "node.id=abc"),
        Map.of("TIDEMARK_PROCESS_ROLES", "broker,zookeeper")))
        .isInstanceOfSatisfying(InvalidConfigurationException.class, e -> {
          assertThat(e.keys()).containsExactlyInAnyOrder("admin.port", "node.id", "process.roles");
          assertThat(e.getMessage())
              .contains("admin.port").contains("70000").contains("between 0 and 65535")
              .contains("node.id").contains("'abc'")
              .contains("zookeeper").contains("environment TIDEMARK_PROCESS_ROLES");
        });
  }

  @Test
  void missingConfigFileIsAClearError(@TempDir Path dir) {
    // Goal: --config pointing nowhere names the file.
    Path missing = dir.resolve("nope.properties");
    assertThatThrownBy(() -> loader.load(Optional.of(missing), List.of(), Map.of()))
        .isInstanceOf(InvalidConfigurationException.class)
        .hasMessageContaining(missing.toString());
  }

  @Test
  void malformedOverrideIsRejected() {
    // Goal: an override without '=' is an error, not silently ignored.
    assertThatThrownBy(() -> loader.load(Optional.empty(), List.of("admin.port"), Map.of()))
        .isInstanceOf(InvalidConfigurationException.class)
        .hasMessageContaining("key=value");
  }

  @Test
  void catalogRejectsAKeyDeclaredTwice() {
    // Goal: two modules cannot declare the same setting name with different declarations.
    ConfigKey<Integer> a = ConfigKey.integer("x.y", 1, "a");
    ConfigKey<Integer> b = ConfigKey.integer("x.y", 2, "b");
    assertThatThrownBy(() -> new ConfigCatalog(List.of(new ConfigCatalog.Section("A", "", List.of(a)),
        new ConfigCatalog.Section("B", "", List.of(b))), List.of()))
        .hasMessageContaining("x.y");
  }

  @Test
  void editDistanceCountsInsertionsDeletionsAndSubstitutions() {
    // Goal: the typo hint rests on a correct Levenshtein distance.
    assertThat(ConfigCatalog.editDistance("admin.port", "admin.port")).isZero();
    assertThat(ConfigCatalog.editDistance("admin.prot", "admin.port")).isEqualTo(2);
    assertThat(ConfigCatalog.editDistance("kitten", "sitting")).isEqualTo(3);
    assertThat(ConfigCatalog.editDistance("", "abc")).isEqualTo(3);
  }
}
