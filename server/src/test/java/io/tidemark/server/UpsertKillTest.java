package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.server.storage.EmbeddedStorage;
import io.tidemark.table.convert.KafkaColumns;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.iceberg.data.Record;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: an upsert table topic (string values keyed by id, tombstones deleting) whose Tidemark
 * process (child JVM) is killed with SIGKILL while an idempotent producer updates and deletes a
 * few hundred ids and the table commits every second: after the kills, the table read with
 * Iceberg's generic reader, and by a plain Iceberg JVM through the REST catalog, holds exactly the
 * latest value of every id whose last record is not a tombstone (the reference model, computed
 * from the topic read back), and every acknowledged record is in the topic. Format v2 or v3 (by
 * seed). 1 kill by default (after the first commit), 8 with tidemark.test.scale=full. The seed is printed.
 */
class UpsertKillTest {

  private static final Pattern KAFKA_PORT = Pattern.compile("broker \\d+ of cluster \\S+ started on port (\\d+)");
  private static final Pattern TROUBLE = Pattern.compile("round \\S+ found unfinished| ERROR |Exception|failed|Committed snapshot");
  private static final String COMMITTED = "Committed snapshot";
  private static final String TOPIC = "accounts";
  private static final int PARTITIONS = 3;
  private static final int IDS = 300;
  private final List<Process> children = new ArrayList<>();
  private final List<TidemarkServer> servers = new ArrayList<>();
  @TempDir Path dataDir;

  @AfterEach
  void cleanUp() {
    children.forEach(Process::destroyForcibly);
    servers.forEach(TidemarkServer::close);
  }

  /** Where a record is: partition and offset. */
  private record Position(int partition, long offset) {}

  /** A record read back: key and value (null for a tombstone). */
  private record Entry(String key, String value) {}

  @Test
  void theTableHoldsTheLatestValueOfEveryIdAcrossKillNine() throws Exception {
    boolean full = "full".equals(System.getProperty("tidemark.test.scale"));
    int cycles = full ? 8 : 1;
    long seed = System.nanoTime();
    SplittableRandom random = new SplittableRandom(seed);
    String formatVersion = random.nextBoolean() ? "3" : "2";
    System.out.println("UpsertKillTest seed " + seed + ", " + cycles + " kills, format v" + formatVersion);
    Map<String, Position> acked = new ConcurrentHashMap<>();
    java.util.Queue<String> childLog = new java.util.concurrent.ConcurrentLinkedQueue<>();
    for (int cycle = 0; cycle < cycles; cycle++) {
      Process child = ChildServer.start(dataDir);
      children.add(child);
      String bootstrap = "127.0.0.1:" + ChildServer.portFrom(child, KAFKA_PORT, TROUBLE, childLog);
      if (cycle == 0) {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
          admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1).configs(Map.of("table.topic.enable", "true",
              "table.topic.commit.interval.ms", "1000", "table.topic.convert.value.type", "string",
              "automq.table.topic.upsert.enable", "true", "table.topic.format.version", formatVersion))))
              .all().get(60, TimeUnit.SECONDS);
        }
      }
      KafkaProducer<String, String> producer = ChildServer.idempotentProducer(bootstrap);
      // the first kill once the child has committed (so that deletes meet rows of earlier snapshots), then at random
      boolean afterCommit = cycle == 0;
      long killAfterMs = 500 + random.nextInt(afterCommit ? 1_500 : 5_000);
      long started = System.nanoTime();
      long deadline = afterCommit ? Long.MAX_VALUE : started + TimeUnit.MILLISECONDS.toNanos(killAfterMs);
      int sent = 0;
      while (System.nanoTime() < deadline) {
        if (deadline == Long.MAX_VALUE && (childLog.stream().anyMatch(l -> l.contains(COMMITTED))
            || System.nanoTime() - started > TimeUnit.SECONDS.toNanos(90))) {
          deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(killAfterMs);
        }
        if (sent > TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started) / 4) {
          Thread.sleep(1); // about 250 records a second, so that each restart catches up quickly
          continue;
        }
        int id = random.nextInt(IDS);
        String value = random.nextInt(6) == 0 ? null : "c" + cycle + "-" + sent;
        String tag = "c" + cycle + "-" + sent;
        producer.send(new ProducerRecord<>(TOPIC, id % PARTITIONS, "k" + id, value), (metadata, error) -> {
          if (error == null) {
            acked.put(tag, new Position(metadata.partition(), metadata.offset()));
          }
        });
        if (++sent % 100 == 0) {
          producer.flush();
        }
      }
      child.destroyForcibly();
      assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
      producer.close(Duration.ZERO);
      long commits = childLog.stream().filter(l -> l.contains(COMMITTED)).count();
      childLog.stream().filter(l -> !l.contains(COMMITTED) && !l.contains("FormatModelRegistry")).forEach(l -> System.out.println("UpsertKillTest child log: " + l));
      childLog.clear();
      System.out.println("UpsertKillTest cycle " + cycle + ": killed " + killAfterMs + " ms after "
          + (afterCommit ? "its first commit" : "start") + ", " + commits + " snapshots, " + acked.size() + " acknowledged");
    }
    assertThat(acked).isNotEmpty();

    TidemarkServer server = Main.start(TidemarkServerTest.withPorts("--set", "data.dir=" + dataDir,
        "--set", "admin.port=0", "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (64L << 20)),
        Map.of(), new EmbeddedStorage());
    servers.add(server);
    Map<Position, Entry> log = readLog("127.0.0.1:" + server.kafkaPort().orElseThrow());
    acked.forEach((tag, at) -> assertThat(log).as("acknowledged record %s (seed %d)", tag, seed).containsKey(at));
    Map<String, String> model = new TreeMap<>();
    log.entrySet().stream()
        .sorted(java.util.Comparator.comparing((Map.Entry<Position, Entry> e) -> e.getKey().partition())
            .thenComparing(e -> e.getKey().offset()))
        .forEach(e -> {
          if (e.getValue().value() == null) {
            model.remove(e.getValue().key());
          } else {
            model.put(e.getValue().key(), e.getValue().value());
          }
        });
    await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(2))
        .until(() -> tableByKey(seed).equals(model));
    assertThat(tableByKey(seed)).as("the table is the latest value per id (seed %d)", seed).isEqualTo(model);

    // a plain Iceberg JVM (only Iceberg's and Hadoop's jars) reads the same state through the REST catalog
    List<String> out = IcebergStandardReaderTest.read(IcebergStandardReaderTest.readerClasspath(), "default." + TOPIC,
        Map.of("type", "rest", "uri", "http://127.0.0.1:" + server.tableRestPort().orElseThrow()));
    Map<String, String> read = new TreeMap<>();
    for (String line : out) {
      if (line.startsWith("row\t")) {
        String[] f = line.split("\t", -1);
        assertThat(read.put(f[3], f[4])).as("one row of key %s in the plain reader (seed %d)", f[3], seed).isNull();
      }
    }
    assertThat(read).as("the plain reader sees the latest value per id (seed %d)", seed).isEqualTo(model);
    System.out.println("UpsertKillTest: " + acked.size() + " acknowledged, " + log.size() + " in the topic, " + model.size()
        + " live ids, table equal after " + cycles + " kills");
  }

  /** key → value of every row of the table; a second row of a key fails. */
  private Map<String, String> tableByKey(long seed) {
    Map<String, String> out = new TreeMap<>();
    for (Record r : TableFiles.rows(dataDir, TOPIC)) {
      String key = (String) r.getField(KafkaColumns.KEY);
      assertThat(out.put(key, (String) r.getField(KafkaColumns.VALUE))).as("a second row of %s (seed %d)", key, seed).isNull();
    }
    return out;
  }

  /** Every record of the topic, by partition and offset. */
  private static Map<Position, Entry> readLog(String bootstrap) {
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    Map<Position, Entry> out = new HashMap<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
      List<TopicPartition> tps = new ArrayList<>();
      for (int p = 0; p < PARTITIONS; p++) {
        tps.add(new TopicPartition(TOPIC, p));
      }
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
      long stop = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (tps.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp)) && System.nanoTime() < stop) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
          out.put(new Position(r.partition(), r.offset()), new Entry(r.key(), r.value()));
        }
      }
      long total = ends.values().stream().mapToLong(Long::longValue).sum();
      assertThat((long) out.size()).as("read the whole topic").isEqualTo(total);
    }
    return out;
  }
}
