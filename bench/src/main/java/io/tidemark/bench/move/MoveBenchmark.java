package io.tidemark.bench.move;

import io.tidemark.bench.kafka.ChildJvm;
import io.tidemark.bench.kafka.Setup;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Move time of one partition between two brokers, Tidemark against Apache Kafka, in child JVMs on
 * loopback. Tidemark: three nodes (controller and broker each, three voters) sharing one local
 * object storage directory (the embedded default backend; no S3). Kafka: two brokers, the first
 * also the KRaft controller, Kafka's defaults otherwise (no fsync per append).
 *
 * <p>Per partition size: a one-partition topic is filled with incompressible 64 KiB records
 * (acks=all) to the size; then a load producer writes 1 KiB records to it (acks=all, paced) for
 * the whole measurement, and the partition moves back and forth between two brokers {@code moves}
 * times. One move is timed from just before the AlterPartitionReassignments request to the
 * acknowledgement (acks=all) of the first produce sent once the metadata names the target as the
 * leader: what a client waits for. Before the next move the reassignment must be gone from
 * ListPartitionReassignments. Load-producer failures are counted (there should be none).
 * Runs on the caller's thread; every child is killed on exit.
 */
public final class MoveBenchmark {

  private static final int FILL_RECORD = 64 << 10;
  private static final int LOAD_RECORD = 1 << 10;
  private static final Duration MOVE_TIMEOUT = Duration.ofMinutes(10);

  /** What one run measures. */
  public record Plan(List<Long> sizes, int moves, int loadRecordsPerSecond, boolean tidemark, boolean kafka) {}

  /** The moves of one size on one system. */
  public record Result(String system, long sizeBytes, List<Long> movesMs, List<Long> leaderMs, long fillMs, long loadAcked,
      long loadFailed) {}

  /** A running cluster under test. */
  private interface Cluster extends AutoCloseable {
    String label();

    String bootstrap();

    @Override
    void close() throws Exception;
  }

  private final Plan plan;
  private final Path java;
  private final List<String> jvmOptions;
  private final String tidemarkClasspath;
  private final String kafkaClasspath;
  private final Path workDir;
  private final Path logDir;

  public MoveBenchmark(Plan plan, Path java, List<String> jvmOptions, String tidemarkClasspath, String kafkaClasspath,
      Path workDir, Path logDir) {
    this.plan = plan;
    this.java = java;
    this.jvmOptions = jvmOptions;
    this.tidemarkClasspath = tidemarkClasspath;
    this.kafkaClasspath = kafkaClasspath;
    this.workDir = workDir;
    this.logDir = logDir;
  }

  public List<Result> run() throws Exception {
    List<Result> results = new ArrayList<>();
    if (plan.tidemark()) {
      try (Cluster c = startTidemark()) {
        measure(c, results);
      }
    }
    if (plan.kafka()) {
      try (Cluster c = startKafka()) {
        measure(c, results);
      }
    }
    return results;
  }

  private void measure(Cluster cluster, List<Result> results) throws Exception {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap(),
        AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 120_000))) {
      for (long size : plan.sizes()) {
        String topic = "move-" + size;
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(2, TimeUnit.MINUTES);
        TopicPartition tp = new TopicPartition(topic, 0);
        int first = awaitLeader(admin, topic, -1);
        List<Integer> brokers = admin.describeCluster().nodes().get(1, TimeUnit.MINUTES).stream().map(n -> n.id()).sorted().toList();
        int second = brokers.get((brokers.indexOf(first) + 1) % brokers.size());
        long fillStart = System.nanoTime();
        fill(cluster.bootstrap(), topic, size);
        long fillMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - fillStart);
        System.out.printf("move bench: %s filled %s with %,d bytes in %,d ms%n", cluster.label(), topic, size, fillMs);
        List<Long> moves = new ArrayList<>();
        List<Long> leaders = new ArrayList<>();
        try (Load load = new Load(cluster.bootstrap(), topic, plan.loadRecordsPerSecond());
            KafkaProducer<byte[], byte[]> probe = producer(cluster.bootstrap(), Map.of())) {
          probe.send(new ProducerRecord<>(topic, 0, null, new byte[LOAD_RECORD])).get(2, TimeUnit.MINUTES);
          for (int i = 0; i < plan.moves(); i++) {
            int target = i % 2 == 0 ? second : first;
            Instant startedAt = Instant.now();
            long start = System.nanoTime();
            admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(target)))))
                .all().get(MOVE_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            awaitLeader(admin, topic, target);
            long leaderMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            probe.send(new ProducerRecord<>(topic, 0, null, new byte[LOAD_RECORD])).get(MOVE_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            moves.add(ms);
            leaders.add(leaderMs);
            System.out.printf("move bench: %s %s move %d to broker %d (requested at %s): %,d ms (metadata named it leader"
                + " after %,d ms)%n", cluster.label(), topic, i + 1, target, startedAt, ms, leaderMs);
            long deadline = System.nanoTime() + MOVE_TIMEOUT.toNanos();
            while (!admin.listPartitionReassignments().reassignments().get(1, TimeUnit.MINUTES).isEmpty()) {
              if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the reassignment of " + tp + " did not finish within " + MOVE_TIMEOUT);
              }
              Thread.sleep(50);
            }
          }
          load.stop();
          results.add(new Result(cluster.label(), size, moves, leaders, fillMs, load.acked.get(), load.failed.get()));
        }
        admin.deleteTopics(List.of(topic)).all().get(2, TimeUnit.MINUTES);
      }
    }
  }

  /** Polls the metadata until {@code topic}-0 has a leader ({@code expected} or, when -1, any); returns it. */
  private static int awaitLeader(Admin admin, String topic, int expected) throws Exception {
    long deadline = System.nanoTime() + MOVE_TIMEOUT.toNanos();
    while (true) {
      try {
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(1, TimeUnit.MINUTES).get(topic);
        TopicPartitionInfo p = d.partitions().get(0);
        if (p.leader() != null && !p.leader().isEmpty() && (expected < 0 || p.leader().id() == expected)) {
          return p.leader().id();
        }
      } catch (ExecutionException e) {
        // not known yet
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(topic + " has no leader " + (expected < 0 ? "" : expected) + " after " + MOVE_TIMEOUT);
      }
      Thread.sleep(10);
    }
  }

  private static KafkaProducer<byte[], byte[]> producer(String bootstrap, Map<String, Object> extra) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) MOVE_TIMEOUT.toMillis());
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 60_000);
    p.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 10);
    p.put(ProducerConfig.RETRY_BACKOFF_MAX_MS_CONFIG, 50);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
    p.putAll(extra);
    return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
  }

  private static void fill(String bootstrap, String topic, long size) throws Exception {
    SplittableRandom random = new SplittableRandom(size);
    try (KafkaProducer<byte[], byte[]> p = producer(bootstrap, Map.of(ProducerConfig.BATCH_SIZE_CONFIG, 1 << 20,
        ProducerConfig.LINGER_MS_CONFIG, 20, ProducerConfig.BUFFER_MEMORY_CONFIG, 64L << 20,
        ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 2 << 20))) {
      byte[][] values = new byte[16][FILL_RECORD];
      for (byte[] v : values) {
        random.nextBytes(v); // incompressible
      }
      for (long written = 0, i = 0; written < size; written += FILL_RECORD, i++) {
        p.send(new ProducerRecord<>(topic, 0, null, values[(int) (i % values.length)]));
      }
      p.flush();
    }
  }

  /** The produce load during the moves: 1 KiB records, acks=all, paced; counts acknowledgements and failures. */
  private static final class Load implements AutoCloseable {
    final AtomicLong acked = new AtomicLong();
    final AtomicLong failed = new AtomicLong();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final Thread thread;

    Load(String bootstrap, String topic, int perSecond) {
      thread = Thread.ofPlatform().name("move-bench-load").start(() -> {
        try (KafkaProducer<byte[], byte[]> p = producer(bootstrap, Map.of(ProducerConfig.LINGER_MS_CONFIG, 5))) {
          long started = System.nanoTime();
          for (long sent = 0; running.get(); ) {
            long due = (System.nanoTime() - started) * perSecond / 1_000_000_000L;
            if (sent >= due) {
              Thread.sleep(2);
              continue;
            }
            p.send(new ProducerRecord<>(topic, 0, null, new byte[LOAD_RECORD]), (m, e) -> {
              if (e == null) {
                acked.incrementAndGet();
              } else {
                failed.incrementAndGet();
              }
            });
            sent++;
          }
          p.flush();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
    }

    void stop() throws InterruptedException {
      running.set(false);
      thread.join(MOVE_TIMEOUT.toMillis());
    }

    @Override
    public void close() throws InterruptedException {
      stop();
    }
  }

  private Cluster startTidemark() throws Exception {
    Path objects = workDir.resolve("tidemark-objects");
    int[] kafkaPorts = {Setup.freePort(), Setup.freePort(), Setup.freePort()};
    String voters = "1@127.0.0.1:" + Setup.freePort() + ",2@127.0.0.1:" + Setup.freePort() + ",3@127.0.0.1:" + Setup.freePort();
    List<ChildJvm> nodes = new ArrayList<>();
    for (int id = 1; id <= 3; id++) {
      Path dir = workDir.resolve("tidemark-" + id);
      Files.createDirectories(dir);
      Path config = dir.resolve("tidemark.properties");
      Files.writeString(config, """
          # Generated by bench/run-move.sh: node %1$d of three, controller and broker, shared local object storage.
          process.roles=controller,broker
          node.id=%1$d
          controller.voters=%2$s
          data.dir=%3$s
          storage.local.path=%4$s
          kafka.listener.host=127.0.0.1
          kafka.advertised.host=127.0.0.1
          kafka.listener.port=%5$d
          admin.host=127.0.0.1
          admin.port=0
          registry.host=127.0.0.1
          registry.port=0
          table.rest.host=127.0.0.1
          table.rest.port=0
          """.formatted(id, voters, dir.resolve("data"), objects, kafkaPorts[id - 1]), StandardCharsets.UTF_8);
      nodes.add(ChildJvm.start("move-tidemark-" + id, java, jvmOptions, tidemarkClasspath, "io.tidemark.server.Main",
          List.of("start", "--config", config.toString()), logDir.resolve("move-tidemark-" + id + ".log")));
      // the local object store clears its temporary files when it opens: one node at a time
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
      while (!Files.isDirectory(dir.resolve("data").resolve("controller")) && System.nanoTime() < deadline) {
        Thread.sleep(100);
      }
    }
    String bootstrap = "127.0.0.1:" + kafkaPorts[0] + ",127.0.0.1:" + kafkaPorts[1] + ",127.0.0.1:" + kafkaPorts[2];
    Cluster cluster = cluster("Tidemark (3 nodes, local object storage)", bootstrap, nodes);
    awaitBrokers(cluster, 3, nodes);
    return cluster;
  }

  private Cluster startKafka() throws Exception {
    int[] ports = {Setup.freePort(), Setup.freePort()};
    int controllerPort = Setup.freePort();
    String clusterId = Uuid.randomUuid().toString();
    List<ChildJvm> nodes = new ArrayList<>();
    for (int id = 1; id <= 2; id++) {
      Path dir = workDir.resolve("kafka-" + id);
      Files.createDirectories(dir);
      Path config = dir.resolve("server.properties");
      String listeners = id == 1 ? "PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d".formatted(ports[0], controllerPort)
          : "PLAINTEXT://127.0.0.1:%d".formatted(ports[1]);
      Files.writeString(config, """
          # Generated by bench/run-move.sh: broker %1$d of two; broker 1 is also the KRaft controller.
          process.roles=%2$s
          node.id=%1$d
          controller.quorum.voters=1@127.0.0.1:%3$d
          listeners=%4$s
          advertised.listeners=PLAINTEXT://127.0.0.1:%5$d
          controller.listener.names=CONTROLLER
          inter.broker.listener.name=PLAINTEXT
          listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
          log.dirs=%6$s
          offsets.topic.replication.factor=1
          transaction.state.log.replication.factor=1
          transaction.state.log.min.isr=1
          share.coordinator.state.topic.replication.factor=1
          share.coordinator.state.topic.min.isr=1
          """.formatted(id, id == 1 ? "broker,controller" : "broker", controllerPort, listeners, ports[id - 1],
          dir.resolve("logs")), StandardCharsets.UTF_8);
      ChildJvm format = ChildJvm.start("move-kafka-" + id + "-format", java, List.of("-Xmx512m"), kafkaClasspath,
          "kafka.tools.StorageTool", List.of("format", "-t", clusterId, "-c", config.toString()),
          logDir.resolve("move-kafka-" + id + "-format.log"));
      if (format.waitFor(Duration.ofMinutes(3)).orElse(-1) != 0) {
        throw new IllegalStateException("formatting Kafka's storage failed; " + format.log() + ":\n" + format.tail(20));
      }
      nodes.add(ChildJvm.start("move-kafka-" + id, java, jvmOptions, kafkaClasspath, "kafka.Kafka",
          List.of(config.toString()), logDir.resolve("move-kafka-" + id + ".log")));
    }
    Cluster cluster = cluster("Apache Kafka (2 brokers)", "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1], nodes);
    awaitBrokers(cluster, 2, nodes);
    return cluster;
  }

  private static Cluster cluster(String label, String bootstrap, List<ChildJvm> nodes) {
    return new Cluster() {
      @Override
      public String label() {
        return label;
      }

      @Override
      public String bootstrap() {
        return bootstrap;
      }

      @Override
      public void close() throws Exception {
        for (ChildJvm n : nodes.reversed()) { // Kafka: the brokers before the controller they shut down through
          n.close();
        }
      }
    };
  }

  private static void awaitBrokers(Cluster cluster, int count, List<ChildJvm> nodes) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap()))) {
      while (true) {
        for (ChildJvm n : nodes) {
          if (!n.isAlive()) {
            throw new IllegalStateException(n.log() + " exited:\n" + n.tail(30));
          }
        }
        try {
          if (admin.describeCluster().nodes().get(15, TimeUnit.SECONDS).size() >= count) {
            return;
          }
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
          // not up yet
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(cluster.label() + " did not come up with " + count + " brokers");
        }
        Thread.sleep(500);
      }
    }
  }
}
