package io.tidemark.server.compat;

import static org.awaitility.Awaitility.await;

import io.tidemark.server.FreePorts;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;

/**
 * Apache Kafka (the {@code kafka_2.13} jars of the same version as kafka-clients, a test dependency
 * from Maven Central) as the reference peer of the differential tests: one KRaft node, broker and
 * controller in a child JVM on free loopback ports, formatted with Kafka's own {@code StorageTool},
 * replication factors of 1, everything else at Kafka's defaults unless the caller overrides it. The
 * child's output goes to {@code kafka.log} in its directory; {@link #close()} stops it and waits.
 * Like bench's {@code ApacheKafka}, but for tests (started once per test class).
 */
final class KafkaReference implements AutoCloseable {

  private static final Duration START_TIMEOUT = Duration.ofMinutes(3);

  private final Process process;
  private final Path dir;
  private final int port;

  private KafkaReference(Process process, Path dir, int port) {
    this.process = process;
    this.dir = dir;
    this.port = port;
  }

  /** Formats and starts a node in {@code dir}; returns once it answers Admin requests. */
  static KafkaReference start(Path dir, Map<String, String> overrides) throws Exception {
    Files.createDirectories(dir);
    int port = FreePorts.pick();
    int controllerPort = FreePorts.pick();
    Path config = dir.resolve("server.properties");
    StringBuilder props = new StringBuilder("""
        process.roles=broker,controller
        node.id=1
        controller.quorum.voters=1@127.0.0.1:%2$d
        listeners=PLAINTEXT://127.0.0.1:%1$d,CONTROLLER://127.0.0.1:%2$d
        advertised.listeners=PLAINTEXT://127.0.0.1:%1$d
        controller.listener.names=CONTROLLER
        inter.broker.listener.name=PLAINTEXT
        listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
        log.dirs=%3$s
        offsets.topic.replication.factor=1
        transaction.state.log.replication.factor=1
        transaction.state.log.min.isr=1
        share.coordinator.state.topic.replication.factor=1
        share.coordinator.state.topic.min.isr=1
        """.formatted(port, controllerPort, dir.resolve("logs")));
    overrides.forEach((k, v) -> props.append(k).append('=').append(v).append('\n'));
    Files.writeString(config, props.toString(), StandardCharsets.UTF_8);
    Process format = java(dir, "format", "kafka.tools.StorageTool", "format", "-t", Uuid.randomUuid().toString(), "-c", config.toString());
    if (!format.waitFor(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS) || format.exitValue() != 0) {
      format.destroyForcibly();
      throw new IllegalStateException("formatting Kafka's storage failed; see " + dir.resolve("format.log") + ":\n" + tail(dir.resolve("format.log")));
    }
    Process kafka = java(dir, "kafka", "kafka.Kafka", config.toString());
    KafkaReference node = new KafkaReference(kafka, dir, port);
    try {
      await().atMost(START_TIMEOUT).pollInterval(Duration.ofMillis(250)).until(() -> {
        if (!kafka.isAlive()) {
          throw new IllegalStateException("Kafka exited with " + kafka.exitValue() + ":\n" + tail(dir.resolve("kafka.log")));
        }
        try (Admin admin = node.admin()) {
          return !admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty();
        } catch (Exception notYet) {
          return false;
        }
      });
    } catch (RuntimeException e) {
      node.close();
      throw e;
    }
    return node;
  }

  /** {@link #start} on another thread, so that the caller can start Tidemark meanwhile. */
  static CompletableFuture<KafkaReference> startInBackground(Path dir, Map<String, String> overrides) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        return start(dir, overrides);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
  }

  private static Process java(Path dir, String logName, String mainClass, String... args) throws IOException {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx768m",
        "-XX:+UseSerialGC", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", System.getProperty("java.class.path"), mainClass));
    command.addAll(List.of(args));
    return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve(logName + ".log").toFile()).start();
  }

  private static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  int port() {
    return port;
  }

  String bootstrap() {
    return "127.0.0.1:" + port;
  }

  Admin admin() {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
    return Admin.create(p);
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
  }

  Path dir() {
    return dir;
  }
}
