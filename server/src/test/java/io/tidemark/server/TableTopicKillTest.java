package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.server.storage.EmbeddedStorage;
import io.tidemark.server.TableFiles.Position;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: kill -9 of a Tidemark process (child JVM) at random points while an idempotent producer
 * writes to a 4-partition table topic committing every second: every other kill lands at a random
 * time after start (often inside the first, catch-up round), the others at a random phase of the
 * commit cycle once the child has committed; after every kill the process restarts on the same data directory. At the
 * end the Iceberg table, read with Iceberg's generic reader, holds every record of the topic
 * exactly once, at its partition and offset, and every acknowledged record is among them. 10 kills
 * with tidemark.test.scale=full, 3 by default. The seed is printed.
 */
class TableTopicKillTest {

  private static final Pattern KAFKA_PORT = Pattern.compile("broker \\d+ of cluster \\S+ started on port (\\d+)");
  /** Logged by a restarted coordinator for the round the kill interrupted. */
  private static final Pattern UNFINISHED_ROUND = Pattern.compile("round \\S+ found unfinished");
  /** Child log lines the test follows: commits, recoveries, and trouble worth printing. */
  private static final Pattern TROUBLE = Pattern.compile("round \\S+ found unfinished| ERROR |Exception|failed|Committed snapshot");
  /** Iceberg's log line for a landed snapshot. */
  private static final String COMMITTED = "Committed snapshot";
  private static final String TOPIC = "orders";
  private static final int PARTITIONS = 4;
  private static final int RECORDS_PER_MS = 2;
  private final List<Process> children = new ArrayList<>();
  private final List<TidemarkServer> servers = new ArrayList<>();
  @TempDir Path dataDir;

  @AfterEach
  void cleanUp() {
    children.forEach(Process::destroyForcibly);
    servers.forEach(TidemarkServer::close);
  }

  @Test
  void everyRecordLandsInTheTableExactlyOnceAcrossKillNine() throws Exception {
    int cycles = "full".equals(System.getProperty("tidemark.test.scale")) ? 10 : 3;
    long seed = System.nanoTime();
    System.out.println("TableTopicKillTest seed " + seed + ", " + cycles + " kills");
    SplittableRandom random = new SplittableRandom(seed);
    Map<String, Position> acked = new ConcurrentHashMap<>();
    java.util.Queue<String> unfinishedRounds = new java.util.concurrent.ConcurrentLinkedQueue<>();
    java.util.Queue<String> childLog = new java.util.concurrent.ConcurrentLinkedQueue<>();
    for (int cycle = 0; cycle < cycles; cycle++) {
      Process child = ChildServer.start(dataDir);
      children.add(child);
      String bootstrap = "127.0.0.1:" + ChildServer.portFrom(child, KAFKA_PORT, TROUBLE, childLog);
      if (cycle == 0) {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
          admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1).configs(Map.of("table.topic.enable", "true",
              "table.topic.commit.interval.ms", "1000", "table.topic.convert.value.type", "string"))))
              .all().get(60, TimeUnit.SECONDS);
        }
      }
      KafkaProducer<String, String> producer = ChildServer.idempotentProducer(bootstrap);
      // even cycles: kill at a random time after start (often during the first, catch-up round);
      // odd cycles: once the child committed a snapshot, kill at a random phase of the 1 s cycle
      boolean steady = cycle % 2 == 1;
      long killAfterMs = steady ? random.nextInt(1_500) : 1_500 + random.nextInt(7_500);
      long started = System.nanoTime();
      long deadline = steady ? Long.MAX_VALUE : started + TimeUnit.MILLISECONDS.toNanos(killAfterMs);
      int sent = 0;
      while (System.nanoTime() < deadline) {
        if (deadline == Long.MAX_VALUE && (childLog.stream().anyMatch(l -> l.contains(COMMITTED))
            || System.nanoTime() - started > TimeUnit.SECONDS.toNanos(90))) {
          deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(killAfterMs);
        }
        if (sent > TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started) * RECORDS_PER_MS) {
          Thread.sleep(1); // paced, so that the backlog each restart catches up on stays bounded
          continue;
        }
        String value = "c" + cycle + "-" + sent;
        producer.send(new ProducerRecord<>(TOPIC, sent % PARTITIONS, null, value), (metadata, error) -> {
          if (error == null) {
            acked.put(value, new Position(metadata.partition(), metadata.offset()));
          }
        });
        if (++sent % 200 == 0) {
          producer.flush(); // a small in-flight window, so that kills land between and within batches
        }
      }
      child.destroyForcibly(); // SIGKILL while producing and committing
      assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
      producer.close(Duration.ZERO);
      int commits = 0;
      for (String line = childLog.poll(); line != null; line = childLog.poll()) {
        if (UNFINISHED_ROUND.matcher(line).find()) {
          unfinishedRounds.add(line);
        } else if (line.contains(COMMITTED)) {
          commits++;
        } else {
          System.out.println("TableTopicKillTest child log: " + line);
        }
      }
      System.out.println("TableTopicKillTest cycle " + cycle + ": killed " + killAfterMs + " ms after "
          + (steady ? "its first commit" : "start") + ", " + commits + " snapshots committed by this child, " + acked.size()
          + " acknowledged so far");
    }
    assertThat(acked).as("acknowledged records").isNotEmpty();

    TidemarkServer server = Main.start(TidemarkServerTest.withPorts("--set", "data.dir=" + dataDir,
        "--set", "admin.port=0", "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (64L << 20)),
        Map.of(), new EmbeddedStorage());
    servers.add(server);
    Map<Position, String> log = TableFiles.readLog("127.0.0.1:" + server.kafkaPort().orElseThrow(), TOPIC, PARTITIONS);
    await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(2))
        .until(() -> TableFiles.rows(dataDir, TOPIC).size() >= log.size());

    Map<Position, String> table = TableFiles.byPosition(TableFiles.rows(dataDir, TOPIC), "seed " + seed);
    System.out.println("TableTopicKillTest: " + acked.size() + " acknowledged, " + log.size() + " in the topic, "
        + table.size() + " rows in the table after " + cycles + " kills; kills inside a commit round, as the restarted"
        + " coordinator found them: " + unfinishedRounds.size() + " (" + unfinishedRounds.stream().filter(l -> l.contains("landed in"))
        .count() + " had landed)");
    assertThat(table).as("the table holds exactly the topic's records (seed " + seed + ")").isEqualTo(log);
    acked.forEach((value, at) -> assertThat(table.get(at))
        .as("acknowledged record " + value + " in the table at " + at + " (seed " + seed + ")").isEqualTo(value));
  }
}
