package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.server.docs.DocCommands;
import io.tidemark.server.docs.DocCommands.Command;
import io.tidemark.server.storage.EmbeddedStorage;
import io.tidemark.table.warehouse.LocalFileIO;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.internals.Exit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: every shell command printed in README.md and docs/*.md (fenced blocks of no language or
 * bash/sh/shell, see {@link DocCommands}) works as printed with the stock tool it names, against
 * one node of this suite: Kafka's CLI tools from kafka-tools (in-process through their main
 * classes), curl and kcat (the installed binaries). The documented ports are replaced by the node's
 * ephemeral ones and nothing else is changed. A command that cannot run in the suite is on
 * {@link #EXCEPTIONS} with the reason (and an exception that matches no command fails the test, so
 * the list stays true). A failing command fails the test naming its page, line and output; a
 * command of a tool this test does not know fails it too (tag a block that is not a command with
 * its language, e.g. {@code ```properties}).
 *
 * <p>Pages run in order, each page's commands in order (they build on each other); the topics a page
 * made are deleted before the next. The README's table-topic example is followed to its end: the
 * produced row is read back from the table through the REST catalog.
 */
class DocumentedCommandsTest {

  /** A command this test does not run: the page, how the command starts, and why. */
  record Excepted(String page, String prefix, String reason) {
    boolean matches(Command c) {
      return c.file().getFileName().toString().equals(page) && c.text().startsWith(prefix);
    }
  }

  private static final String BIN_START = "starts a node on the default ports (9092, 8081, 8181, 9644, 9093), which"
      + " tests must not bind; this test's node runs the same Main.start in-process on ephemeral ports";
  private static final String BENCH = "a benchmark of minutes, run by hand; its results and the command are in"
      + " docs/benchmarks.md";
  private static final String SPARK = "Spark is not part of the suite; IcebergStandardReaderTest reads the table with"
      + " this command's catalog settings (spark.sql.catalog.tidemark.*) from a JVM holding only Iceberg's jars";
  private static final String ARCHIVE = "runs in the unpacked release archive: DistArchiveTest follows this page's"
      + " dist, tar and cd commands and runs its bin/tidemark commands there (the start on ephemeral ports)";
  private static final String MOVES = "moves a partition to another broker, which needs a cluster; PartitionMoveTest"
      + " runs kafka-reassign-partitions --execute and --verify against three nodes, and ElectLeaders through Admin";
  private static final String SECURED = "talks to the secured node of config/secured/ (SASL_SSL only, a key store made"
      + " with keytool), not to this test's plaintext node; SecuredNodeTest runs the same flow: a node with only a SASL_SSL"
      + " listener and a bootstrap SCRAM user, kafka-configs adding a SCRAM-SHA-512 user, produce and consume as that user"
      + " across a restart, kcat over SASL_SSL with the PEM certificate";
  private static final String KUBERNETES = "needs a Kubernetes cluster (and a container engine for the image), which the"
      + " build machine does not have; HelmChartTest renders the chart with Helm's own library (lint and template),"
      + " schema-checks every object and runs each pod's start script into the configuration loader";
  private static final String MIRROR_MAKER = "needs an Apache Kafka cluster as the source; MirrorMakerMigrationTest (full"
      + " profile) runs MirrorMaker 2 with this page's mm2.properties from Kafka 4.4 into a Tidemark node and reads the"
      + " migrated group's offsets in Tidemark";
  private static final List<Excepted> EXCEPTIONS = List.of(
      new Excepted("kubernetes.md", "bin/tidemark dist", "builds the release archive for the image (a full Maven package);"
          + " DistArchiveTest runs bin/tidemark dist and starts the archive from an empty directory"),
      new Excepted("kubernetes.md", "podman ", KUBERNETES),
      new Excepted("kubernetes.md", "kubectl ", KUBERNETES),
      new Excepted("kubernetes.md", "helm ", KUBERNETES),
      new Excepted("migration.md", "bin/connect-mirror-maker.sh", MIRROR_MAKER),
      new Excepted("migration.md", "kafka-consumer-groups.sh --bootstrap-server tidemark:9092", MIRROR_MAKER),
      new Excepted("security.md", "mkdir -p secrets", SECURED),
      new Excepted("security.md", "keytool ", SECURED),
      new Excepted("security.md", "bin/tidemark start --config config/secured", BIN_START),
      new Excepted("security.md", "config/secured-cluster/make-certs.sh", "writes the certificates of the secured"
          + " three-node example into ./secrets of the checkout; SecuredClusterTest runs three nodes with the same settings"
          + " and certificates of their own"),
      new Excepted("security.md", "kafka-configs.sh --bootstrap-server localhost:9094", SECURED),
      new Excepted("security.md", "kafka-topics.sh --bootstrap-server localhost:9094", SECURED),
      new Excepted("security.md", "kafka-acls.sh --bootstrap-server localhost:9094", SECURED),
      new Excepted("security.md", "kafka-console-producer.sh --bootstrap-server localhost:9094", SECURED),
      new Excepted("security.md", "kcat -b localhost:9094", SECURED),
      new Excepted("getting-started.md", "bin/tidemark ", ARCHIVE),
      new Excepted("getting-started.md", "tar ", ARCHIVE),
      new Excepted("getting-started.md", "cd ", ARCHIVE),
      new Excepted("getting-started.md", "sudo ", "installs a system service as root on a machine with systemd as"
          + " PID 1; DistArchiveTest checks the unit with systemd-analyze verify"),
      new Excepted("README.md", "bin/tidemark start", BIN_START),
      new Excepted("README.md", "bin/tidemark test", "runs the whole suite this test is part of"),
      new Excepted("README.md", "spark-sql ", SPARK),
      new Excepted("table-topics.md", "spark-sql ", SPARK),
      new Excepted("operations.md", "bin/tidemark start", BIN_START),
      new Excepted("operations.md", "TIDEMARK_DATA_DIR=/var/lib/tidemark bin/tidemark start", BIN_START),
      new Excepted("operations.md", "export TIDEMARK_STORAGE_S3_SECRET_KEY=...", "a placeholder for the operator's"
          + " S3 secret, used by the bin/tidemark start that follows"),
      new Excepted("operations.md", "kafka-reassign-partitions.sh", MOVES),
      new Excepted("operations.md", "kafka-leader-election.sh", MOVES),
      new Excepted("operations.md", "kafka-configs.sh --bootstrap-server localhost:9092 --alter --entity-type brokers --entity-name 0 "
          + "--add-config listener.name.ssl.", "needs an SSL listener and the operator's key store file (this test's node has a "
          + "PLAINTEXT listener only); DynamicRuntimeConfigTest rotates an SSL listener's key store with kafka-configs"),
      new Excepted("authorization.md", "kafka-acls.sh", "needs a node with the authorizer on (this test's node runs"
          + " without one, where Kafka's ACL APIs answer SECURITY_DISABLED); AclCommandTest runs kafka-acls --add, --list"
          + " and --remove against such a node and checks that the ACLs are enforced"),
      new Excepted("benchmarks.md", "bench/", BENCH),
      new Excepted("benchmarks.md", "mvn ", BENCH),
      new Excepted("benchmarks.md", "java ", BENCH));

  /** Settings of documented {@code bin/tidemark start} commands that this test's node takes over (see {@link #documentedStartSettings}). */
  private static final Set<String> NODE_SETTINGS = Set.of("admin.streams.api.enabled");
  private static final Pattern DOC_PORT = Pattern.compile("(localhost|127\\.0\\.0\\.1|broker-host):(9092|8081|8181|9644)\\b");
  private static final Pattern STREAM_ID = Pattern.compile("\"streamId\":(\\d+)");

  @TempDir static Path dataDir;
  @TempDir static Path workDir;
  static TidemarkServer server;
  static Map<String, Integer> ports;
  /** The first tool exit code: some tools exit from a finally block, and again with 1 when that throws. */
  static final AtomicReference<Integer> FIRST_EXIT = new AtomicReference<>();
  /** The shutdown hooks a tool registered (the console producer closes its producer in one): run when it "exits". */
  static final List<Runnable> EXIT_HOOKS = new java.util.concurrent.CopyOnWriteArrayList<>();
  /** The stream id the stream admin API answered last; the pages' {@code /v1/streams/0/} stand for it. */
  static String streamId = "0";

  /** Thrown instead of exiting the JVM. */
  static final class ExitCalled extends RuntimeException {
    ExitCalled(int code) {
      super("exit " + code);
    }
  }

  /** A command's outcome: exit code and everything it printed. */
  record Run(int code, String out) {}

  interface Tool {
    void main(String[] args) throws Exception;
  }

  private static final Map<String, Tool> KAFKA_TOOLS = Map.of(
      "kafka-topics", org.apache.kafka.tools.TopicCommand::main,
      "kafka-configs", org.apache.kafka.tools.ConfigCommand::main,
      "kafka-console-producer", org.apache.kafka.tools.ConsoleProducer::main,
      "kafka-console-consumer", org.apache.kafka.tools.consumer.ConsoleConsumer::main,
      "kafka-consumer-groups", org.apache.kafka.tools.consumer.group.ConsumerGroupCommand::main,
      "kafka-share-groups", org.apache.kafka.tools.consumer.group.ShareGroupCommand::main,
      "kafka-console-share-consumer", org.apache.kafka.tools.consumer.ConsoleShareConsumer::main,
      "kafka-transactions", org.apache.kafka.tools.TransactionsCommand::main);

  @BeforeAll
  static void start() throws Exception {
    List<String> documentedSettings = documentedStartSettings();
    List<String> args = new ArrayList<>(TidemarkServerTest.withPorts("--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (64L << 20)));
    documentedSettings.forEach(setting -> args.addAll(List.of("--set", setting)));
    server = Main.start(args, Map.of(), new EmbeddedStorage());
    ports = Map.of("9092", server.kafkaPort().orElseThrow(), "8081", server.registryPort().orElseThrow(),
        "8181", server.tableRestPort().orElseThrow(), "9644", server.adminPort());
    // the record batch operations.md appends with curl --data-binary @batch.bin
    ByteBuffer batch = MemoryRecords.withRecords(Compression.NONE, new SimpleRecord("hello".getBytes(StandardCharsets.UTF_8)))
        .buffer();
    byte[] bytes = new byte[batch.remaining()];
    batch.get(bytes);
    Files.write(workDir.resolve("batch.bin"), bytes);
    Exit.setExitProcedure((code, message) -> {
      FIRST_EXIT.compareAndSet(null, code);
      throw new ExitCalled(code);
    });
    Exit.setShutdownHookAdder((name, hook) -> EXIT_HOOKS.add(hook));
  }

  @AfterAll
  static void stop() {
    Exit.resetExitProcedure();
    Exit.resetShutdownHookAdder();
    if (server != null) {
      server.close();
    }
  }

  @Test
  void everyDocumentedCommandWorksAsPrinted() throws Exception {
    List<Command> commands = DocCommands.all();
    assertThat(commands).as("commands found in README.md and docs/").hasSizeGreaterThan(10);
    Set<Excepted> used = new LinkedHashSet<>();
    List<String> failures = new ArrayList<>();
    Path page = null;
    for (Command c : commands) {
      if (!c.file().equals(page)) {
        if (page != null) {
          afterPage(page);
        }
        page = c.file();
      }
      Excepted excepted = EXCEPTIONS.stream().filter(e -> e.matches(c)).findFirst().orElse(null);
      if (excepted != null) {
        used.add(excepted);
        System.out.println("[doc check] not run " + c.where() + ": " + c.text() + "\n    because " + excepted.reason());
        continue;
      }
      String failure = runChecked(c);
      if (failure != null) {
        failures.add(failure);
      }
    }
    afterPage(page);
    List<Excepted> stale = EXCEPTIONS.stream().filter(e -> !used.contains(e)).toList();
    assertThat(stale).as("exceptions that match no documented command (remove them)").isEmpty();
    assertThat(failures).as("documented commands that fail").isEmpty();
  }

  @Test
  void kafkaTopicsRefusesTableTopicConfigsBeforeSendingThem() throws Exception {
    // goal: what docs/table-topics.md says about kafka-topics --config table.topic.* stays true
    Run run = kafkaTool("kafka-topics", List.of("--bootstrap-server", "127.0.0.1:" + ports.get("9092"), "--create",
        "--topic", "refused", "--partitions", "1", "--config", "table.topic.enable=true"), null);
    assertThat(run.code()).isEqualTo(1);
    assertThat(run.out()).contains("Unknown topic config name: table.topic.enable");
    try (Admin admin = admin()) {
      assertThat(admin.listTopics().names().get(60, TimeUnit.SECONDS)).doesNotContain("refused");
    }
  }

  /** Runs one command; null when it worked, else why not (page, line, command, output). */
  private static String runChecked(Command c) {
    List<String> words = substitute(shellWords(c));
    String tool = tool(words);
    System.out.println("[doc check] " + c.where() + ": " + String.join(" ", words));
    Run run;
    try {
      run = run(tool, words);
    } catch (Exception e) {
      return c.where() + ": " + c.text() + "\n    could not run: " + e;
    }
    if (run == null) {
      return c.where() + ": " + c.text() + "\n    names a tool this test does not run (" + tool
          + "); run it here, add it to EXCEPTIONS with the reason, or tag the block with its language";
    }
    System.out.println(run.out().indent(4));
    if (run.code() != 0) {
      return c.where() + ": " + c.text() + "\n    exited " + run.code() + ":\n" + run.out().indent(6);
    }
    return null;
  }

  /** The command's words without a trailing {@code &} or comment. */
  private static List<String> shellWords(Command c) {
    List<String> words = new ArrayList<>();
    for (String w : DocCommands.words(c.text())) {
      if (w.startsWith("#")) {
        break;
      }
      words.add(w);
    }
    if (!words.isEmpty() && words.getLast().equals("&")) {
      words.removeLast();
    }
    return words;
  }

  private static List<String> substitute(List<String> words) {
    List<String> out = new ArrayList<>();
    for (String w : words) {
      Matcher m = DOC_PORT.matcher(w);
      String replaced = m.replaceAll(r -> "127.0.0.1:" + ports.get(r.group(2)));
      out.add(replaced.replace("/v1/streams/0/", "/v1/streams/" + streamId + "/"));
    }
    return out;
  }

  private static String tool(List<String> words) {
    String first = words.getFirst();
    String name = first.substring(first.lastIndexOf('/') + 1);
    return name.endsWith(".sh") ? name.substring(0, name.length() - 3) : name;
  }

  /** Runs the command with the tool it names; null for a tool this test does not know. */
  private static Run run(String tool, List<String> words) throws Exception {
    List<String> args = new ArrayList<>(words.subList(1, words.size()));
    String stdin = null;
    int here = args.indexOf("<<<");
    if (here >= 0) {
      stdin = args.get(here + 1) + "\n";
      args = new ArrayList<>(args.subList(0, here));
    }
    if (KAFKA_TOOLS.containsKey(tool)) {
      return kafkaTool(tool, args, stdin);
    }
    return switch (tool) {
      case "curl" -> curl(args);
      case "kcat", "kafkacat" -> {
        String kcat = installedOrNull("kcat");
        if (kcat == null && System.getenv("CI") == null) {
          System.out.println("[doc check] kcat is not installed here (apt-get install kcat; CI has it): not run");
          yield new Run(0, "");
        }
        yield process(kcat == null ? installed("kcat") : kcat, args, stdin);
      }
      default -> null;
    };
  }

  /** A Kafka CLI tool in this JVM through its main class, with {@code stdin} as System.in. */
  private static synchronized Run kafkaTool(String tool, List<String> args, String stdin) throws Exception {
    PrintStream oldOut = System.out;
    PrintStream oldErr = System.err;
    InputStream oldIn = System.in;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream capture = new PrintStream(out, true, StandardCharsets.UTF_8);
    System.setOut(capture);
    System.setErr(capture);
    System.setIn(new ByteArrayInputStream((stdin == null ? "" : stdin).getBytes(StandardCharsets.UTF_8)));
    FIRST_EXIT.set(null);
    int code = 0;
    try {
      KAFKA_TOOLS.get(tool).main(args.toArray(String[]::new));
    } catch (ExitCalled e) {
      code = FIRST_EXIT.get();
    } finally {
      EXIT_HOOKS.forEach(Runnable::run); // as the tool's own process would on exit
      EXIT_HOOKS.clear();
      System.setOut(oldOut);
      System.setErr(oldErr);
      System.setIn(oldIn);
    }
    return new Run(code, out.toString(StandardCharsets.UTF_8));
  }

  /** curl as printed, plus {@code -w} to learn the HTTP status: an HTTP error fails the command too. */
  private static Run curl(List<String> args) throws Exception {
    List<String> withStatus = new ArrayList<>(args);
    withStatus.addAll(List.of("-w", "\n%{http_code}"));
    Run run = process(installed("curl"), withStatus, null);
    List<String> lines = run.out().lines().toList();
    int status = lines.isEmpty() ? 0 : Integer.parseInt(lines.getLast().strip());
    String body = String.join("\n", lines.subList(0, Math.max(0, lines.size() - 1)));
    Matcher id = STREAM_ID.matcher(body);
    if (id.find()) {
      streamId = id.group(1);
    }
    boolean ok = run.code() == 0 && status >= 200 && status < 400;
    return new Run(ok ? 0 : (run.code() != 0 ? run.code() : status), body + "\nHTTP " + status);
  }

  private static Run process(String binary, List<String> args, String stdin) throws Exception {
    List<String> command = new ArrayList<>(List.of(binary));
    command.addAll(args);
    Process p = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true).start();
    try (var in = p.getOutputStream()) {
      if (stdin != null) {
        in.write(stdin.getBytes(StandardCharsets.UTF_8));
      }
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return new Run(-1, out + "\n(timed out)");
    }
    return new Run(p.exitValue(), out);
  }

  /** The path of an installed binary; fails when it is missing (CI installs curl and kcat). */
  private static String installed(String name) {
    String path = installedOrNull(name);
    if (path == null) {
      throw new IllegalStateException(name + " is not installed (apt-get install " + name + "); the docs use it");
    }
    return path;
  }

  private static String installedOrNull(String name) {
    for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
      File f = new File(dir, name);
      if (f.canExecute()) {
        return f.getPath();
      }
    }
    return null;
  }

  /**
   * The settings of the documented {@code bin/tidemark start --set k=v} commands that the commands
   * after them need, of {@link #NODE_SETTINGS} only (the others name ports or paths of a real
   * installation): the node of this test runs with them, as the page's own node would.
   */
  private static List<String> documentedStartSettings() {
    List<String> settings = new ArrayList<>();
    for (Command c : DocCommands.all()) {
      List<String> words = DocCommands.words(c.text());
      if (!c.text().startsWith("bin/tidemark start")) {
        continue;
      }
      for (int i = 0; i + 1 < words.size(); i++) {
        String setting = words.get(i + 1);
        if (words.get(i).equals("--set") && NODE_SETTINGS.contains(setting.substring(0, setting.indexOf('=')))) {
          settings.add(setting);
        }
      }
    }
    return settings;
  }

  /** After a page: checks what the page promises, then deletes the topics it made. */
  private static void afterPage(Path page) throws Exception {
    if (page.getFileName().toString().equals("README.md")) {
      assertReadmeRowLanded();
    }
    try (Admin admin = admin()) {
      Set<String> topics = admin.listTopics().names().get(60, TimeUnit.SECONDS).stream()
          .filter(t -> !t.startsWith("_")).collect(Collectors.toSet());
      if (!topics.isEmpty()) {
        admin.deleteTopics(topics).all().get(60, TimeUnit.SECONDS);
      }
    }
  }

  /** The README's example ends with its produced row in the table (Spark's query is not run). */
  private static void assertReadmeRowLanded() throws Exception {
    try (RESTCatalog rest = new RESTCatalog()) {
      rest.initialize("docs", new HashMap<>(Map.of("uri", "http://127.0.0.1:" + ports.get("8181"),
          "io-impl", LocalFileIO.class.getName()))); // no full Hadoop on this class path for HadoopFileIO
      TableIdentifier clicks = TableIdentifier.of("default", "clicks");
      await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500)).until(() -> {
        if (!rest.tableExists(clicks)) {
          return false;
        }
        List<Object> values = new ArrayList<>();
        try (CloseableIterable<Record> rows = IcebergGenerics.read(rest.loadTable(clicks)).build()) {
          rows.forEach(r -> values.add(r.getField("_kafka_value")));
        }
        return values.contains("page=/home");
      });
    }
  }

  private static Admin admin() {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + ports.get("9092")));
  }
}
