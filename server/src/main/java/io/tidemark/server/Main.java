package io.tidemark.server;

import io.tidemark.server.config.ConfigCatalog;
import io.tidemark.server.config.ConfigDocs;
import io.tidemark.server.config.ConfigLoader;
import io.tidemark.server.config.InvalidConfigurationException;
import io.tidemark.server.config.ServerConfig;
import io.tidemark.server.storage.EmbeddedStorage;
import io.tidemark.server.storage.StorageFactory;
import io.tidemark.stream.config.ConfigException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The command line of the {@code tidemark} process.
 *
 * <pre>
 *   start [--config FILE] [--set key=value ...] [--key=value ...]   run a node until SIGTERM
 *   config-docs [--root DIR]      write docs/configuration.md and config/tidemark.properties under DIR (default .)
 *   version | --version           print the version this jar was built from
 *   help [COMMAND] | COMMAND --help
 * </pre>
 *
 * Each subcommand's help is a text resource ({@code help/COMMAND.txt}); {@code bin/tidemark} prints
 * the same file from the source tree when the jar is not built yet, so help never needs a build.
 * The version is the Maven project version, written into {@code version.properties} when the jar is
 * built (resource filtering in server/pom.xml).
 *
 * <p>Exit codes: 0 done, 1 the node could not start (the message names the setting at fault), 2 usage.
 */
public final class Main {

  private static final Logger LOG = LoggerFactory.getLogger(Main.class);

  static final String USAGE = """
      usage: tidemark start [--config FILE] [--set key=value ...] [--key=value ...]
             tidemark config-docs [--root DIR]   (writes DIR/docs/configuration.md and DIR/config/tidemark.properties)
             tidemark --version
             tidemark COMMAND --help
      Settings: docs/configuration.md. Environment: TIDEMARK_FOO_BAR sets foo.bar.""";

  /** The subcommands that have a help page ({@code help/NAME.txt}). */
  static final List<String> COMMANDS = List.of("start", "config-docs");

  private Main() {}

  public static void main(String[] args) {
    int code = run(args, System.getenv(), System.out, System.err);
    if (code != 0) {
      System.exit(code);
    }
  }

  /** Runs a subcommand; {@code start} blocks until the JVM is asked to stop. */
  static int run(String[] args, Map<String, String> environment, PrintStream out, PrintStream err) {
    if (args.length == 0) {
      err.println(USAGE);
      return 2;
    }
    List<String> rest = List.of(args).subList(1, args.length);
    if (COMMANDS.contains(args[0]) && (rest.contains("--help") || rest.contains("-h"))) {
      out.print(help(args[0]));
      return 0;
    }
    try {
      switch (args[0]) {
        case "start" -> {
          TidemarkServer server = start(rest, environment, new EmbeddedStorage());
          awaitShutdown(server, () -> start(rest, environment, new EmbeddedStorage()));
          return 0;
        }
        case "config-docs" -> {
          return writeDocs(rest, out);
        }
        case "help", "--help", "-h" -> {
          return printHelp(rest, out, err);
        }
        case "version", "--version", "-V" -> {
          out.println("tidemark " + version());
          return 0;
        }
        default -> {
          err.println("tidemark: unknown command '" + args[0] + "'\n" + USAGE);
          return 2;
        }
      }
    } catch (UsageException e) {
      err.println("tidemark: " + e.getMessage() + "\n" + USAGE);
      return 2;
    } catch (InvalidConfigurationException e) {
      err.println("tidemark: " + e.getMessage());
      return 1;
    } catch (ConfigException e) {
      // A setting that is valid alone but unusable here (a wrong bucket, endpoint, credentials, sizes that conflict).
      LOG.error("tidemark could not start: {}", e.getMessage());
      err.println("tidemark: could not start: " + e.getMessage());
      return 1;
    } catch (RuntimeException e) {
      LOG.error("tidemark could not start: {}", e.getMessage(), e);
      err.println("tidemark: could not start: " + e.getMessage());
      return 1;
    }
  }

  private static int printHelp(List<String> rest, PrintStream out, PrintStream err) {
    if (rest.isEmpty() || rest.getFirst().equals("--help") || rest.getFirst().equals("-h")) {
      out.println(USAGE);
      return 0;
    }
    if (!COMMANDS.contains(rest.getFirst())) {
      err.println("tidemark: no help for unknown command '" + rest.getFirst() + "'\n" + USAGE);
      return 2;
    }
    out.print(help(rest.getFirst()));
    return 0;
  }

  /** The help page of a subcommand, from the jar. */
  static String help(String command) {
    return resource("help/" + command + ".txt");
  }

  /** The Maven project version this jar was built from. */
  public static String version() {
    Properties properties = new Properties();
    try {
      properties.load(new StringReader(resource("version.properties")));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String version = properties.getProperty("version", "");
    if (version.isBlank() || version.contains("${")) {
      throw new IllegalStateException("version.properties was not filtered by the build (version '" + version
          + "'); build the jar with Maven (bin/tidemark build)");
    }
    return version;
  }

  private static String resource(String name) {
    try (InputStream in = Main.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("resource " + name + " is missing from the jar; rebuild it (bin/tidemark build)");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read resource " + name, e);
    }
  }

  /**
   * Parses {@code start}'s arguments, loads and validates the configuration, and starts a node.
   * Throws {@link InvalidConfigurationException} naming every bad setting before anything starts.
   */
  public static TidemarkServer start(List<String> args, Map<String, String> environment, StorageFactory storage) {
    Optional<Path> configFile = Optional.empty();
    List<String> overrides = new ArrayList<>();
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      if (arg.equals("--config") || arg.equals("--set")) {
        if (i + 1 >= args.size()) {
          throw new UsageException(arg + " needs a value");
        }
        String value = args.get(++i);
        if (arg.equals("--config")) {
          configFile = Optional.of(Path.of(value));
        } else {
          overrides.add(value);
        }
      } else if (arg.startsWith("--config=")) {
        configFile = Optional.of(Path.of(arg.substring("--config=".length())));
      } else if (arg.startsWith("--") && arg.contains("=")) {
        overrides.add(arg.substring(2));
      } else {
        throw new UsageException("unexpected argument '" + arg + "'");
      }
    }
    ConfigLoader.Loaded loaded = new ConfigLoader(ConfigCatalog.standard()).load(configFile, overrides, environment);
    loaded.warnings().forEach(LOG::warn);
    ServerConfig config = ServerConfig.from(loaded.settings());
    return TidemarkServer.start(config, loaded.settings(), storage);
  }

  /**
   * Blocks until SIGTERM/SIGINT, supervising the node ({@link NodeSupervisor}: a node whose epoch failed
   * over while the process lives rejoins in-process); the hook stops the node gracefully within
   * shutdown.timeout.ms.
   */
  private static void awaitShutdown(TidemarkServer server, java.util.function.Supplier<TidemarkServer> starter) {
    NodeSupervisor supervisor = new NodeSupervisor(server, starter);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      Thread closer = new Thread(supervisor::stop, "shutdown");
      closer.start();
      try {
        closer.join(Math.max(1, server.config().shutdownTimeoutMs()));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (closer.isAlive()) {
        LOG.warn("graceful shutdown did not finish within {} ms (shutdown.timeout.ms); exiting anyway; "
            + "the WAL still holds every acknowledged record and is replayed on the next start",
            server.config().shutdownTimeoutMs());
      }
    }, "shutdown-hook"));
    supervisor.run();
  }

  private static int writeDocs(List<String> args, PrintStream out) {
    Path root = Path.of(".");
    for (int i = 0; i < args.size(); i++) {
      if (args.get(i).equals("--root") && i + 1 < args.size()) {
        root = Path.of(args.get(++i));
      } else {
        throw new UsageException("unexpected argument '" + args.get(i) + "'");
      }
    }
    ConfigCatalog catalog = ConfigCatalog.standard();
    write(root.resolve(ConfigDocs.REFERENCE_PATH), ConfigDocs.render(catalog), out);
    write(root.resolve(ConfigDocs.PROPERTIES_PATH), ConfigDocs.renderProperties(catalog), out);
    return 0;
  }

  private static void write(Path file, String content, PrintStream out) {
    try {
      if (file.getParent() != null) {
        Files.createDirectories(file.getParent());
      }
      Files.writeString(file, content, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOExceptionWithPath(file, e);
    }
    out.println("wrote " + file);
  }

  /** The command line is malformed. */
  static final class UsageException extends RuntimeException {
    UsageException(String message) {
      super(message);
    }
  }

  private static final class UncheckedIOExceptionWithPath extends RuntimeException {
    UncheckedIOExceptionWithPath(Path path, IOException cause) {
      super("cannot write " + path + ": " + cause.getMessage(), cause);
    }
  }
}
