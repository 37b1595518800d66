package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.server.TableFiles.Position;
import io.tidemark.stream.testing.S3ProxyFixture;
import io.tidemark.table.config.TableCatalogConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: random partition moves under load lose nothing and duplicate nothing. Three Tidemark
 * nodes as child processes (controller and broker each) on S3 (S3Proxy in this JVM), a shared
 * embedded catalog; a continuous idempotent acks=all producer writes to a 12-partition topic and
 * a 4-partition table topic, a consumer group reads the 12-partition topic committing after every
 * poll. Each cycle moves a random partition (of either topic, the group's offsets partition or the
 * control topic) to a random other node and waits until it serves there. Checks: every acknowledged
 * record is in the log once at its acknowledged offset, offsets are dense per partition, the group
 * consumed every acknowledged record at its offset and its committed offsets never went back, and
 * the table (read through a node's Iceberg REST catalog with Iceberg's generic reader) equals the
 * table topic exactly once. Runs only with tidemark.test.scale=full (100 cycles; it has passed once, at 3 cycles, and
 * costs minutes of child-JVM start), so the default suite's move proof is RideThroughMovesTest; the seed is
 * printed. Kill -9 of nodes is not part of it yet (failover of a dead broker is another branch's work).
 */
@org.junit.jupiter.api.condition.EnabledIfSystemProperty(named = "tidemark.test.scale", matches = "full")
class MoveChaosTest {

  private static final String TOPIC = "chaos";
  private static final int PARTITIONS = 12;
  private static final String TABLE_TOPIC = "chaos_table";
  private static final int TABLE_PARTITIONS = 4;
  private static final String GROUP = "chaos-group";
  private static final java.util.regex.Pattern KAFKA_PORT =
      java.util.regex.Pattern.compile("broker \\d+ of cluster \\S+ started on port (\\d+)");
  /** Where the nodes' logs stay after the test. */
  private static final Path LOGS = Path.of("target", "move-chaos-logs");
  @TempDir Path root;
  private final List<Process> children = new ArrayList<>();
  private S3ProxyFixture s3;
  private int[] kafkaPorts;

  @BeforeAll
  static void checksumsOnlyWhenRequired() {
    // S3Proxy does not take the SDK's default trailing checksums
    System.setProperty("aws.requestChecksumCalculation", "when_required");
    System.setProperty("aws.responseChecksumValidation", "when_required");
  }

  @AfterEach
  void stop() throws Exception {
    for (Process child : children) {
      child.destroy(); // SIGTERM: controlled shutdown
    }
    for (Process child : children) {
      if (!child.waitFor(60, TimeUnit.SECONDS)) {
        child.destroyForcibly();
      }
    }
    if (s3 != null) {
      s3.close();
    }
  }

  @Test
  void randomMovesUnderLoadLoseAndDuplicateNothing() throws Exception {
    int cycles = "full".equals(System.getProperty("tidemark.test.scale")) ? 100 : 3;
    long seed = System.nanoTime();
    System.out.println("MoveChaosTest seed " + seed + ", " + cycles + " cycles");
    SplittableRandom random = new SplittableRandom(seed);
    s3 = S3ProxyFixture.start();
    String bucket = s3.newBucket("chaos");
    int[] restPorts = {FreePorts.pick(), FreePorts.pick(), FreePorts.pick()};
    // explicit Kafka ports: a node started with kafka.listener.port=0 advertises port 0 to the others
    kafkaPorts = new int[] {FreePorts.pick(), FreePorts.pick(), FreePorts.pick()};
    String voters = "1@127.0.0.1:" + FreePorts.pick() + ",2@127.0.0.1:" + FreePorts.pick() + ",3@127.0.0.1:" + FreePorts.pick();
    for (int id = 1; id <= 3; id++) {
      children.add(startNode(id, voters, bucket, restPorts[id - 1]));
    }
    List<String> ports = new ArrayList<>();
    for (int id = 1; id <= 3; id++) {
      ports.add("127.0.0.1:" + kafkaPort(id));
    }
    String bootstrap = String.join(",", ports);
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      await().atMost(Duration.ofMinutes(2)).until(() -> admin.describeCluster().nodes().get(1, TimeUnit.MINUTES).size() == 3);
      admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1), new NewTopic(TABLE_TOPIC, TABLE_PARTITIONS, (short) 1)
          .configs(Map.of("table.topic.enable", "true", "table.topic.commit.interval.ms", "1000",
              "table.topic.convert.value.type", "string")))).all().get(2, TimeUnit.MINUTES);
      PartitionMoveTest.withLeaders(admin, TOPIC, PARTITIONS);
      PartitionMoveTest.withLeaders(admin, TABLE_TOPIC, TABLE_PARTITIONS);
      Load load = new Load(bootstrap);
      load.start();
      await().atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofSeconds(1)).until(() -> {
        System.out.println("MoveChaosTest warming up: " + load.acked.size() + " acknowledged, " + load.consumed.size()
            + " consumed, " + load.committed.size() + " partitions committed, failures " + load.failures);
        return load.acked.size() > 500 && !load.committed.isEmpty();
      });
      List<TopicPartition> movable = new ArrayList<>();
      for (int p = 0; p < PARTITIONS; p++) {
        movable.add(new TopicPartition(TOPIC, p));
      }
      for (int p = 0; p < TABLE_PARTITIONS; p++) {
        movable.add(new TopicPartition(TABLE_TOPIC, p));
      }
      int offsetsPartitions = PartitionMoveTest.withLeaders(admin, "__consumer_offsets", 1).partitions().size();
      movable.add(new TopicPartition("__consumer_offsets", Math.floorMod(GROUP.hashCode(), offsetsPartitions)));
      movable.add(new TopicPartition(io.tidemark.table.control.ControlLog.TOPIC, 0));
      for (int cycle = 0; cycle < cycles; cycle++) {
        TopicPartition tp = movable.get(random.nextInt(movable.size()));
        TopicPartitionInfo now = PartitionMoveTest.withLeaders(admin, tp.topic(), tp.partition() + 1).partitions()
            .get(tp.partition());
        int target = (now.leader().id() + random.nextInt(2)) % 3 + 1;
        admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(target)))))
            .all().get(1, TimeUnit.MINUTES);
        await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(200)).until(() ->
            PartitionMoveTest.withLeaders(admin, tp.topic(), tp.partition() + 1).partitions().get(tp.partition()).leader().id()
                == target && admin.listPartitionReassignments().reassignments().get(1, TimeUnit.MINUTES).isEmpty());
        int before = load.acked.size();
        await().atMost(Duration.ofMinutes(2)).until(() -> load.acked.size() > before + 100);
        System.out.println("MoveChaosTest cycle " + cycle + ": " + tp + " " + now.leader().id() + " -> " + target + ", "
            + load.acked.size() + " acknowledged");
      }
      load.stopProducing();
      await().atMost(Duration.ofMinutes(3)).until(() -> load.consumed.keySet().containsAll(load.ackedOf(TOPIC)));
      load.stop();
      assertThat(load.failures).as("producer or consumer failures (seed %d)", seed).isEmpty();

      Map<Position, String> log = TableFiles.readLog(bootstrap, TOPIC, PARTITIONS);
      Map<String, Position> where = new HashMap<>();
      log.forEach((at, value) -> assertThat(where.put(value, at)).as("%s written once (seed %d)", value, seed).isNull());
      for (String value : load.ackedOf(TOPIC)) {
        assertThat(where.get(value)).as("acknowledged %s (seed %d)", value, seed).isEqualTo(load.acked.get(value));
        assertThat(load.consumed.get(value)).as("consumed %s (seed %d)", value, seed).isEqualTo(load.acked.get(value));
      }

      Map<Position, String> tableLog = TableFiles.readLog(bootstrap, TABLE_TOPIC, TABLE_PARTITIONS);
      for (String value : load.ackedOf(TABLE_TOPIC)) {
        assertThat(tableLog.get(load.acked.get(value))).as("acknowledged %s (seed %d)", value, seed).isEqualTo(value);
      }
      try (RESTCatalog catalog = new RESTCatalog()) {
        catalog.initialize("chaos", new HashMap<>(Map.of("uri", "http://127.0.0.1:" + restPorts[0],
            "s3.access-key-id", s3.accessKey(), "s3.secret-access-key", s3.secretKey(), "http-client.type", "urlconnection")));
        TableIdentifier id = TableIdentifier.of("default", TABLE_TOPIC);
        await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1))
            .until(() -> catalog.tableExists(id) && rows(catalog, id).size() >= tableLog.size());
        Map<Position, String> table = TableFiles.byPosition(rows(catalog, id), "seed " + seed);
        System.out.println("MoveChaosTest: " + load.acked.size() + " acknowledged, " + log.size() + " + " + tableLog.size()
            + " in the topics, " + table.size() + " rows after " + cycles + " moves");
        assertThat(table).as("the table holds exactly the table topic's records (seed %d)", seed).isEqualTo(tableLog);
      }
    }
  }

  private static List<Record> rows(RESTCatalog catalog, TableIdentifier id) throws Exception {
    List<Record> out = new ArrayList<>();
    try (CloseableIterable<Record> rows = IcebergGenerics.read(catalog.loadTable(id)).build()) {
      rows.forEach(r -> out.add(r.copy()));
    }
    return out;
  }

  private Process startNode(int id, String voters, String bucket, int restPort) throws Exception {
    Path dir = root.resolve("node-" + id);
    Files.createDirectories(dir);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = new ArrayList<>(List.of(java, "-Xmx512m", "-Daws.requestChecksumCalculation=when_required",
        "-Daws.responseChecksumValidation=when_required", "-cp", System.getProperty("java.class.path"), Main.class.getName(),
        "start"));
    for (String setting : List.of("node.id=" + id, "data.dir=" + dir, "process.roles=controller,broker",
        "controller.voters=" + voters, "storage.type=s3", "storage.s3.endpoint=" + s3.endpoint(), "storage.s3.bucket=" + bucket,
        "storage.s3.path.style=true", "storage.s3.region=" + S3ProxyFixture.REGION, "storage.s3.access.key=" + s3.accessKey(),
        "storage.s3.secret.key=" + s3.secretKey(), "wal.capacity.bytes=" + (32L << 20), "admin.host=127.0.0.1", "admin.port=0",
        "registry.host=127.0.0.1", "registry.port=0", "table.rest.host=127.0.0.1", "table.rest.port=" + restPort,
        "kafka.listener.host=127.0.0.1", "kafka.advertised.host=127.0.0.1", "kafka.listener.port=" + kafkaPorts[id - 1],
        "kafka.group.initial.rebalance.delay.ms=0", "controller.client.retry.backoff.ms=500", "stream.close.timeout.ms=5000",
        TableCatalogConfig.EMBEDDED_DB + "=" + root.resolve("catalog.db"))) {
      command.addAll(List.of("--set", setting));
    }
    Files.createDirectories(LOGS);
    return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(LOGS.resolve("node-" + id + ".log").toFile())
        .start();
  }

  /** The Kafka port node {@code id} logged once started (its log is kept in {@link #LOGS}). */
  private int kafkaPort(int id) throws Exception {
    Path log = LOGS.resolve("node-" + id + ".log");
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
    while (System.nanoTime() < deadline) {
      java.util.regex.Matcher m = KAFKA_PORT.matcher(Files.readString(log));
      if (m.find()) {
        return Integer.parseInt(m.group(1));
      }
      assertThat(children.get(id - 1).isAlive()).as("node %d is running; see %s", id, log).isTrue();
      Thread.sleep(200);
    }
    throw new AssertionError("node " + id + " did not start within 5 minutes; see " + log);
  }

  /** The idempotent producer over both topics and the consumer group over the 12-partition topic. */
  private static final class Load {
    final Map<String, Position> acked = new ConcurrentHashMap<>();
    final Map<String, Position> consumed = new ConcurrentHashMap<>();
    final Map<TopicPartition, Long> committed = new ConcurrentHashMap<>();
    final List<String> failures = new CopyOnWriteArrayList<>();
    private final String bootstrap;
    private final AtomicBoolean producing = new AtomicBoolean(true);
    private final AtomicBoolean consuming = new AtomicBoolean(true);
    private Thread producer;
    private Thread consumer;

    Load(String bootstrap) {
      this.bootstrap = bootstrap;
    }

    Set<String> ackedOf(String topic) {
      Set<String> out = new HashSet<>();
      for (String value : acked.keySet()) {
        if (value.startsWith(topic + "-")) {
          out.add(value);
        }
      }
      return out;
    }

    void start() {
      producer = Thread.ofPlatform().name("chaos-producer").start(this::produce);
      consumer = Thread.ofPlatform().name("chaos-consumer").start(this::consume);
    }

    private void produce() {
      try (KafkaProducer<String, String> p = ChildServer.idempotentProducer(bootstrap)) {
        for (int i = 0; producing.get(); i++) {
          boolean table = i % 4 == 3;
          String topic = table ? TABLE_TOPIC : TOPIC;
          String value = topic + "-" + i;
          p.send(new ProducerRecord<>(topic, i % (table ? TABLE_PARTITIONS : PARTITIONS), null, value), (m, e) -> {
            if (e != null) {
              failures.add("send " + value + ": " + e);
            } else {
              acked.put(value, new Position(m.partition(), m.offset()));
            }
          });
          if (i % 100 == 99) {
            p.flush();
            Thread.sleep(20);
          }
        }
        p.flush();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (RuntimeException e) {
        failures.add("producer: " + e);
      }
    }

    private void consume() {
      Properties props = new Properties();
      props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
      props.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
      props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
      props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
      try (KafkaConsumer<String, String> c = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
        c.subscribe(List.of(TOPIC));
        while (consuming.get()) {
          Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
          for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
            Position at = new Position(r.partition(), r.offset());
            Position before = consumed.put(r.value(), at);
            if (before != null && !before.equals(at)) {
              failures.add(r.value() + " consumed at " + before + " and at " + at);
            }
            next.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
          }
          if (next.isEmpty()) {
            continue;
          }
          try {
            c.commitSync(next, Duration.ofSeconds(30));
            c.committed(c.assignment(), Duration.ofSeconds(30)).forEach((tp, o) -> {
              if (o != null) {
                Long prev = committed.put(tp, o.offset());
                if (prev != null && o.offset() < prev) {
                  failures.add("committed offset of " + tp + " went back from " + prev + " to " + o.offset());
                }
              }
            });
          } catch (RetriableException e) {
            // the coordinator moved; the next commit covers these offsets
          }
        }
      } catch (RuntimeException e) {
        failures.add("consumer: " + e);
      }
    }

    void stopProducing() throws InterruptedException {
      producing.set(false);
      producer.join(TimeUnit.MINUTES.toMillis(2));
    }

    void stop() throws InterruptedException {
      stopProducing();
      consuming.set(false);
      consumer.join(TimeUnit.MINUTES.toMillis(2));
    }
  }
}
