package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringSerializer;

/** A child JVM running {@code Main start} on a data directory with every port ephemeral, for kill tests. */
final class ChildServer {

  private ChildServer() {}

  /** Starts the child; its output is merged and must be drained with {@link #portFrom}. */
  static Process start(Path dataDir) throws Exception {
    return start(dataDir, 0);
  }

  /** {@link #start(Path)} with the Kafka listener on {@code kafkaPort} (0: ephemeral, read it with {@link #portFrom}). */
  static Process start(Path dataDir, int kafkaPort) throws Exception {
    return start(dataDir, kafkaPort, List.of());
  }

  /** {@link #start(Path, int)} with more {@code key=value} settings (later ones win). */
  static Process start(Path dataDir, int kafkaPort, List<String> extraSettings) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> cmd = new ArrayList<>(List.of(java, "-Xmx512m", "-cp",
        System.getProperty("java.class.path"), Main.class.getName(), "start", "--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1", "--set", "admin.streams.api.enabled=true", "--set", "wal.capacity.bytes=" + (64L << 20),
        "--set", "kafka.listener.host=127.0.0.1", "--set", "kafka.advertised.host=127.0.0.1",
        "--set", "kafka.listener.port=" + kafkaPort, "--set", "registry.host=127.0.0.1", "--set", "registry.port=0",
        "--set", "table.rest.host=127.0.0.1", "--set", "table.rest.port=0",
        "--set", "controller.voters=" + FreePorts.singleVoter()));
    for (String s : extraSettings) {
      cmd.add("--set");
      cmd.add(s);
    }
    ProcessBuilder builder = new ProcessBuilder(cmd);
    builder.redirectErrorStream(true);
    return builder.start();
  }

  /** Reads the child's log on a daemon thread and drops it (a child whose pipe fills up would stall). */
  static void drain(Process child) {
    Thread.ofPlatform().daemon().start(() -> {
      try (var in = child.getInputStream()) {
        in.transferTo(java.io.OutputStream.nullOutputStream());
      } catch (java.io.IOException ignored) {
        // the child ended
      }
    });
  }

  /** Reads the child's log until a line matches {@code pattern} (group 1 = the port), and keeps draining it. */
  static int portFrom(Process child, Pattern pattern) {
    return portFrom(child, pattern, Pattern.compile("(?!)"), new java.util.concurrent.ConcurrentLinkedQueue<>());
  }

  /** {@link #portFrom(Process, Pattern)}, also collecting every later log line that matches {@code watch}. */
  static int portFrom(Process child, Pattern pattern, Pattern watch, java.util.Queue<String> watched) {
    AtomicInteger port = new AtomicInteger();
    StringBuffer log = new StringBuffer();
    Thread.ofPlatform().daemon().start(() -> {
      try (BufferedReader reader = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line = reader.readLine(); line != null; line = reader.readLine()) {
          log.append(line).append('\n');
          Matcher m = pattern.matcher(line);
          if (m.find()) {
            port.set(Integer.parseInt(m.group(1)));
          }
          if (watch.matcher(line).find()) {
            watched.add(line);
          }
        }
      } catch (Exception ignored) {
        // the child ended
      }
    });
    // a start takes 60-90 s on a loaded 2-core machine: wait long, and show the child's log if it never gets there
    try {
      await().atMost(Duration.ofMinutes(5)).until(() -> port.get() > 0 || !child.isAlive());
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError("child did not start within 5 minutes; its log:\n" + log, e);
    }
    assertThat(port.get()).as("child started; its log:\n" + log).isPositive();
    return port.get();
  }

  /** The kill tests' producer: idempotent, acks=all, small batches, long delivery timeout (it outlives restarts). */
  static KafkaProducer<String, String> idempotentProducer(String bootstrap) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    p.put(ProducerConfig.LINGER_MS_CONFIG, 2);
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, 4096);
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000);
    return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
  }
}
