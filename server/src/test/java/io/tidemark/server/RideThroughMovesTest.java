package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.server.TableFiles.Position;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.iceberg.data.Record;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: what runs on top of a partition rides through its moves. Three nodes as child JVMs (the
 * run's {@link SharedCluster}, healed before each test).
 *
 * <ul>
 *   <li>Table topics: a table topic's coordinator follows its partition 0 and its workers follow
 *       their partitions. An idempotent acks=all producer writes to a 4-partition table topic
 *       (commit every second) while partition 0 and random other partitions move, one move every
 *       few commit rounds (2 moves by default, 20 with tidemark.test.scale=full), and the control
 *       topic's partition moves once. Afterwards the Iceberg table, read with Iceberg's generic
 *       reader, equals the topic exactly: one row per record at its partition and offset with its
 *       value; every acknowledged record is among them. The seed is printed.
 *   <li>kcat (librdkafka) produces with idempotence and acks=all and consumes in a group while
 *       every partition of its topic and the group's offsets partition move twice; both see only
 *       retriable errors, every record is in the log once, at dense offsets, and consumed once.
 *       CI installs kcat; where it is missing outside CI that test is skipped, in CI it fails.
 *   <li>Kafka's {@code kafka-reassign-partitions --cancel}: a move started with --execute and
 *       cancelled goes back to the partition's broker, is no longer listed, and the partition
 *       still takes produce there. The target is paused (SIGSTOP) between --execute and --cancel,
 *       so that the move cannot complete before the cancel arrives.
 * </ul>
 */
@ExtendWith(SharedCluster.class)
class RideThroughMovesTest {

  private static final String GROUP = "kcat-movers";
  private static final String TABLE_TOPIC = "moved_orders";
  private static final int TABLE_PARTITIONS = 4;
  private static final String CONTROL = io.tidemark.table.control.ControlLog.TOPIC;
  @TempDir static Path root;
  private static ChildCluster cluster;
  private static Admin admin;

  @BeforeAll
  static void start() {
    cluster = SharedCluster.cluster();
    admin = cluster.admin();
  }

  @AfterAll
  static void stop() {
    if (admin != null) {
      admin.close();
    }
  }

  @Test
  void kcatProducesAndConsumesThroughMoves() throws Exception {
    String kcat = findKcat();
    if (kcat == null) {
      if (System.getenv("CI") != null) {
        throw new AssertionError("kcat is not installed; .ci/run installs it with apt-get");
      }
      Assumptions.abort("kcat not installed (apt-get install kcat)");
    }
    String topic = "kcat-moving";
    int partitions = 3;
    admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(2, TimeUnit.MINUTES);
    PartitionMoveTest.withLeaders(admin, topic, partitions);
    Path produced = root.resolve("kcat-produced.txt");
    Path producerErr = root.resolve("kcat-producer.err");
    Path consumed = root.resolve("kcat-consumed.txt");
    Path consumerErr = root.resolve("kcat-consumer.err");
    // delivery reports (-D-less: kcat prints nothing per message), so the acknowledged offsets come from the log itself
    Process producer = new ProcessBuilder(kcat, "-P", "-b", cluster.bootstrapAll(), "-t", topic, "-K", ":",
        "-X", "enable.idempotence=true", "-X", "acks=all", "-X", "linger.ms=5", "-X", "message.timeout.ms=120000")
        .redirectOutput(produced.toFile()).redirectError(producerErr.toFile()).start();
    Process consumer = new ProcessBuilder(kcat, "-C", "-b", cluster.bootstrapAll(), "-G", GROUP,
        "-X", "auto.offset.reset=earliest", "-X", "auto.commit.interval.ms=200",
        "-u", "-f", "%p %o %s\\n", topic)
        .redirectOutput(consumed.toFile()).redirectError(consumerErr.toFile()).start();
    try {
      int sent = 0;
      try (OutputStream in = producer.getOutputStream()) {
        sent = write(in, sent, 500);
        TopicPartition offsets = new TopicPartition("__consumer_offsets",
            Math.floorMod(GROUP.hashCode(), PartitionMoveTest.withLeaders(admin, "__consumer_offsets", 1).partitions().size()));
        for (int round = 0; round < 2; round++) {
          Map<TopicPartition, Integer> targets = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
          for (TopicPartitionInfo p : PartitionMoveTest.withLeaders(admin, topic, partitions).partitions()) {
            targets.put(new TopicPartition(topic, p.partition()), p.leader().id() % 3 + 1);
          }
          int offsetsLeader = PartitionMoveTest.withLeaders(admin, offsets.topic(), 1).partitions().get(offsets.partition())
              .leader().id();
          targets.put(offsets, offsetsLeader % 3 + 1);
          Map<TopicPartition, Optional<NewPartitionReassignment>> plan = new HashMap<>();
          targets.forEach((tp, node) -> plan.put(tp, Optional.of(new NewPartitionReassignment(List.of(node)))));
          admin.alterPartitionReassignments(plan).all().get(1, TimeUnit.MINUTES);
          // kcat keeps writing while the partitions move
          long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
          while (System.nanoTime() < until) {
            sent = write(in, sent, 50);
            Thread.sleep(20);
          }
          await().atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofMillis(500))
              .until(() -> admin.listPartitionReassignments().reassignments().get(1, TimeUnit.MINUTES).isEmpty());
          System.out.println("RideThroughMovesTest: round " + round + " moved " + targets + ", " + sent + " written");
        }
        sent = write(in, sent, 500);
      }
      assertThat(producer.waitFor(3, TimeUnit.MINUTES)).as("kcat producer exits after its input").isTrue();
      String producerLog = Files.readString(producerErr);
      assertThat(producer.exitValue()).as("kcat producer: %s", producerLog).isZero();
      assertThat(producerLog).as("kcat producer errors").doesNotContainIgnoringCase("failed").doesNotContain("ERROR");
      int total = sent;
      // the log holds every record once, at dense offsets (idempotence kept across the moves)
      Map<TableFiles.Position, String> log = TableFiles.readLog(cluster.bootstrapAll(), topic, partitions);
      assertThat(new HashSet<>(log.values())).as("every record in the log").hasSize(total).hasSize(log.size());
      try {
        await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(500))
            .until(() -> Files.readAllLines(consumed).size() >= total);
      } catch (org.awaitility.core.ConditionTimeoutException e) {
        Map<Integer, Long> lastByPartition = new TreeMap<>();
        for (String line : Files.readAllLines(consumed)) {
          String[] f = line.split(" ", 3);
          lastByPartition.merge(Integer.parseInt(f[0]), Long.parseLong(f[1]), Math::max);
        }
        throw new AssertionError("kcat consumed " + Files.readAllLines(consumed).size() + " of " + total + ", last offsets "
            + lastByPartition + "; it said: " + Files.readString(consumerErr), e);
      }
      Map<TableFiles.Position, String> read = new HashMap<>();
      for (String line : Files.readAllLines(consumed)) {
        String[] f = line.split(" ", 3);
        assertThat(read.put(new TableFiles.Position(Integer.parseInt(f[0]), Long.parseLong(f[1])), f[2]))
            .as("consumed twice: %s", line).isNull();
      }
      assertThat(read).as("kcat consumed the log exactly").isEqualTo(log);
      String consumerLog = Files.readString(consumerErr);
      assertThat(consumerLog).as("kcat consumer errors").doesNotContain("ERROR");
      System.out.println("RideThroughMovesTest: kcat wrote " + total + ", consumed " + read.size()
          + "; producer said: " + producerLog.strip() + "; consumer said: " + consumerLog.strip());
    } finally {
      producer.destroyForcibly();
      consumer.destroyForcibly();
      producer.waitFor(30, TimeUnit.SECONDS);
      consumer.waitFor(30, TimeUnit.SECONDS);
    }
  }

  private static int write(OutputStream in, int from, int count) throws IOException {
    StringBuilder lines = new StringBuilder();
    for (int i = from; i < from + count; i++) {
      lines.append('k').append(i).append(":kv-").append(i).append('\n');
    }
    in.write(lines.toString().getBytes(StandardCharsets.UTF_8));
    in.flush();
    return from + count;
  }

  @Test
  void kafkasToolCancelsARunningMove() throws Exception {
    String topic = "move-cancelled";
    admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(2, TimeUnit.MINUTES);
    TopicPartition tp = new TopicPartition(topic, 0);
    Path plan = root.resolve("cancel-plan.json");
    boolean cancelledOne = false;
    for (int attempt = 0; attempt < 8 && !cancelledOne; attempt++) {
      await().atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofMillis(500))
          .until(() -> admin.listPartitionReassignments(Set.of(tp)).reassignments().get(1, TimeUnit.MINUTES).isEmpty());
      int source = PartitionMoveTest.withLeaders(admin, topic, 1).partitions().get(0).leader().id();
      int quorumLeader = cluster.controllerLeader();
      // the target, paused, cannot open the partition: the move stays in progress until the cancel (not the
      // quorum leader where there is a choice, so that the controller keeps answering)
      int target = source % 3 + 1 == quorumLeader ? (source + 1) % 3 + 1 : source % 3 + 1;
      Files.writeString(plan, PartitionMoveTest.planJson(Map.of(tp, target)));
      java.util.concurrent.CompletableFuture<String> cancelling;
      cluster.pause(target);
      try (Admin viaSource = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap(source)))) {
        assertThat(PartitionMoveTest.reassignTool("--bootstrap-server", cluster.bootstrap(source), "--reassignment-json-file",
            plan.toString(), "--execute")).contains("Successfully started partition reassignment");
        // after the cancel the tool clears throttles on every broker, the paused one too: it is resumed as soon as
        // the cancel took effect
        cancelling = java.util.concurrent.CompletableFuture.supplyAsync(() -> PartitionMoveTest.reassignTool(
            "--bootstrap-server", cluster.bootstrap(source), "--reassignment-json-file", plan.toString(), "--cancel"));
        await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
            .until(() -> cancelling.isDone()
                || viaSource.listPartitionReassignments(Set.of(tp)).reassignments().get(30, TimeUnit.SECONDS).isEmpty());
      } finally {
        cluster.resume(target);
      }
      String cancel = cancelling.get(3, TimeUnit.MINUTES);
      System.out.println("RideThroughMovesTest: cancel of a move " + source + " -> " + target + " printed: " + cancel.strip());
      assertThat(admin.listPartitionReassignments(Set.of(tp)).reassignments().get(1, TimeUnit.MINUTES))
          .as("no reassignment listed after --cancel").isEmpty();
      Map<TopicPartition, PartitionReassignment> none = admin.listPartitionReassignments().reassignments()
          .get(1, TimeUnit.MINUTES);
      assertThat(none).doesNotContainKey(tp);
      int leader = await().atMost(Duration.ofMinutes(1)).until(
          () -> PartitionMoveTest.withLeaders(admin, topic, 1).partitions().get(0), p -> p.leader() != null).leader().id();
      if (cancel.contains("Successfully cancelled partition reassignment")) {
        cancelledOne = true;
        assertThat(leader).as("a cancelled move goes back to the broker it left").isEqualTo(source);
        assertThat(PartitionMoveTest.withLeaders(admin, topic, 1).partitions().get(0).replicas())
            .extracting(org.apache.kafka.common.Node::id).containsExactly(source);
      } else {
        assertThat(leader).as("a move completed before the cancel stays").isEqualTo(target);
      }
      // the partition takes produce where it is now
      try (var producer = ChildServer.idempotentProducer(cluster.bootstrapAll())) {
        assertThat(producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, 0, null, "after-" + attempt))
            .get(1, TimeUnit.MINUTES).partition()).isZero();
      }
    }
    assertThat(cancelledOne).as("--cancel found a move in progress in one of 8 attempts").isTrue();
  }

  @Test
  void tableEqualsTheLogExactlyOnceAcrossMoves() throws Exception {
    int moves = "full".equals(System.getProperty("tidemark.test.scale")) ? 20 : 2;
    long seed = System.nanoTime();
    System.out.println("RideThroughMovesTest seed " + seed + ", " + moves + " moves");
    SplittableRandom random = new SplittableRandom(seed);
    {
      admin.createTopics(List.of(new NewTopic(TABLE_TOPIC, TABLE_PARTITIONS, (short) 1).configs(Map.of("table.topic.enable", "true",
          "table.topic.commit.interval.ms", "1000", "table.topic.convert.value.type", "string"))))
          .all().get(2, TimeUnit.MINUTES);
      PartitionMoveTest.withLeaders(admin, TABLE_TOPIC, TABLE_PARTITIONS);
      ClusterLoad producing = new ClusterLoad(cluster.bootstrapAll(), TABLE_TOPIC, TABLE_PARTITIONS);
      await().atMost(Duration.ofMinutes(2)).until(() -> !tableRows().isEmpty());
      for (int i = 0; i < moves; i++) {
        awaitNoReassignment();
        // every other move is partition 0's, which carries the coordinator
        int partition = i % 2 == 0 ? 0 : 1 + random.nextInt(TABLE_PARTITIONS - 1);
        TopicPartitionInfo now = PartitionMoveTest.withLeaders(admin, TABLE_TOPIC, TABLE_PARTITIONS).partitions().get(partition);
        int target = (now.leader().id() + random.nextInt(2)) % 3 + 1;
        int rowsBefore = tableRows().size();
        admin.alterPartitionReassignments(Map.of(new TopicPartition(TABLE_TOPIC, partition),
            Optional.of(new NewPartitionReassignment(List.of(target))))).all().get(1, TimeUnit.MINUTES);
        await().atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofMillis(200)).until(() -> {
          TopicPartitionInfo p = describe(admin).partitions().get(partition);
          return p.leader() != null && p.leader().id() == target;
        });
        System.out.println("RideThroughMovesTest move " + i + ": partition " + partition + " from " + now.leader().id() + " to "
            + target + ", " + producing.acked.size() + " acknowledged, " + rowsBefore + " rows");
        // the table keeps landing after the move before the next one
        await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(500))
            .until(() -> tableRows().size() > rowsBefore);
        if (i == 1) {
          // the control topic the coordinators and workers talk through moves too
          awaitNoReassignment();
          int controlLeader = PartitionMoveTest.withLeaders(admin, CONTROL, 1).partitions().get(0).leader().id();
          int controlTarget = controlLeader % 3 + 1;
          admin.alterPartitionReassignments(Map.of(new TopicPartition(CONTROL, 0),
              Optional.of(new NewPartitionReassignment(List.of(controlTarget))))).all().get(1, TimeUnit.MINUTES);
          await().atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofMillis(200)).until(() ->
              PartitionMoveTest.withLeaders(admin, CONTROL, 1).partitions().get(0).leader().id() == controlTarget);
          int rowsThen = tableRows().size();
          System.out.println("RideThroughMovesTest: " + CONTROL + " moved from " + controlLeader + " to " + controlTarget);
          await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(500))
              .until(() -> tableRows().size() > rowsThen);
        }
      }
      producing.close();
      assertThat(producing.failures).as("producer failures").isEmpty();
      Map<Position, String> log = TableFiles.readLog(cluster.bootstrapAll(), TABLE_TOPIC, TABLE_PARTITIONS);
      await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1))
          .until(() -> tableRows().size() >= log.size());
      Map<Position, String> table = TableFiles.byPosition(tableRows(), "seed " + seed);
      System.out.println("RideThroughMovesTest: " + producing.acked.size() + " acknowledged, " + log.size() + " in the topic, "
          + table.size() + " rows after " + moves + " moves");
      assertThat(table).as("the table holds exactly the topic's records (seed %d)", seed).isEqualTo(log);
      producing.acked.forEach((value, at) -> assertThat(table.get(at))
          .as("acknowledged %s in the table at %s (seed %d)", value, at, seed).isEqualTo(value));
    }
  }

  private List<Record> tableRows() {
    return TableFiles.rows(cluster.catalogDb(), cluster.objects(), TABLE_TOPIC);
  }

  private static TopicDescription describe(Admin admin) throws Exception {
    return admin.describeTopics(List.of(TABLE_TOPIC)).allTopicNames().get(1, TimeUnit.MINUTES).get(TABLE_TOPIC);
  }


  private static void awaitNoReassignment() {
    await().atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofMillis(200))
        .until(() -> admin.listPartitionReassignments().reassignments().get(1, TimeUnit.MINUTES).isEmpty());
  }

  private static String findKcat() {
    for (String name : List.of("kcat", "kafkacat")) {
      for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
        File f = new File(dir, name);
        if (f.canExecute()) {
          return f.getPath();
        }
      }
    }
    return null;
  }
}
