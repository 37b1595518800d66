package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.server.TableFiles.Position;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Goal: random partition moves and {@code kill -9} of random nodes (the controller leader among
 * them) under load lose nothing and duplicate nothing. Three Tidemark nodes as child processes (the
 * run's {@link SharedCluster}); a continuous idempotent acks=all producer ({@link ClusterLoad})
 * writes to a 12-partition topic and a 4-partition table topic, a consumer group reads the
 * 12-partition topic committing after every poll.
 *
 * <p>Each cycle either moves a random partition (of either topic, the group's offsets partition or
 * the table control topic) to a random other node and waits until it serves there, or kills a node
 * with SIGKILL (the controller leader in about half of the kills), waits until every partition of
 * both topics acknowledges again, and restarts it. Checks: no failed send; every acknowledged record
 * is in the log once at its acknowledged offset and offsets are dense per partition (no duplicate
 * from the idempotent producer); the group consumed every acknowledged record at its offset and its
 * committed offsets never went back; the Iceberg table (read from the embedded catalog with
 * Iceberg's generic reader) equals the table topic exactly once.
 *
 * <p>2 cycles by default, 100 with {@code -Dtidemark.test.scale=full}, or {@code
 * -Dtidemark.chaos.cycles=N}. The seed is printed; {@code -Dtidemark.chaos.seed=S} replays its
 * choices (which partition, which node, move or kill; the timing is the machine's).
 */
@ExtendWith(SharedCluster.class)
class MoveChaosTest {

  private static final String TOPIC = "chaos";
  private static final int PARTITIONS = 12;
  private static final String TABLE_TOPIC = "chaos_table";
  private static final int TABLE_PARTITIONS = 4;
  private static final String GROUP = "chaos-group";
  private final ChildCluster cluster = SharedCluster.cluster();

  @Test
  void randomMovesAndKillsLoseAndDuplicateNothing() throws Exception {
    int cycles = Integer.getInteger("tidemark.chaos.cycles",
        "full".equals(System.getProperty("tidemark.test.scale")) ? 100 : 2);
    long seed = Long.getLong("tidemark.chaos.seed", System.nanoTime());
    String replay = "seed " + seed + " (replay: -Dtidemark.chaos.seed=" + seed + " -Dtidemark.chaos.cycles=" + cycles + ")";
    System.out.println("MoveChaosTest " + replay + ", " + cycles + " cycles");
    SplittableRandom random = new SplittableRandom(seed);
    long started = System.nanoTime();
    int kills = 0;
    int moves = 0;
    try (Admin admin = cluster.admin()) {
      admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1), new NewTopic(TABLE_TOPIC, TABLE_PARTITIONS, (short) 1)
          .configs(Map.of("table.topic.enable", "true", "table.topic.commit.interval.ms", "1000",
              "table.topic.convert.value.type", "string")))).all().get(2, TimeUnit.MINUTES);
      PartitionMoveTest.withLeaders(admin, TOPIC, PARTITIONS);
      PartitionMoveTest.withLeaders(admin, TABLE_TOPIC, TABLE_PARTITIONS);
      List<TopicPartition> loaded = new ArrayList<>();
      for (int p = 0; p < PARTITIONS; p++) {
        loaded.add(new TopicPartition(TOPIC, p));
      }
      for (int p = 0; p < TABLE_PARTITIONS; p++) {
        loaded.add(new TopicPartition(TABLE_TOPIC, p));
      }
      ClusterLoad load = new ClusterLoad(cluster.bootstrapAll(), Map.of(TOPIC, PARTITIONS, TABLE_TOPIC, TABLE_PARTITIONS),
          GROUP, List.of(TOPIC));
      try {
        await().atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(200))
            .until(() -> load.acked.size() > 500 && !load.committed.isEmpty());
        List<TopicPartition> movable = new ArrayList<>(loaded);
        int offsetsPartitions = PartitionMoveTest.withLeaders(admin, "__consumer_offsets", 1).partitions().size();
        movable.add(new TopicPartition("__consumer_offsets", Math.floorMod(GROUP.hashCode(), offsetsPartitions)));
        movable.add(new TopicPartition(io.tidemark.table.control.ControlLog.TOPIC, 0));
        for (int cycle = 0; cycle < cycles; cycle++) {
          long cycleStart = System.nanoTime();
          String what;
          if (random.nextInt(3) == 0) {
            boolean leader = random.nextBoolean();
            int victim = leader ? cluster.controllerLeader() : 1 + random.nextInt(3);
            cluster.kill(victim);
            long mark = load.mark();
            await("every partition acknowledges again after node " + victim + " was killed (" + replay + ")")
                .atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(50))
                .until(() -> loaded.stream().allMatch(load.againAt::containsKey));
            long served = TimeUnit.NANOSECONDS.toMillis(
                loaded.stream().mapToLong(load.againAt::get).max().orElseThrow() - mark);
            cluster.startNode(victim);
            cluster.awaitStarted(victim);
            cluster.awaitBrokers(3);
            kills++;
            what = "kill -9 of node " + victim + (leader ? " (the controller leader)" : "") + ", every partition acknowledged "
                + served + " ms later; restarted";
          } else {
            TopicPartition tp = movable.get(random.nextInt(movable.size()));
            int hop = 1 + random.nextInt(2);
            int source = leaderOf(admin, tp);
            int target = (source - 1 + hop) % 3 + 1;
            admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(target)))))
                .all().get(2, TimeUnit.MINUTES);
            await("move of " + tp + " to " + target + " completes (" + replay + ")").atMost(Duration.ofMinutes(3))
                .pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                .until(() -> leaderOf(admin, tp) == target
                    && admin.listPartitionReassignments().reassignments().get(1, TimeUnit.MINUTES).isEmpty());
            moves++;
            what = "move of " + tp + " " + source + " -> " + target;
          }
          load.awaitMoreAcks(100);
          assertThat(load.failures).as("failures after cycle %d (%s)", cycle, replay).isEmpty();
          System.out.println("MoveChaosTest cycle " + cycle + ": " + what + "; " + load.acked.size() + " acknowledged, "
              + load.consumed.size() + " consumed; " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cycleStart) + " ms");
        }
        load.stopProducing();
        load.awaitConsumedAll(TOPIC);
      } finally {
        load.close();
      }
      assertThat(load.failures).as("producer or consumer failures (%s)", replay).isEmpty();
      load.checkLog(TOPIC, PARTITIONS, null);
      Map<Position, String> tableLog = load.checkLog(TABLE_TOPIC, TABLE_PARTITIONS, null);
      await("the table catches up with " + tableLog.size() + " records (" + replay + ")").atMost(Duration.ofMinutes(3))
          .pollInterval(Duration.ofSeconds(1))
          .until(() -> TableFiles.rows(cluster.catalogDb(), cluster.objects(), TABLE_TOPIC).size() >= tableLog.size());
      Map<Position, String> table = TableFiles.byPosition(
          TableFiles.rows(cluster.catalogDb(), cluster.objects(), TABLE_TOPIC), replay);
      assertThat(table).as("the table holds exactly the table topic's records (%s)", replay).isEqualTo(tableLog);
      System.out.println("MoveChaosTest: " + cycles + " cycles (" + moves + " moves, " + kills + " kills) in "
          + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started) + " s; " + load.acked.size() + " acknowledged, "
          + table.size() + " table rows; " + replay);
    }
  }

  private static int leaderOf(Admin admin, TopicPartition tp) throws Exception {
    TopicDescription d = PartitionMoveTest.withLeaders(admin, tp.topic(), tp.partition() + 1);
    TopicPartitionInfo p = d.partitions().get(tp.partition());
    return p.leader().id();
  }
}
