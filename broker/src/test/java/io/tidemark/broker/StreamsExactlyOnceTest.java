package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.broker.partition.MemoryStreamStore;
import io.tidemark.broker.streams.EosApp;
import io.tidemark.broker.streams.EosOutput;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: a Kafka Streams 4.x application with {@code processing.guarantee=exactly_once_v2} (state
 * store with a compacted changelog, a repartition topic, two stream threads per instance) gets
 * exactly-once results from Tidemark while one of its two instances, a child JVM, is killed with
 * SIGKILL in the middle of the run (mid-transaction: its commit interval is 100 ms) and the other
 * takes its tasks over, restoring their stores from the changelogs once the coordinator has
 * aborted the dead instance's transactions: under {@code read_committed} every input record is
 * copied exactly once and every word's running count reads 1, 2, 3, ... with nothing repeated or
 * skipped, up to the exact total ({@link EosApp} has the topology). The default suite runs two
 * brokers; {@code -Dtidemark.test.scale=full} adds one node, 10x the input and a restart of the
 * killed instance on its unclean state directory.
 */
class StreamsExactlyOnceTest {

  private static final int PARTITIONS = 4;
  private final List<Process> children = new ArrayList<>();
  private final Map<Process, CountDownLatch> childRunning = new ConcurrentHashMap<>();
  private final Map<Process, StringBuffer> childLogs = new ConcurrentHashMap<>();
  @TempDir Path stateA;
  @TempDir Path stateB;

  @AfterEach
  void killChildren() {
    children.forEach(Process::destroyForcibly);
  }

  private static boolean full() {
    return "full".equals(System.getProperty("tidemark.test.scale"));
  }

  /** Two brokers over shared metadata: the coordinators on the first, the data partitions spread over both. */
  @Test
  void twoBrokers() throws Exception {
    try (MemoryStreamStore store = new MemoryStreamStore(512L << 20)) {
      SharedClusterMetadata metadata = new SharedClusterMetadata();
      KafkaBroker first = startBroker(1, store, metadata); // creates the internal topics alone: it coordinates every id
      KafkaBroker second = startBroker(2, store, metadata);
      try {
        run(second.bootstrapServers(), full());
      } finally {
        second.close();
        first.close();
      }
    }
  }

  /** One node; with tidemark.test.scale=full only (the two-broker run covers the same ground and more). */
  @Test
  void oneNode() throws Exception {
    Assumptions.assumeTrue(full(), "one node runs with -Dtidemark.test.scale=full");
    try (TestBroker broker = new TestBroker(Map.of("kafka.transaction.abort.timed.out.transaction.cleanup.interval.ms", "200"))) {
      run(broker.bootstrap(), true);
    }
  }

  private static KafkaBroker startBroker(int id, MemoryStreamStore store, SharedClusterMetadata metadata) {
    return metadata.startBroker(id, store, null, Map.of("kafka.transaction.abort.timed.out.transaction.cleanup.interval.ms", "200"));
  }

  /**
   * Produces the input at a pace, runs instance A (child JVM) and B (here), kills A once both
   * share the work and some output is committed, optionally restarts A on its unclean state
   * directory, and checks the read_committed output.
   */
  private void run(String bootstrap, boolean restartKilled) throws Exception {
    int records = full() ? 20_000 : 2_000;
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin.createTopics(List.of(new NewTopic(EosApp.INPUT, PARTITIONS, (short) 1), new NewTopic(EosApp.COPY, PARTITIONS, (short) 1),
          new NewTopic(EosApp.COUNTS, PARTITIONS, (short) 1))).all().get(30, TimeUnit.SECONDS);
    }
    Set<String> acked = ConcurrentHashMap.newKeySet();
    CountDownLatch killed = new CountDownLatch(1);
    AtomicReference<Throwable> producerFailure = new AtomicReference<>();
    Thread producer = Thread.ofPlatform().name("eos-input").daemon().start(() -> {
      try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
          ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.LINGER_MS_CONFIG, 5),
          new StringSerializer(), new StringSerializer())) {
        for (int i = 0; i < records; i++) {
          String value = EosOutput.value(i);
          p.send(new ProducerRecord<>(EosApp.INPUT, "r" + i, value), (m, e) -> {
            if (e == null) {
              acked.add(value);
            }
          });
          if (i % 100 == 99) {
            p.flush();
            // a third of the input arrives before the kill, the rest while the survivor takes over
            if (i > records / 3) {
              killed.await(3, TimeUnit.MINUTES);
            }
            Thread.sleep(20);
          }
        }
        p.flush();
      } catch (Throwable t) {
        producerFailure.set(t);
      }
    });

    Process a = startChild(bootstrap, stateA);
    try (KafkaStreams b = new KafkaStreams(EosApp.topology(), EosApp.config(bootstrap, stateB))) {
      b.start();
      awaitRunning(a);
      // both instances share the work, and some of it is committed, before the kill
      Awaitility.await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(500))
          .until(() -> b.state() == KafkaStreams.State.RUNNING && activeTasks(b) > 0 && activeTasks(b) < 2 * PARTITIONS
              && EosOutput.endOffsets(bootstrap, EosApp.COPY, PARTITIONS, "read_committed") > records / 10);
      a.destroyForcibly(); // SIGKILL: its open transactions stay open until the coordinator times them out
      assertThat(a.waitFor(30, TimeUnit.SECONDS)).isTrue();
      long copiedAtKill = EosOutput.endOffsets(bootstrap, EosApp.COPY, PARTITIONS, "read_committed");
      killed.countDown();
      Process again = null;
      if (restartKilled) { // the killed instance comes back on its unclean state directory and rejoins
        again = startChild(bootstrap, stateA);
      }

      try (EosOutput output = new EosOutput(bootstrap, PARTITIONS)) {
        output.awaitTotals(records, Duration.ofMinutes(4));
        producer.join(60_000);
        assertThat(producerFailure.get()).isNull();
        assertThat(acked).hasSize(records);
        if (again != null) {
          awaitRunning(again);
          again.destroyForcibly();
        }
        long uncommitted = EosOutput.endOffsets(bootstrap, EosApp.COPY, PARTITIONS, "read_uncommitted");
        System.out.println("StreamsExactlyOnceTest: " + records + " input records, " + copiedAtKill
            + " copies committed at the kill, " + uncommitted + " copies in the log including aborted ones");
        output.assertExactlyOnce(records, acked, Duration.ofSeconds(1));
      }
    }
  }

  /** Tasks running on {@code streams} (the topology has two sub-topologies of {@value #PARTITIONS} tasks each). */
  private static int activeTasks(KafkaStreams streams) {
    return streams.metadataForLocalThreads().stream().mapToInt(t -> t.activeTasks().size()).sum();
  }

  private Process startChild(String bootstrap, Path stateDir) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder builder = new ProcessBuilder(java, "-Xmx256m", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
        EosApp.class.getName(), bootstrap, stateDir.toString());
    builder.redirectErrorStream(true);
    Process child = builder.start();
    children.add(child);
    CountDownLatch running = new CountDownLatch(1);
    StringBuffer log = new StringBuffer();
    Thread.ofPlatform().daemon().start(() -> {
      try (BufferedReader reader = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line = reader.readLine(); line != null; line = reader.readLine()) {
          if (line.contains(EosApp.RUNNING)) {
            running.countDown();
          }
          if (line.contains(" ERROR ") || line.contains("EOS-APP")) {
            log.append(line).append('\n');
            System.out.println("child: " + line);
          }
        }
      } catch (Exception ignored) {
        // the child ended
      }
    });
    childRunning.put(child, running);
    childLogs.put(child, log);
    return child;
  }

  private void awaitRunning(Process child) throws InterruptedException {
    assertThat(childRunning.get(child).await(3, TimeUnit.MINUTES)).as("the child instance runs; its log:\n" + childLogs.get(child))
        .isTrue();
  }
}
