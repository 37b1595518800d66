package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.server.config.ConfigCatalog;
import io.tidemark.server.config.ConfigDocs;
import io.tidemark.server.docs.DocCommands;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MainTest {

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(Map<String, String> env, String... args) {
    return Main.run(args, env, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @Test
  void invalidSettingExitsWithOneAndNamesTheKey(@TempDir Path dir) {
    // Goal: the process exits 1 before starting anything, and stderr names the key, its value and its source.
    int code = run(Map.of("TIDEMARK_NODE_ID", "-1"), "start", "--set", "data.dir=" + dir, "--admin.port=99999");
    assertThat(code).isEqualTo(1);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("admin.port").contains("99999").contains("node.id").contains("TIDEMARK_NODE_ID");
  }

  @Test
  void usageErrorsExitWithTwo() {
    // Goal: no command, an unknown command or a dangling option print the usage and exit 2.
    assertThat(run(Map.of())).isEqualTo(2);
    assertThat(run(Map.of(), "serve")).isEqualTo(2);
    assertThat(run(Map.of(), "start", "--config")).isEqualTo(2);
    assertThat(run(Map.of(), "start", "stray")).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("usage: tidemark start");
  }

  @Test
  void configDocsWritesTheReferenceAndTheExampleProperties(@TempDir Path root) throws Exception {
    // Goal: config-docs writes both generated files under --root, identical to the renderers' output.
    assertThat(run(Map.of(), "config-docs", "--root", root.toString())).isZero();
    assertThat(Files.readString(root.resolve(ConfigDocs.REFERENCE_PATH))).isEqualTo(ConfigDocs.render(ConfigCatalog.standard()));
    assertThat(Files.readString(root.resolve(ConfigDocs.PROPERTIES_PATH)))
        .isEqualTo(ConfigDocs.renderProperties(ConfigCatalog.standard()));
  }

  @Test
  void versionIsTheMavenProjectVersion() throws Exception {
    // Goal: --version prints the version the build wrote into the jar, the one the poms declare.
    String pom = Files.readString(DocCommands.repositoryRoot().resolve("pom.xml"));
    Matcher declared = Pattern.compile("<artifactId>tidemark-parent</artifactId>\\s*<version>([^<]+)</version>")
        .matcher(pom);
    assertThat(declared.find()).as("the root pom's version").isTrue();
    assertThat(run(Map.of(), "--version")).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("tidemark " + declared.group(1) + System.lineSeparator());
    assertThat(Main.version()).isEqualTo(declared.group(1));
  }

  @Test
  void everySubcommandHasHelpThatExitsZeroAndRunsNothing(@TempDir Path root) {
    // Goal: COMMAND --help, COMMAND -h and help COMMAND print that command's page and exit 0 without doing its work.
    for (String command : Main.COMMANDS) {
      for (String[] args : List.of(new String[] {command, "--help"}, new String[] {command, "-h"},
          new String[] {"help", command}, new String[] {command, "--root", root.toString(), "--help"})) {
        out.reset();
        assertThat(run(Map.of(), args)).as(String.join(" ", args)).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).as(String.join(" ", args))
            .startsWith("usage: tidemark " + command).contains("--help").isEqualTo(Main.help(command));
      }
    }
    assertThat(root.resolve(ConfigDocs.REFERENCE_PATH)).as("config-docs --help wrote nothing").doesNotExist();
    out.reset();
    assertThat(run(Map.of(), "--help")).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("usage: tidemark start").contains("--version");
    assertThat(run(Map.of(), "help", "serve")).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("unknown command 'serve'");
  }
}
