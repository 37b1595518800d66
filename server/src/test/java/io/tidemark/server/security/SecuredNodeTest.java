package io.tidemark.server.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.broker.security.TestCertificates;
import io.tidemark.server.FreePorts;
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
 * Goal: a node with only a SASL_SSL listener (the config/ example's shape) creates its bootstrap
 * SCRAM user, lets {@code kafka-configs} (Kafka's own tool class) add a user whose credential is
 * kept in the controller's metadata across a restart, serves kcat over SASL_SSL, and refuses a
 * wrong password; its own internal clients log in over the same listener.
 */
class SecuredNodeTest {

  @TempDir Path dir;
  private final List<TidemarkServer> servers = new ArrayList<>();

  @AfterEach
  void stop() {
    servers.forEach(TidemarkServer::close);
  }

  private TidemarkServer start(Path data, Path keystore) {
    List<String> args = new ArrayList<>(List.of("--set", "data.dir=" + data, "--set", "admin.port=0",
        "--set", "wal.capacity.bytes=" + (32L << 20), "--set", "registry.host=127.0.0.1", "--set", "registry.port=0",
        "--set", "table.rest.host=127.0.0.1", "--set", "table.rest.port=0",
        "--set", "controller.voters=" + FreePorts.singleVoter(),
        "--set", "listeners=SASL_SSL://127.0.0.1:0",
        "--set", "ssl.keystore.location=" + keystore,
        "--set", "ssl.keystore.password=" + TestCertificates.PASSWORD,
        "--set", "sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512",
        "--set", "sasl.scram.bootstrap.credentials=SCRAM-SHA-256=[name=admin,password=admin-secret]",
        "--set", "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule "
            + "required username=\"admin\" password=\"admin-secret\";"));
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
  void kafkaConfigsCreatesAScramUserThatSurvivesARestartAndKcatLogsIn() throws Exception {
    Path keystore = TestCertificates.keyPair(dir, "server", "CN=localhost");
    Path pem = TestCertificates.exportPem(keystore, "server", dir.resolve("server.pem"));
    Path trust = TestCertificates.trustStore(dir, "trust", List.of(pem));
    Path data = dir.resolve("data");
    TidemarkServer server = start(data, keystore);
    int port = server.kafkaPort().orElseThrow();

    Path adminConfig = dir.resolve("admin.properties");
    Properties admin = new Properties();
    client(port, trust, "SCRAM-SHA-256", "admin", "admin-secret").forEach((k, v) -> admin.put(k, v.toString()));
    admin.remove("bootstrap.servers");
    try (var out = Files.newOutputStream(adminConfig)) {
      admin.store(out, null);
    }
    String out = configs("--bootstrap-server", "127.0.0.1:" + port, "--command-config", adminConfig.toString(), "--alter",
        "--add-config", "SCRAM-SHA-512=[iterations=8192,password=alice-secret]", "--entity-type", "users",
        "--entity-name", "alice");
    assertThat(out).contains("Completed updating config for user alice");
    // kafka-configs --describe --entity-type users also asks DescribeClientQuotas (quotas: not served yet); the Admin
    // call it makes for SCRAM credentials is DescribeUserScramCredentials:
    try (Admin a = Admin.create(client(port, trust, "SCRAM-SHA-256", "admin", "admin-secret"))) {
      var info = a.describeUserScramCredentials(List.of("alice")).description("alice").get(30, TimeUnit.SECONDS);
      assertThat(info.credentialInfos()).singleElement().satisfies(c -> {
        assertThat(c.mechanism()).isEqualTo(org.apache.kafka.clients.admin.ScramMechanism.SCRAM_SHA_512);
        assertThat(c.iterations()).isEqualTo(8192);
      });
    }

    Map<String, Object> alice = client(port, trust, "SCRAM-SHA-512", "alice", "alice-secret");
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
    for (String d : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
      File f = new File(d, "kcat");
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
