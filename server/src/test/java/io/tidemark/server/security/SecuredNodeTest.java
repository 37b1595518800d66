package io.tidemark.server.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.broker.security.TestCertificates;
import io.tidemark.server.FreePorts;
import io.tidemark.server.KafkaConfigsTool;
import io.tidemark.server.Main;
import io.tidemark.server.TidemarkServer;
import io.tidemark.server.storage.EmbeddedStorage;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: the example node config/secured/node.properties (only a SASL_SSL listener, the authorizer
 * denying by default; only ports, paths and the key store changed) creates its bootstrap
 * SCRAM user, lets {@code kafka-configs} (Kafka's own tool class) add a user whose credential is
 * kept in the controller's metadata across a restart, serves kcat over SASL_SSL, and refuses a
 * wrong password; a user without ACLs writes nothing, kafka-acls grants her a topic; the node's own
 * internal clients (a super user) log in over the same listener. kafkajs logs in with SCRAM
 * over TLS, and the kafkajs registry client with HTTP basic credentials.
 */
class SecuredNodeTest {

  @TempDir Path dir;
  private final List<TidemarkServer> servers = new ArrayList<>();

  @AfterEach
  void stop() {
    servers.forEach(TidemarkServer::close);
  }

  /** The documented example node, config/secured/node.properties (SASL_SSL, SCRAM, the authorizer denying by default). */
  static final Path EXAMPLE = Path.of("..", "config", "secured", "node.properties");

  /** The example node with only what a test must change: ephemeral ports, scratch data, the test's key store. */
  private TidemarkServer start(Path data, Path keystore) {
    List<String> args = new ArrayList<>(List.of("--config", EXAMPLE.toString(), "--set", "data.dir=" + data,
        "--set", "admin.host=127.0.0.1", "--set", "admin.port=0",
        "--set", "wal.capacity.bytes=" + (32L << 20), "--set", "registry.host=127.0.0.1", "--set", "registry.port=0",
        "--set", "table.rest.host=127.0.0.1", "--set", "table.rest.port=0",
        "--set", "controller.voters=" + FreePorts.singleVoter(),
        "--set", "listeners=SASL_SSL://127.0.0.1:0",
        "--set", "advertised.listeners=SASL_SSL://127.0.0.1:0",
        "--set", "ssl.keystore.location=" + keystore,
        "--set", "ssl.keystore.password=" + TestCertificates.PASSWORD));
    TidemarkServer server = Main.start(args, Map.of(), new EmbeddedStorage());
    servers.add(server);
    return server;
  }

  private static Map<String, Object> client(int port, Path trust, String mechanism, String user, String password) {
    Map<String, Object> p = new HashMap<>();
    p.put("bootstrap.servers", "127.0.0.1:" + port);
    p.put("security.protocol", "SASL_SSL");
    p.put("ssl.truststore.location", trust.toString());
    p.put("ssl.truststore.password", TestCertificates.PASSWORD);
    p.put("sasl.mechanism", mechanism);
    p.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + user
        + "\" password=\"" + password + "\";");
    p.put("default.api.timeout.ms", 30_000);
    p.put("request.timeout.ms", 20_000);
    return p;
  }

  @Test
  void kafkaConfigsCreatesAScramUserThatSurvivesARestartAndKcatAndKafkajsLogIn() throws Exception {
    Path keystore = TestCertificates.keyPair(dir, "server", "CN=localhost");
    Path pem = TestCertificates.exportPem(keystore, "server", dir.resolve("server.pem"));
    Path trust = TestCertificates.trustStore(dir, "trust", List.of(pem));
    Path data = dir.resolve("data");
    TidemarkServer server = start(data, keystore);
    int port = server.kafkaPort().orElseThrow();

    Path adminConfig = dir.resolve("admin.properties");
    Properties admin = new Properties();
    client(port, trust, "SCRAM-SHA-512", "admin", "admin-secret").forEach((k, v) -> admin.put(k, v.toString()));
    admin.remove("bootstrap.servers");
    try (var out = Files.newOutputStream(adminConfig)) {
      admin.store(out, null);
    }
    String out = configs("--bootstrap-server", "127.0.0.1:" + port, "--command-config", adminConfig.toString(), "--alter",
        "--add-config", "SCRAM-SHA-512=[iterations=8192,password=alice-secret]", "--entity-type", "users",
        "--entity-name", "alice");
    assertThat(out).contains("Completed updating config for user alice");
    // the Admin call kafka-configs --describe --entity-type users makes for SCRAM credentials:
    try (Admin a = Admin.create(client(port, trust, "SCRAM-SHA-512", "admin", "admin-secret"))) {
      var info = a.describeUserScramCredentials(List.of("alice")).description("alice").get(30, TimeUnit.SECONDS);
      assertThat(info.credentialInfos()).singleElement().satisfies(c -> {
        assertThat(c.mechanism()).isEqualTo(org.apache.kafka.clients.admin.ScramMechanism.SCRAM_SHA_512);
        assertThat(c.iterations()).isEqualTo(8192);
      });
      a.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic("secured", 1, (short) 1))).all()
          .get(30, TimeUnit.SECONDS);
    }

    // The example's authorizer denies by default: without an ACL alice can write nothing, and nothing is written.
    Map<String, Object> alice = client(port, trust, "SCRAM-SHA-512", "alice", "alice-secret");
    alice.put("max.block.ms", 20_000);
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(alice, new StringSerializer(), new StringSerializer())) {
      ExecutionException denied = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
          () -> producer.send(new ProducerRecord<>("secured", 0, "k", "denied")).get(30, TimeUnit.SECONDS));
      assertThat(denied.getCause()).isInstanceOf(org.apache.kafka.common.errors.TopicAuthorizationException.class);
    }
    try (Admin a = Admin.create(client(port, trust, "SCRAM-SHA-512", "admin", "admin-secret"))) {
      assertThat(a.listOffsets(Map.of(new TopicPartition("secured", 0),
              org.apache.kafka.clients.admin.OffsetSpec.latest())).all().get(30, TimeUnit.SECONDS)
          .get(new TopicPartition("secured", 0)).offset()).isZero();
    }
    // kafka-acls as in docs/security.md; alice's kafkajs run below also creates a topic and uses a group, and its
    // registry client reads and sets the subject's compatibility (DescribeConfigs, AlterConfigs on its topic)
    String bootstrap = "127.0.0.1:" + port;
    for (String topic : List.of("secured", "payments")) {
      KafkaConfigsTool.acls(0, "--bootstrap-server", bootstrap, "--command-config", adminConfig.toString(), "--add",
          "--allow-principal", "User:alice", "--operation", "Write", "--operation", "Read", "--operation", "Describe",
          "--operation", "Create", "--operation", "DescribeConfigs", "--operation", "AlterConfigs", "--topic", topic);
    }
    KafkaConfigsTool.acls(0, "--bootstrap-server", bootstrap, "--command-config", adminConfig.toString(), "--add",
        "--allow-principal", "User:alice", "--operation", "Read", "--group", "kafkajs-sasl-", "--resource-pattern-type",
        "prefixed");
    assertThat(configs("--bootstrap-server", bootstrap, "--command-config", adminConfig.toString(), "--alter",
        "--add-config", "producer_byte_rate=1048576", "--entity-type", "users", "--entity-name", "alice"))
        .contains("Completed updating config for user alice");

    try (KafkaProducer<String, String> producer = new KafkaProducer<>(alice, new StringSerializer(), new StringSerializer())) {
      for (int i = 0; i < 10; i++) {
        producer.send(new ProducerRecord<>("secured", 0, "k" + i, "v" + i)).get(30, TimeUnit.SECONDS);
      }
    }
    server.close();

    server = start(data, keystore);
    port = server.kafkaPort().orElseThrow();
    alice = client(port, trust, "SCRAM-SHA-512", "alice", "alice-secret");
    List<String> values = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(alice, new StringDeserializer(),
        new StringDeserializer())) {
      consumer.assign(List.of(new TopicPartition("secured", 0)));
      consumer.seekToBeginning(List.of(new TopicPartition("secured", 0)));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (values.size() < 10 && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          values.add(r.value());
        }
      }
    }
    assertThat(values).hasSize(10).startsWith("v0").endsWith("v9");

    try (Admin wrong = Admin.create(client(port, trust, "SCRAM-SHA-512", "alice", "not-her-password"))) {
      ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
          () -> wrong.describeCluster().nodes().get(30, TimeUnit.SECONDS));
      assertThat(e.getCause()).isInstanceOf(SaslAuthenticationException.class);
    }

    String kcat = findKcat();
    if (kcat != null) {
      List<String> sasl = List.of("-b", "127.0.0.1:" + port, "-X", "security.protocol=SASL_SSL", "-X",
          "sasl.mechanisms=SCRAM-SHA-512", "-X", "sasl.username=alice", "-X", "sasl.password=alice-secret", "-X",
          "ssl.ca.location=" + pem, "-X", "ssl.endpoint.identification.algorithm=none");
      Path input = dir.resolve("kcat-in.txt");
      Files.writeString(input, "from-kcat-1\nfrom-kcat-2\n");
      Run produced = kcat(kcat, input, sasl, "-P", "-t", "secured", "-p", "0");
      assertThat(produced.code()).as(produced.out()).isZero();
      Run read = kcat(kcat, null, sasl, "-C", "-t", "secured", "-p", "0", "-o", "beginning", "-c", "12", "-e");
      assertThat(read.code()).as(read.out()).isZero();
      assertThat(read.out()).contains("v0", "v9", "from-kcat-2");
      List<String> bad = new ArrayList<>(sasl);
      bad.set(bad.indexOf("sasl.password=alice-secret"), "sasl.password=wrong");
      Run refused = kcat(kcat, null, bad, "-L", "-m", "10");
      assertThat(refused.code()).isNotZero();
      assertThat(refused.out()).containsIgnoringCase("authentication");
    }

    kafkajsWithScramAndTheRegistryClientWithBasicCredentials(port, pem, "http://127.0.0.1:" + server.registryPort().orElseThrow());
  }

  /**
   * kafkajs over SASL_SSL with SCRAM-SHA-512 as alice, and the kafkajs registry client with alice's
   * HTTP basic credentials: an Avro round trip; a wrong password is refused by the Kafka port, and the
   * registry answers 401 without credentials. Skipped without node or the npm packages, except in CI.
   */
  private void kafkajsWithScramAndTheRegistryClientWithBasicCredentials(int port, Path pem, String registry) throws Exception {
    Path js = Path.of("src", "test", "js");
    String node = onPath("node");
    if (node == null || !Files.isDirectory(js.resolve("node_modules").resolve("kafkajs"))) {
      if (System.getenv("CI") != null) {
        throw new AssertionError("node or the npm packages in " + js + " are missing; .ci/run installs them");
      }
      return;
    }
    Process process = new ProcessBuilder(node, "sasl-roundtrip.js", "127.0.0.1:" + port, pem.toString(), "scram-sha-512",
        "alice", "alice-secret", registry, "payments", "20").directory(js.toFile()).redirectErrorStream(false).start();
    java.util.concurrent.CompletableFuture<byte[]> stderr = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
      try {
        return process.getErrorStream().readAllBytes();
      } catch (java.io.IOException e) {
        return e.toString().getBytes(StandardCharsets.UTF_8);
      }
    });
    byte[] stdout = process.getInputStream().readAllBytes();
    assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("node finished").isTrue();
    assertThat(process.exitValue()).as(new String(stderr.get(10, TimeUnit.SECONDS), StandardCharsets.UTF_8)).isZero();
    String last = new String(stdout, StandardCharsets.UTF_8).strip().lines().reduce((a, b) -> b).orElseThrow();
    var result = new com.fasterxml.jackson.databind.ObjectMapper().readTree(last);
    assertThat(result.get("decoded")).hasSize(20);
    for (int i = 0; i < 20; i++) {
      assertThat(result.get("decoded").get(i).get("user").asText()).isEqualTo("u" + i);
      assertThat(result.get("decoded").get(i).get("seq").asInt()).isEqualTo(i);
    }
    assertThat(result.get("wrongPassword").asText()).contains("SASL").containsIgnoringCase("authentication");
    assertThat(result.get("registryWithoutCredentials").asInt()).isEqualTo(401);
  }

  record Run(int code, String out) {}

  private static Run kcat(String kcat, Path stdin, List<String> common, String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(kcat);
    command.addAll(common);
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    if (stdin != null) {
      pb.redirectInput(stdin.toFile());
    }
    Process process = pb.start();
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError("kcat timed out: " + command);
    }
    return new Run(process.exitValue(), new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
  }

  private static String findKcat() {
    return onPath("kcat");
  }

  /** The executable {@code name} on the PATH, or null. */
  private static String onPath(String name) {
    for (String d : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
      File f = new File(d, name);
      if (f.canExecute()) {
        return f.getPath();
      }
    }
    return null;
  }

  /** Runs Kafka's kafka-configs in this JVM; returns what it printed (fails the test on a non-zero exit). */
  private static String configs(String... args) {
    return io.tidemark.server.KafkaConfigsTool.run(0, args);
  }
}
