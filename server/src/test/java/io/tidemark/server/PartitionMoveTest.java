package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.common.errors.NoReassignmentInProgressException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.utils.internals.Exit;
import org.apache.kafka.tools.reassign.ReassignPartitionsCommand;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Moving partitions between the brokers of a three-node cluster (child JVMs: the run's {@link
 * SharedCluster}) with Kafka's own
 * {@code kafka-reassign-partitions} (--execute, --verify) and the Admin API, while an idempotent
 * acks=all producer and a consumer group keep running: every partition of the topic and the
 * group's {@code __consumer_offsets} partition move, and the web console of a node (in Chromium) shows
 * every node's load, the finished moves and a table topic run by all three nodes; bad requests get Kafka's errors; a preferred
 * election moves leadership to the first replica; a stopping broker hands its partitions over first
 * (controlled shutdown) and, back, leads nothing until a move. Afterwards every acknowledged record is read
 * exactly once at its acknowledged offset, offsets are dense, and the group's committed offsets
 * never went back. Reassignments that leave a partition on its leader, or move it away and back before the
 * leader looked, keep it served at the leader epoch clients see.
 */
@ExtendWith(SharedCluster.class)
class PartitionMoveTest {

  private static final String TOPIC = "moving";
  private static final int PARTITIONS = 6;
  private static final String GROUP = "movers";
  /** A table topic whose partitions the three nodes lead: the console's table page shows it on every node. */
  private static final String TABLE_TOPIC = "console-table";
  private static final int TABLE_ROWS = 12;
  @TempDir Path root;
  private final ChildCluster cluster = SharedCluster.cluster();

  @Test
  void partitionsMoveUnderLoadWithKafkasToolAndLoseNothing() throws Exception {
    // Goal: moves are metadata changes that clients ride through with retriable errors only.
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapAll()))) {
      admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1), new NewTopic(TABLE_TOPIC, 3, (short) 1)
          .configs(Map.of("table.topic.enable", "true", "table.topic.commit.interval.ms", "1000",
              "table.topic.convert.value.type", "string")))).all().get(2, TimeUnit.MINUTES);
      try (KafkaProducer<String, String> rows = new KafkaProducer<>(Map.of("bootstrap.servers", cluster.bootstrapAll()),
          new org.apache.kafka.common.serialization.StringSerializer(), new org.apache.kafka.common.serialization.StringSerializer())) {
        for (int i = 0; i < TABLE_ROWS; i++) {
          rows.send(new ProducerRecord<>(TABLE_TOPIC, i % 3, null, "row-" + i));
        }
        rows.flush();
      }
      withLeaders(admin, TOPIC, PARTITIONS);
      ClusterLoad load = new ClusterLoad(cluster.bootstrapAll(), Map.of(TOPIC, PARTITIONS), GROUP, List.of(TOPIC));
      await().atMost(Duration.ofMinutes(2)).until(() -> load.acked.size() > 200 && !load.committed.isEmpty());

      // every partition of the topic, and the group's offsets partition, moves to the next broker
      TopicPartition offsets = offsetsPartition(admin);
      Map<TopicPartition, Integer> targets = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
      for (TopicPartitionInfo p : withLeaders(admin, TOPIC, PARTITIONS).partitions()) {
        targets.put(new TopicPartition(TOPIC, p.partition()), p.leader().id() % 3 + 1);
      }
      int offsetsLeader = withLeaders(admin, offsets.topic(), 0).partitions().get(offsets.partition()).leader().id();
      targets.put(offsets, offsetsLeader % 3 + 1);
      Path plan = root.resolve("plan.json");
      Files.writeString(plan, planJson(targets));
      String executed = reassignTool("--bootstrap-server", cluster.bootstrap(1), "--reassignment-json-file",
          plan.toString(), "--execute");
      assertThat(executed).contains("Successfully started partition reassignment");
      await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(500)).untilAsserted(() ->
          assertThat(reassignTool("--bootstrap-server", cluster.bootstrap(2), "--reassignment-json-file",
              plan.toString(), "--verify")).doesNotContain("still in progress").contains("is completed"));
      for (Map.Entry<TopicPartition, Integer> e : targets.entrySet()) {
        TopicPartitionInfo now = withLeaders(admin, e.getKey().topic(), 0).partitions().get(e.getKey().partition());
        assertThat(now.leader().id()).as("leader of %s", e.getKey()).isEqualTo(e.getValue());
        assertThat(now.replicas()).extracting(Node::id).containsExactly(e.getValue());
      }
      assertThat(admin.listPartitionReassignments().reassignments().get(1, TimeUnit.MINUTES)).isEmpty();
      assertThat(reassignTool("--bootstrap-server", cluster.bootstrap(3), "--list"))
          .contains("No partition reassignments found");
      consoleShowsEveryNodesLoadAndTheFinishedMove(targets.get(new TopicPartition(TOPIC, 0)));

      // bad requests get Kafka's errors and change nothing
      TopicPartition first = new TopicPartition(TOPIC, 0);
      int leader = withLeaders(admin, TOPIC, PARTITIONS).partitions().get(0).leader().id();
      assertThat(admin.alterPartitionReassignments(Map.of(first, Optional.of(new NewPartitionReassignment(List.of(99)))))
          .all()).failsWithin(Duration.ofMinutes(1)).withThrowableThat()
          .withCauseInstanceOf(InvalidReplicaAssignmentException.class);
      assertThat(admin.alterPartitionReassignments(Map.of(new TopicPartition(TOPIC, 77),
          Optional.of(new NewPartitionReassignment(List.of(1)))))
          .all()).failsWithin(Duration.ofMinutes(1)).withThrowableThat()
          .withCauseInstanceOf(UnknownTopicOrPartitionException.class);
      assertThat(admin.alterPartitionReassignments(Map.of(first, Optional.empty())).all())
          .failsWithin(Duration.ofMinutes(1)).withThrowableThat().withCauseInstanceOf(NoReassignmentInProgressException.class);
      assertThat(withLeaders(admin, TOPIC, PARTITIONS).partitions().get(0).leader().id()).isEqualTo(leader);

      // a second replica ahead of the leader: leadership stays until a preferred election moves it there
      int preferred = leader % 3 + 1;
      admin.alterPartitionReassignments(Map.of(first, Optional.of(new NewPartitionReassignment(List.of(preferred, leader)))))
          .all().get(1, TimeUnit.MINUTES);
      assertThat(withLeaders(admin, TOPIC, PARTITIONS).partitions().get(0).leader().id()).isEqualTo(leader);
      admin.electLeaders(ElectionType.PREFERRED, Set.of(first)).all().get(1, TimeUnit.MINUTES);
      await().atMost(Duration.ofMinutes(1)).until(() -> {
        TopicPartitionInfo p = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(1, TimeUnit.MINUTES).get(TOPIC)
            .partitions().get(0);
        return p.leader() != null && p.leader().id() == preferred;
      });
      assertThat(admin.electLeaders(ElectionType.PREFERRED, Set.of(first)).all()).failsWithin(Duration.ofMinutes(1))
          .withThrowableThat().withCauseInstanceOf(ElectionNotNeededException.class);

      // controlled shutdown: the stopping broker hands its partitions over before it exits; back, it leads nothing
      int stopping = withLeaders(admin, TOPIC, PARTITIONS).partitions().get(1).leader().id();
      cluster.stop(stopping);
      TopicDescription afterStop = withLeaders(admin, TOPIC, PARTITIONS);
      assertThat(afterStop.partitions()).extracting(p -> p.leader().id()).doesNotContain(stopping);
      cluster.startNode(stopping);
      cluster.awaitStarted(stopping);
      await().atMost(Duration.ofMinutes(1)).until(() -> admin.describeCluster().nodes().get(1, TimeUnit.MINUTES).size() == 3);
      assertThat(withLeaders(admin, TOPIC, PARTITIONS).partitions()).extracting(p -> p.leader().id()).doesNotContain(stopping);
      // it gets partitions again through moves
      TopicPartition back = new TopicPartition(TOPIC, 1);
      admin.alterPartitionReassignments(Map.of(back, Optional.of(new NewPartitionReassignment(List.of(stopping)))))
          .all().get(1, TimeUnit.MINUTES);
      await().atMost(Duration.ofMinutes(1)).until(() -> {
        TopicPartitionInfo p = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(1, TimeUnit.MINUTES).get(TOPIC)
            .partitions().get(1);
        return p.leader() != null && p.leader().id() == stopping;
      });

      int before = load.acked.size();
      await().atMost(Duration.ofMinutes(2)).until(() -> load.acked.size() > before + 200);
      load.stopProducing();
      load.awaitConsumedAll(TOPIC);
      load.close();
      assertThat(load.failures).as("producer or consumer failures (a committed offset going back is one)").isEmpty();
      load.checkLog(TOPIC, PARTITIONS, null);
    }
  }

  /**
   * Reassignments that leave the partition where it is served keep it served at the leader epoch the clients
   * see: {@code [L] -> [L, O] -> [L]} (the leader stays, so the epoch does), a plan naming the current broker
   * alone (nothing to do), and a move away cancelled before the leader looked, so that the leader sees the
   * partition only back, at a leader epoch two above the one it holds it at (it must reopen it). A fresh consumer
   * (its ListOffsets and Fetch carry the epoch from metadata) reads every record each time; a broker that kept the
   * partition open at the older epoch answers UNKNOWN_LEADER_EPOCH to it for ever.
   */
  @Test
  void reassignmentsThatKeepTheLeaderKeepThePartitionServed() throws Exception {
    String topic = "same-leader";
    TopicPartition tp = new TopicPartition(topic, 0);
    try (Admin admin = cluster.admin()) {
      admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(2, TimeUnit.MINUTES);
      int leader = withLeaders(admin, topic, 1).partitions().get(0).leader().id();
      int other = leader % 3 + 1;
      int sent = produce(topic, 0, 5);
      assertThat(readAll(tp)).as("records read before any reassignment").isEqualTo(sent);

      admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(leader, other)))))
          .all().get(1, TimeUnit.MINUTES);
      admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(leader)))))
          .all().get(1, TimeUnit.MINUTES);
      Path plan = root.resolve("same-leader.json");
      Files.writeString(plan, planJson(Map.of(tp, leader)));
      reassignTool("--bootstrap-server", cluster.bootstrap(other), "--reassignment-json-file", plan.toString(), "--execute");
      assertThat(reassignTool("--bootstrap-server", cluster.bootstrap(other), "--reassignment-json-file", plan.toString(),
          "--verify")).contains("is completed");
      TopicPartitionInfo kept = withLeaders(admin, topic, 1).partitions().get(0);
      assertThat(kept.leader().id()).isEqualTo(leader);
      assertThat(kept.replicas()).extracting(Node::id).containsExactly(leader);
      sent = produce(topic, sent, 5);
      assertThat(readAll(tp)).as("records read after reassignments that kept the leader").isEqualTo(sent);

      // away and back before the leader looks: while the leader's topic lifecycle (which runs topic operations and
      // its look at the assignment one after the other) creates a topic of many partitions, another broker moves the
      // partition away and cancels the move; the leader then finds it led here at a leader epoch two above its own
      boolean reopened = false;
      List<String> blockers = new ArrayList<>();
      for (int attempt = 0; attempt < 4 && !reopened; attempt++) {
        long mark = cluster.logMark(leader);
        try (Admin viaLeader = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap(leader)));
            Admin viaOther = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap(other)))) {
          viaLeader.describeCluster().nodes().get(1, TimeUnit.MINUTES);
          viaOther.describeCluster().nodes().get(1, TimeUnit.MINUTES);
          String blocker = topic + "-blocker-" + attempt;
          blockers.add(blocker);
          var creating = viaLeader.createTopics(List.of(new NewTopic(blocker, 24, (short) 1))).all();
          Thread.sleep(50); // lets the creation reach the leader first (the moves below cost two metadata writes)
          viaOther.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(other)))))
              .all().get(1, TimeUnit.MINUTES);
          try {
            viaOther.alterPartitionReassignments(Map.of(tp, Optional.empty())).all().get(1, TimeUnit.MINUTES);
          } catch (java.util.concurrent.ExecutionException e) {
            assertThat(e).hasCauseInstanceOf(NoReassignmentInProgressException.class); // the move finished first
          }
          creating.get(2, TimeUnit.MINUTES);
        }
        int now = withLeaders(admin, topic, 1).partitions().get(0).leader().id();
        sent = produce(topic, sent, 5);
        assertThat(readAll(tp)).as("records read after a move %s -> %s and its cancel", leader, other).isEqualTo(sent);
        reopened = now == leader && cluster.logSince(leader, mark).contains("reopening it at the new epoch");
        if (now != leader) { // the move won: back for the next attempt
          admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(leader)))))
              .all().get(1, TimeUnit.MINUTES);
          awaitLedBy(admin, topic, leader);
          await().atMost(Duration.ofMinutes(1)).until(() -> admin.listPartitionReassignments(Set.of(tp)).reassignments()
              .get(1, TimeUnit.MINUTES).isEmpty());
        }
      }
      admin.deleteTopics(blockers).all().get(1, TimeUnit.MINUTES);
      assertThat(reopened).as("in one of 4 attempts the leader saw its partition only back, at a newer epoch").isTrue();
    }
  }

  private static void awaitLedBy(Admin admin, String topic, int leader) {
    await().atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofMillis(200)).until(() -> {
      TopicPartitionInfo p = admin.describeTopics(List.of(topic)).allTopicNames().get(1, TimeUnit.MINUTES).get(topic)
          .partitions().get(0);
      return p.leader() != null && p.leader().id() == leader;
    });
  }

  /** Sends {@code count} records to partition 0 of {@code topic} (acks=all, idempotent); returns {@code from + count}. */
  private int produce(String topic, int from, int count) throws Exception {
    try (var producer = ChildServer.idempotentProducer(cluster.bootstrapAll())) {
      for (int i = from; i < from + count; i++) {
        producer.send(new ProducerRecord<>(topic, 0, null, "r-" + i)).get(1, TimeUnit.MINUTES);
      }
    }
    return from + count;
  }

  /**
   * How many records a fresh consumer reads from the beginning of {@code tp} until it has read to the end offset it
   * found; fails when it cannot get there within a minute (a partition served at another leader epoch than the
   * metadata's answers every ListOffsets and Fetch with an epoch error).
   */
  private int readAll(TopicPartition tp) {
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapAll());
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
      consumer.assign(List.of(tp));
      long end = consumer.endOffsets(List.of(tp), Duration.ofMinutes(1)).get(tp);
      consumer.seekToBeginning(List.of(tp));
      int[] read = {0};
      await().atMost(Duration.ofMinutes(1)).until(() -> {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          assertThat(r.offset()).isEqualTo(read[0]);
          read[0]++;
        }
        return consumer.position(tp) >= end;
      });
      return read[0];
    }
  }

  /**
   * The console of a node that took no part in the move of partition 0 shows, in a real browser
   * ({@code console-cluster-check.mjs}), every node with the load it reported to the controller leader (the
   * producer keeps every node's bytes in above zero), and that move among the finished ones. Skipped where
   * no browser is installed (outside CI).
   */
  private void consoleShowsEveryNodesLoadAndTheFinishedMove(int to) throws Exception {
    String node = ConsoleBrowser.nodeIfAvailable();
    if (node == null) {
      return;
    }
    int self = to % 3 + 1;
    // the table topic's commits reach the shared catalog (the browser then checks that the page shows them)
    java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
    await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
      String body = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:"
          + cluster.adminPort(self) + "/api/console/tables")).build(), java.net.http.HttpResponse.BodyHandlers.ofString()).body();
      // the shared cluster may hold other classes' table topics too: this one is looked up by name
      com.fasterxml.jackson.databind.JsonNode table = com.fasterxml.jackson.databind.node.MissingNode.getInstance();
      for (com.fasterxml.jackson.databind.JsonNode t : new com.fasterxml.jackson.databind.ObjectMapper().readTree(body)
          .path("tables")) {
        if (TABLE_TOPIC.equals(t.path("topic").asText())) {
          table = t;
        }
      }
      assertThat(table.path("topic").asText()).as(body).isEqualTo(TABLE_TOPIC);
      assertThat(table.path("rows").asLong()).as(body).isEqualTo(TABLE_ROWS);
    });
    Map<String, Object> want = new HashMap<>();
    want.put("table", TABLE_TOPIC);
    want.put("tableRows", TABLE_ROWS);
    want.put("self", self);
    want.put("nodes", List.of(1, 2, 3));
    want.put("busyNode", to);
    want.put("topic", TOPIC);
    want.put("partition", 0);
    want.put("from", List.of((to + 1) % 3 + 1)); // every partition moved from its leader n to n % 3 + 1
    want.put("to", List.of(to));
    long started = System.nanoTime();
    Object timings = ConsoleBrowser.run(node, "console-cluster-check.mjs", cluster.adminPort(self), want,
        (line, stdin) -> { });
    System.out.println("cluster console browser check took " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)
        + " ms: " + timings);
  }

  private static TopicPartition offsetsPartition(Admin admin) throws Exception {
    int n = admin.describeTopics(List.of("__consumer_offsets")).allTopicNames().get(1, TimeUnit.MINUTES)
        .get("__consumer_offsets").partitions().size();
    return new TopicPartition("__consumer_offsets", Math.floorMod(GROUP.hashCode(), n));
  }

  static String planJson(Map<TopicPartition, Integer> targets) {
    StringBuilder sb = new StringBuilder("{\"version\":1,\"partitions\":[");
    String sep = "";
    for (Map.Entry<TopicPartition, Integer> e : targets.entrySet()) {
      sb.append(sep).append("{\"topic\":\"").append(e.getKey().topic()).append("\",\"partition\":")
          .append(e.getKey().partition()).append(",\"replicas\":[").append(e.getValue()).append("]}");
      sep = ",";
    }
    return sb.append("]}").toString();
  }

  /** Runs Kafka's kafka-reassign-partitions in this JVM and returns what it printed; fails when it exits non-zero. */
  static synchronized String reassignTool(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream saved = System.out;
    int[] code = {0};
    Exit.setExitProcedure((status, message) -> {
      code[0] = status;
      throw new ToolExited();
    });
    try {
      System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
      ReassignPartitionsCommand.main(args);
    } catch (ToolExited ignored) {
      // the tool's exit, with its status in code[0]
    } finally {
      System.setOut(saved);
      Exit.resetExitProcedure();
    }
    String printed = out.toString(StandardCharsets.UTF_8);
    assertThat(code[0]).as("kafka-reassign-partitions %s printed:%n%s", String.join(" ", args), printed).isZero();
    return printed;
  }

  private static final class ToolExited extends RuntimeException {
    ToolExited() {
      super(null, null, false, false);
    }
  }

  /** Describes {@code topic} until it has at least {@code partitions} partitions, each with a leader. */
  static TopicDescription withLeaders(Admin admin, String topic, int partitions) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    while (true) {
      TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(1, TimeUnit.MINUTES).get(topic);
      if (d.partitions().size() >= partitions && d.partitions().stream().allMatch(p -> p.leader() != null)) {
        return d;
      }
      assertThat(System.nanoTime()).as("leaders of %s", d).isLessThan(deadline);
      Thread.sleep(200);
    }
  }
}
