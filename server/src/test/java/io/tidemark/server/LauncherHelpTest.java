package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: {@code bin/tidemark} of the source tree explains every subcommand with {@code --help}
 * (exit 0), refuses unknown ones (exit 2), and never builds or calls Maven to do so.
 * {@code DistArchiveTest} checks the same launcher inside the release archive, and {@code --version}.
 */
class LauncherHelpTest {

  /** Every subcommand the launcher takes; start and config-docs are Main's, the rest the script's own. */
  static final List<String> COMMANDS = List.of("start", "config-docs", "aot-cache", "version", "java", "build", "test", "dist",
      "help");

  @TempDir Path scratch;
  private Launcher launcher;

  @BeforeEach
  void setUp() {
    launcher = new Launcher(Launcher.sourceTree(), scratch);
  }

  @Test
  void everySubcommandPrintsItsHelpAndExitsZero() throws Exception {
    for (String command : COMMANDS) {
      for (String[] args : List.of(new String[] {command, "--help"}, new String[] {command, "-h"}, new String[] {"help", command})) {
        Launcher.Result r = launcher.run(scratch, 60, args);
        String what = "bin/tidemark " + String.join(" ", args) + "\n" + r.describe();
        assertThat(r.code()).as(what).isZero();
        assertThat(r.out()).as(what).startsWith("usage:").contains(command.equals("help") ? "COMMAND" : command);
        assertThat(r.err()).as(what).doesNotContain(Launcher.MAVEN_CALLED).doesNotContain("building");
        if (Main.COMMANDS.contains(command)) {
          assertThat(r.out()).as("the launcher prints Main's own help page: " + what).isEqualTo(Main.help(command));
        }
      }
    }
  }

  @Test
  void topLevelHelpListsEveryCommand() throws Exception {
    for (String flag : List.of("--help", "-h", "help")) {
      Launcher.Result r = launcher.run(scratch, 60, flag);
      assertThat(r.code()).as(r.describe()).isZero();
      for (String command : COMMANDS) {
        assertThat(r.out()).as(r.describe()).containsPattern("(?m)^  " + command + " ");
      }
    }
  }

  @Test
  void unknownCommandsAndArgumentsExitTwo() throws Exception {
    for (String[] args : List.of(new String[] {"serve"}, new String[] {"help", "serve"}, new String[] {"dist", "--bogus"})) {
      Launcher.Result r = launcher.run(scratch, 60, args);
      assertThat(r.code()).as(r.describe()).isEqualTo(2);
      assertThat(r.err()).as(r.describe()).contains("usage:").doesNotContain(Launcher.MAVEN_CALLED);
    }
  }
}
