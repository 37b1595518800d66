package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.server.docs.DocCommands;
import io.tidemark.server.docs.DocCommands.Command;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: the release archive that {@code bin/tidemark dist} writes runs on a machine with only a JDK:
 * unpacked into an empty directory, its launcher runs the prebuilt jars (Maven on PATH fails loudly
 * and is never called), a real Kafka client produces and consumes a record, and SIGTERM stops it.
 *
 * <p>Tagged {@code packaged}: it needs server/target/tidemark-server.jar, so server/pom.xml runs it
 * in the {@code integration-test} phase, after {@code package} (of {@code mvn verify}, which is
 * {@code bin/tidemark test}); the default test phase skips it. {@code dist} runs with
 * {@code TIDEMARK_NO_BUILD}, so the archive is made from the jars the build just packaged.
 */
@Tag("packaged")
class DistArchiveTest {

  private static final Pattern KAFKA_PORT = Pattern.compile("broker \\d+ of cluster \\S+ started on port (\\d+)");

  @TempDir static Path scratch;
  /** The archive unpacked into an empty directory, once for every test here (dist and unpacking take seconds). */
  static Path home;
  private final List<Process> children = new ArrayList<>();

  @BeforeAll
  static void unpack() throws Exception {
    home = unpackedArchive();
  }

  @AfterEach
  void stopChildren() {
    children.forEach(Process::destroyForcibly);
  }

  @Test
  void archiveUnpackedInAnEmptyDirectoryServesKafkaWithOnlyAJdk() throws Exception {
    Launcher unpacked = new Launcher(home, scratch);
    for (String sourceOnly : List.of("build", "test", "dist")) {
      Launcher.Result r = unpacked.run(scratch, 60, sourceOnly);
      assertThat(r.code()).as(r.describe()).isEqualTo(2);
      assertThat(r.err()).as(r.describe()).contains("needs the source tree").doesNotContain(Launcher.MAVEN_CALLED);
    }

    Path workDir = Files.createDirectories(scratch.resolve("run"));
    List<String> args = new ArrayList<>(List.of("start", "--set", "data.dir=" + scratch.resolve("data"),
        "--set", "admin.port=0", "--set", "wal.capacity.bytes=" + (64L << 20)));
    args.addAll(TidemarkServerTest.ephemeralPorts());
    Process node = unpacked.builder(workDir, args).redirectErrorStream(true).start();
    children.add(node);
    ConcurrentLinkedQueue<String> maven = new ConcurrentLinkedQueue<>();
    int kafkaPort = ChildServer.portFrom(node, KAFKA_PORT, Pattern.compile(Launcher.MAVEN_CALLED), maven);
    String bootstrap = "127.0.0.1:" + kafkaPort;

    produceAndConsume(bootstrap);

    node.destroy(); // SIGTERM to the JVM: the launcher exec'd it
    assertThat(node.waitFor(90, TimeUnit.SECONDS)).as("the node stopped after SIGTERM").isTrue();
    assertThat(node.exitValue()).as("exit status of a JVM stopped by SIGTERM").isEqualTo(143);
    assertThat(maven).as("the archive never calls Maven").isEmpty();
  }

  @Test
  void systemdUnitParsesAndStartsTheArchivesLauncher() throws Exception {
    // Goal: packaging/systemd/tidemark.service is a valid unit whose ExecStart is the archive's launcher.
    String unit = Files.readString(home.resolve("packaging/systemd/tidemark.service"));
    Map<String, Map<String, String>> sections = SystemdUnit.parse(unit);
    assertThat(sections).containsOnlyKeys("Unit", "Service", "Install");
    assertThat(sections.get("Service")).containsEntry("ExecStart", "/opt/tidemark/bin/tidemark start")
        .containsEntry("KillSignal", "SIGTERM").containsEntry("SuccessExitStatus", "143");
    assertThat(sections.get("Install")).containsEntry("WantedBy", "multi-user.target");

    // systemd's own check, with the unit pointing at this unpacked archive instead of /opt/tidemark
    String analyze = installedOrNull("systemd-analyze");
    if (analyze == null && System.getenv("CI") == null) {
      System.out.println("[dist] systemd-analyze is not installed here (apt-get install systemd; CI has it): parse check only");
      return;
    }
    assertThat(analyze).as("systemd-analyze (CI installs the systemd package)").isNotNull();
    Path local = scratch.resolve("tidemark.service");
    Files.writeString(local, unit.replace("/opt/tidemark", home.toString()));
    Process verify = new ProcessBuilder(analyze, "verify", local.toString()).redirectErrorStream(true).start();
    String out = new String(verify.getInputStream().readAllBytes());
    assertThat(verify.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(verify.exitValue()).as(out).isZero();
    assertThat(out).as("systemd-analyze verify warns about nothing").isBlank();
  }

  @Test
  void containerfileRunsTheArchivesLauncherWithKnownSettingsAndDefaultPorts() throws Exception {
    // Goal: what can be checked of packaging/container/Containerfile without a container engine (none here):
    // it unpacks the archive dist wrote, under the name dist gives it, and runs that archive's launcher; every
    // TIDEMARK_ variable it sets is a setting the node knows (or the launcher's own); it exposes the default ports
    // and probes /ready on the default admin port; its data volume is the node's data.dir.
    Map<String, List<String>> file = Containerfile.parse(Files.readString(home.resolve("packaging/container/Containerfile")));
    String version = Main.version();
    List<String> add = List.of(file.get("ADD").getFirst().replace("${VERSION}", version).split("\\s+"));
    assertThat(scratch.resolve("dist").resolve(add.get(0))).as("ADD names the archive dist writes").exists();
    assertThat(add.get(1)).isEqualTo("/opt/");
    assertThat(file.get("RUN").getFirst().replace("${VERSION}", version))
        .as("the image renames the archive's top directory").contains("mv /opt/" + home.getFileName() + " /opt/tidemark");
    assertThat(file.get("ENTRYPOINT")).containsExactly("[\"/opt/tidemark/bin/tidemark\"]");
    assertThat(home.resolve("bin/tidemark")).isExecutable();
    assertThat(file.get("CMD")).containsExactly("[\"start\"]");

    Map<String, String> env = new java.util.TreeMap<>();
    for (String line : file.get("ENV")) {
      for (String pair : line.split("\\s+")) {
        env.put(pair.substring(0, pair.indexOf('=')), pair.substring(pair.indexOf('=') + 1));
      }
    }
    assertThat(env).containsKeys("TIDEMARK_DATA_DIR", "TIDEMARK_ADMIN_HOST");
    io.tidemark.server.config.ConfigLoader.Loaded loaded = new io.tidemark.server.config.ConfigLoader(
        io.tidemark.server.config.ConfigCatalog.standard()).load(java.util.Optional.empty(), List.of(), env);
    assertThat(loaded.warnings()).as("every TIDEMARK_ variable of the image is a known setting").isEmpty();
    assertThat(Files.readString(home.resolve("bin/tidemark"))).as("the launcher reads TIDEMARK_JAVA_OPTS")
        .contains("TIDEMARK_JAVA_OPTS");
    String dataDir = env.get("TIDEMARK_DATA_DIR");
    assertThat(file.get("VOLUME")).containsExactly(dataDir);
    assertThat(file.get("WORKDIR")).containsExactly(dataDir);

    List<Integer> defaults = List.of(io.tidemark.broker.BrokerConfig.LISTENER_PORT.defaultValue(),
        io.tidemark.registry.RegistryConfig.PORT.defaultValue(), io.tidemark.table.rest.RestCatalogConfig.PORT.defaultValue(),
        io.tidemark.server.config.ServerConfig.ADMIN_PORT.defaultValue());
    assertThat(Stream.of(file.get("EXPOSE").getFirst().split("\\s+")).map(Integer::valueOf).toList())
        .containsExactlyInAnyOrderElementsOf(defaults);
    assertThat(file.get("HEALTHCHECK").getFirst()).contains("http://127.0.0.1:"
        + io.tidemark.server.config.ServerConfig.ADMIN_PORT.defaultValue() + "/ready");
  }

  private static String installedOrNull(String name) {
    for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
      Path p = Path.of(dir, name);
      if (Files.isExecutable(p)) {
        return p.toString();
      }
    }
    return null;
  }

  /**
   * Follows docs/getting-started.md to the unpacked archive: its {@code bin/tidemark dist} (with
   * {@code --output}, so the test writes nothing into the source tree), its {@code tar} command
   * verbatim in the directory holding the archive, and its {@code cd}.
   */
  static Path unpackedArchive() throws Exception {
    Path out = scratch.resolve("dist");
    Launcher source = new Launcher(Launcher.sourceTree(), scratch);
    assertThat(words(gettingStarted("bin/tidemark dist"))).containsExactly("bin/tidemark", "dist");
    ProcessBuilder dist = source.builder(scratch, List.of("dist", "--output", out.toString()));
    dist.environment().put("TIDEMARK_NO_BUILD", "1");
    Launcher.Result made = Launcher.finish(dist.start(), 300);
    assertThat(made.code()).as("bin/tidemark dist: " + made.describe()).isZero();
    Path archive = out.resolve("tidemark-" + Main.version() + ".tar.gz");
    assertThat(made.out().strip()).isEqualTo(archive.toString());

    Launcher.Result tar = Launcher.finish(new ProcessBuilder(words(gettingStarted("tar "))).directory(out.toFile()).start(), 120);
    assertThat(tar.code()).as("the page's tar command: " + tar.describe()).isZero();
    try (Stream<Path> top = Files.list(out)) {
      assertThat(top.map(f -> f.getFileName().toString()).toList()).as("the archive unpacks to one directory")
          .containsExactlyInAnyOrder(archive.getFileName().toString(), "tidemark-" + Main.version());
    }
    Path home = out.resolve(words(gettingStarted("cd ")).get(1));
    for (String expected : List.of("bin/tidemark", "lib/tidemark-server.jar", "config/tidemark.properties",
        "docs/configuration.md", "docs/getting-started.md", "packaging/systemd/tidemark.service",
        "packaging/container/Containerfile", "README.md", "LICENSE")) {
      assertThat(home.resolve(expected)).as("the archive holds " + expected).exists();
    }
    assertThat(home.resolve("bin/tidemark")).isExecutable();
    assertThat(home.resolve("pom.xml")).as("no sources in the archive").doesNotExist();
    assertThat(home.resolve("server")).doesNotExist();
    return home;
  }

  @Test
  void gettingStartedLauncherCommandsWorkInTheArchive() throws Exception {
    // Goal: every bin/tidemark command of docs/getting-started.md works in the unpacked archive without Maven.
    Launcher unpacked = new Launcher(home, scratch);
    List<Command> launcherCommands = DocCommands.of(GETTING_STARTED).stream()
        .filter(c -> c.tool().equals("bin/tidemark") && !c.text().startsWith("bin/tidemark dist")).toList();
    assertThat(launcherCommands).as("getting-started.md runs the launcher").hasSizeGreaterThan(1);
    for (Command c : launcherCommands) {
      List<String> words = words(c);
      if (words.getLast().equals("&")) {
        // the page's background start: archiveUnpackedInAnEmptyDirectoryServesKafkaWithOnlyAJdk runs it, on ephemeral ports
        assertThat(words).as(c.where()).containsExactly("bin/tidemark", "start", "&");
        continue;
      }
      Launcher.Result r = unpacked.run(home, 60, words.subList(1, words.size()).toArray(String[]::new));
      assertThat(r.code()).as(c.where() + ": " + c.text() + "\n" + r.describe()).isZero();
      assertThat(r.err()).as(c.where()).doesNotContain(Launcher.MAVEN_CALLED);
      if (words.equals(List.of("bin/tidemark", "--version"))) {
        assertThat(r.out()).as(c.where()).isEqualTo("tidemark " + Main.version() + "\n");
      } else if (words.equals(List.of("bin/tidemark", "start", "--help"))) {
        assertThat(r.out()).as("the archive's launcher asks the prebuilt jar: " + c.where()).isEqualTo(Main.help("start"));
      }
    }
    assertThat(launcherCommands.stream().map(DistArchiveTest::words)).as("the page shows --version and start --help")
        .contains(List.of("bin/tidemark", "--version"), List.of("bin/tidemark", "start", "--help"));
  }

  private static final Path GETTING_STARTED = Launcher.sourceTree().resolve("docs/getting-started.md");

  /** The first command of docs/getting-started.md that starts with {@code prefix}. */
  private static Command gettingStarted(String prefix) {
    return DocCommands.of(GETTING_STARTED).stream().filter(c -> c.text().startsWith(prefix)).findFirst()
        .orElseThrow(() -> new AssertionError("docs/getting-started.md has no command starting with '" + prefix + "'"));
  }

  private static List<String> words(Command c) {
    return DocCommands.words(c.text());
  }

  private static void produceAndConsume(String bootstrap) throws Exception {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin.createTopics(List.of(new NewTopic("from-archive", 1, (short) 1))).all().get(60, TimeUnit.SECONDS);
    }
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
      producer.send(new ProducerRecord<>("from-archive", "k", "hello from the archive")).get(60, TimeUnit.SECONDS);
    }
    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    List<String> values = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer())) {
      TopicPartition tp = new TopicPartition("from-archive", 0);
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      await().atMost(Duration.ofSeconds(60)).until(() -> {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          values.add(r.value());
        }
        return !values.isEmpty();
      });
    }
    assertThat(values).containsExactly("hello from the archive");
  }
}
