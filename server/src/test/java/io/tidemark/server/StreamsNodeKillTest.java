package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.broker.streams.EosApp;
import io.tidemark.broker.streams.EosOutput;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: a Kafka Streams 4.x application with {@code exactly_once_v2} ({@link EosApp}: a
 * repartition topic, a state store with a compacted changelog, two stream threads) gets
 * exactly-once results while the Tidemark node itself (a child JVM on a real storage engine) is
 * killed with SIGKILL in the middle of the run and restarted on the same data directory and port:
 * under {@code read_committed} every input record is copied exactly once and every word's running
 * count reads 1, 2, 3, ... with nothing repeated or skipped. The application runs in this JVM
 * and replaces a stream thread that dies of a broker error (its uncaught-exception handler
 * answers REPLACE_THREAD, as a production application would); the replacement goes through the
 * producer fencing of {@code exactly_once_v2}. 1 kill of 2,000 records by default;
 * {@code -Dtidemark.test.scale=full}: 3 kills over 10,000 records.
 */
class StreamsNodeKillTest {

  private static final Pattern KAFKA_PORT = Pattern.compile("broker \\d+ of cluster \\S+ started on port (\\d+)");
  private static final Pattern TROUBLE = Pattern.compile(" ERROR ");
  private static final int PARTITIONS = 4;
  private static final int STARTS = 3;
  /** A node of what the test needs, aborting timed-out transactions soon (EosApp's transaction timeout is 5 s). */
  private static final List<String> NODE_SETTINGS = List.of("process.roles=controller,broker", "table.enable=false",
      "kafka.transaction.abort.timed.out.transaction.cleanup.interval.ms=500");
  private final List<Process> children = new ArrayList<>();
  @TempDir Path dataDir;
  @TempDir Path stateDir;

  @AfterEach
  void killChildren() {
    children.forEach(Process::destroyForcibly);
  }

  private static boolean full() {
    return "full".equals(System.getProperty("tidemark.test.scale"));
  }

  @Test
  void exactlyOnceAcrossKillNineOfTheNode() throws Exception {
    int records = full() ? 10_000 : 2_000;
    int kills = full() ? 3 : 1;
    int port = FreePorts.pick();
    String bootstrap = "127.0.0.1:" + port;
    ConcurrentLinkedQueue<String> childLog = new ConcurrentLinkedQueue<>();
    Process node = startNode(port, childLog);
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin.createTopics(List.of(new NewTopic(EosApp.INPUT, PARTITIONS, (short) 1), new NewTopic(EosApp.COPY, PARTITIONS, (short) 1),
          new NewTopic(EosApp.COUNTS, PARTITIONS, (short) 1))).all().get(60, TimeUnit.SECONDS);
    }
    AtomicInteger replacedThreads = new AtomicInteger();
    KafkaStreams streams = new KafkaStreams(EosApp.topology(), EosApp.config(bootstrap, stateDir));
    try {
      replaceDeadThreads(streams, replacedThreads, "StreamsNodeKillTest");
      streams.start();
      Set<String> acked = ConcurrentHashMap.newKeySet();
      AtomicReference<Throwable> producerFailure = new AtomicReference<>();
      // once the application runs, the input keeps coming, paced, before, during and after the kills (the
      // producer retries across them)
      Awaitility.await().atMost(Duration.ofMinutes(3)).until(() -> streams.state() == KafkaStreams.State.RUNNING);
      Thread producer = startInput(bootstrap, records, acked, producerFailure);
      for (int k = 1; k <= kills; k++) {
        // kill while the application processes and commits: some output committed since the last restart
        long threshold = (long) records * k / (kills + 2);
        Awaitility.await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(200))
            .until(() -> EosOutput.endOffsets(bootstrap, EosApp.COPY, PARTITIONS, "read_committed") > threshold);
        node.destroyForcibly();
        assertThat(node.waitFor(60, TimeUnit.SECONDS)).isTrue();
        int ackedAtKill = acked.size();
        print(childLog, "kill " + k);
        long started = System.nanoTime();
        node = startNode(port, childLog);
        System.out.println("StreamsNodeKillTest: kill " + k + " after " + threshold + "+ committed copies and " + ackedAtKill
            + " input records acknowledged, node up again after "
            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started) + " ms");
      }
      try (EosOutput output = new EosOutput(bootstrap, PARTITIONS)) {
        try {
          output.awaitTotals(records, Duration.ofMinutes(5));
        } catch (org.awaitility.core.ConditionTimeoutException e) {
          printTransactions(bootstrap);
          throw e;
        }
        producer.join(120_000);
        assertThat(producerFailure.get()).isNull();
        assertThat(acked).hasSize(records);
        long uncommitted = EosOutput.endOffsets(bootstrap, EosApp.COPY, PARTITIONS, "read_uncommitted");
        System.out.println("StreamsNodeKillTest: " + records + " input records, " + kills + " kill(s) of the node, "
            + uncommitted + " copy offsets in the log including aborted ones and markers, " + replacedThreads
            + " stream thread(s) replaced, application " + streams.state());
        output.assertExactlyOnce(records, acked, Duration.ofSeconds(1));
      }
      assertThat(streams.state()).as("the application still runs").isIn(KafkaStreams.State.RUNNING, KafkaStreams.State.REBALANCING);
    } finally {
      print(childLog, "end");
      // bounded: a stream thread stuck on the broker must fail the test, not hang it
      if (!streams.close(Duration.ofSeconds(60))) {
        System.out.println("StreamsNodeKillTest: the application did not close within 60 s; its threads:");
        Thread.getAllStackTraces().forEach((t, stack) -> {
          if (t.getName().startsWith(EosApp.APP_ID)) {
            System.out.println(t.getName() + " " + t.getState());
            for (StackTraceElement e : stack) {
              System.out.println("    at " + e);
            }
          }
        });
      }
    }
  }

  /**
   * Starts the node on the data directory. On a heavily loaded machine a start can give up (its
   * controller quorum does not answer in time) and exit: it is started again, as a supervisor
   * would, at most {@value #STARTS} times; the data directory is the same each time.
   */
  private Process startNode(int port, ConcurrentLinkedQueue<String> childLog) throws Exception {
    for (int attempt = 1; ; attempt++) {
      Process child = ChildServer.start(dataDir, port, NODE_SETTINGS);
      children.add(child);
      try {
        assertThat(ChildServer.portFrom(child, KAFKA_PORT, TROUBLE, childLog)).isEqualTo(port);
        return child;
      } catch (AssertionError e) {
        if (child.isAlive() || attempt == STARTS) {
          throw e;
        }
        System.out.println("StreamsNodeKillTest: start " + attempt + " of the node exited before it served; starting it again");
      }
    }
  }

  /** Replaces a stream thread that dies of a broker error (REPLACE_THREAD, as a production application would), counting it. */
  static void replaceDeadThreads(KafkaStreams streams, AtomicInteger replaced, String test) {
    streams.setUncaughtExceptionHandler(e -> {
      replaced.incrementAndGet();
      System.out.println(test + ": a stream thread died and is replaced: " + e);
      return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
    });
  }

  /**
   * Starts writing input records 0 to {@code records - 1} of {@link EosApp}, paced (20 records, then
   * 50 ms), with {@link #inputProducer}; the values acknowledged go to {@code acked}, a failure to
   * {@code failure}. The thread ends once every record is acknowledged or failed.
   */
  static Thread startInput(String bootstrap, int records, Set<String> acked, AtomicReference<Throwable> failure) {
    return Thread.ofPlatform().name("eos-input").daemon().start(() -> {
      try (KafkaProducer<String, String> p = inputProducer(bootstrap)) {
        for (int i = 0; i < records; i++) {
          String value = EosOutput.value(i);
          p.send(new ProducerRecord<>(EosApp.INPUT, "r" + i, value), (m, e) -> {
            if (e == null) {
              acked.add(value);
            }
          });
          if (i % 20 == 19) {
            p.flush();
            Thread.sleep(50);
          }
        }
        p.flush();
      } catch (Throwable t) {
        failure.set(t);
      }
    });
  }

  /**
   * The kill tests' idempotent producer, with delivery and blocking bounds (10 min) longer than any
   * restart of the node on a loaded machine, so that no input record is given up across a kill.
   */
  static KafkaProducer<String, String> inputProducer(String bootstrap) {
    Map<String, Object> p = new java.util.HashMap<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
        ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.LINGER_MS_CONFIG, 2,
        ProducerConfig.BATCH_SIZE_CONFIG, 4096));
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 600_000);
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 600_000L);
    return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
  }

  /** What the node holds of the application's transactions, when the output did not come: an open one shows the cause. */
  static void printTransactions(String bootstrap) {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      List<String> ids = admin.listTransactions().all().get(60, TimeUnit.SECONDS).stream().map(l -> l.transactionalId()).toList();
      admin.describeTransactions(ids).all().get(60, TimeUnit.SECONDS).forEach((id, d) -> System.out.println(
          "StreamsNodeKillTest: transaction " + id + " " + d.state() + " producer " + d.producerId() + " epoch " + d.producerEpoch()
              + " started " + d.transactionStartTimeMs() + " partitions " + d.topicPartitions()));
    } catch (Exception e) {
      System.out.println("StreamsNodeKillTest: could not describe the transactions: " + e);
    }
  }

  private static void print(ConcurrentLinkedQueue<String> lines, String when) {
    for (String line = lines.poll(); line != null; line = lines.poll()) {
      System.out.println("StreamsNodeKillTest node log (" + when + "): " + line);
    }
  }
}
