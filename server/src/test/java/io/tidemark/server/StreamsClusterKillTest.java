package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.broker.streams.EosApp;
import io.tidemark.broker.streams.EosOutput;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: the Kafka Streams {@code exactly_once_v2} word count of {@link StreamsNodeKillTest}
 * ({@link EosApp}) stays exact in a three-node cluster (the run's {@link SharedCluster}, child
 * JVMs) when the broker leading every partition of its input topic is killed with SIGKILL in the
 * middle of the run: its partitions (input, and whatever else it led of the copy, counts,
 * changelog, repartition, offsets and transaction state partitions) fail over to the other two
 * brokers, it is restarted, and under {@code read_committed} every input record is copied exactly
 * once and every word's running count reads 1, 2, 3, ... with nothing repeated or skipped. Before
 * each kill the input partitions are moved onto one broker, so that the kill takes all of them.
 * The application runs in this JVM and replaces a stream thread that dies of a broker error
 * (REPLACE_THREAD). 1 kill over 2,000 records by default; {@code -Dtidemark.test.scale=full}: 3
 * kills over 10,000 records.
 */
@ExtendWith(SharedCluster.class)
class StreamsClusterKillTest {

  private static final int PARTITIONS = 4;
  private final ChildCluster cluster = SharedCluster.cluster();
  @TempDir Path stateDir;

  private static boolean full() {
    return "full".equals(System.getProperty("tidemark.test.scale"));
  }

  @Test
  void exactlyOnceAcrossKillNineOfTheInputLeader() throws Exception {
    int records = full() ? 10_000 : 2_000;
    int kills = full() ? 3 : 1;
    long started = System.nanoTime();
    String bootstrap = cluster.bootstrapAll();
    try (Admin admin = cluster.admin()) {
      admin.createTopics(List.of(new NewTopic(EosApp.INPUT, PARTITIONS, (short) 1), new NewTopic(EosApp.COPY, PARTITIONS, (short) 1),
          new NewTopic(EosApp.COUNTS, PARTITIONS, (short) 1))).all().get(2, TimeUnit.MINUTES);
      for (String topic : List.of(EosApp.INPUT, EosApp.COPY, EosApp.COUNTS)) {
        PartitionMoveTest.withLeaders(admin, topic, PARTITIONS);
      }
      int victim = gatherInput(admin);
      // every input partition served before the first send (the first-batch race ClusterLoad waits out too)
      Map<TopicPartition, OffsetSpec> ends = new HashMap<>();
      inputPartitions().forEach(tp -> ends.put(tp, OffsetSpec.latest()));
      admin.listOffsets(ends).all().get(2, TimeUnit.MINUTES);

      AtomicInteger replacedThreads = new AtomicInteger();
      KafkaStreams streams = new KafkaStreams(EosApp.topology(), EosApp.config(bootstrap, stateDir));
      try {
        StreamsNodeKillTest.replaceDeadThreads(streams, replacedThreads, "StreamsClusterKillTest");
        streams.start();
        await().atMost(Duration.ofMinutes(3)).until(() -> streams.state() == KafkaStreams.State.RUNNING);
        Set<String> acked = ConcurrentHashMap.newKeySet();
        AtomicReference<Throwable> producerFailure = new AtomicReference<>();
        Thread producer = StreamsNodeKillTest.startInput(bootstrap, records, acked, producerFailure);
        for (int k = 1; k <= kills; k++) {
          if (k > 1) {
            victim = gatherInput(admin);
          }
          // kill while the application processes and commits: some output committed since the last restart
          long threshold = (long) records * k / (kills + 2);
          await().atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(200))
              .until(() -> EosOutput.endOffsets(bootstrap, EosApp.COPY, PARTITIONS, "read_committed") > threshold);
          int ackedAtKill = acked.size();
          cluster.kill(victim);
          long killed = System.nanoTime();
          int dead = victim;
          // the input partitions fail over to the two live brokers
          await("the input partitions led by a live broker after node " + dead + " was killed").atMost(Duration.ofMinutes(3))
              .pollInterval(Duration.ofMillis(200)).ignoreExceptions()
              .until(() -> FailoverTest.leaders(admin, EosApp.INPUT).values().stream().noneMatch(l -> l == dead)
                  && FailoverTest.leaders(admin, EosApp.INPUT).size() == PARTITIONS);
          long failedOver = System.nanoTime();
          cluster.startNode(victim);
          cluster.awaitStartedRestarting(victim);
          cluster.awaitBrokers(3);
          System.out.println("StreamsClusterKillTest: kill " + k + " of node " + victim + " (leading every input partition) after "
              + threshold + "+ committed copies and " + ackedAtKill + " input records acknowledged; input partitions failed over after "
              + TimeUnit.NANOSECONDS.toMillis(failedOver - killed) + " ms, node up again after "
              + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed) + " ms");
        }
        try (EosOutput output = new EosOutput(bootstrap, PARTITIONS)) {
          try {
            output.awaitTotals(records, Duration.ofMinutes(5));
          } catch (org.awaitility.core.ConditionTimeoutException e) {
            StreamsNodeKillTest.printTransactions(bootstrap);
            throw e;
          }
          producer.join(120_000);
          assertThat(producerFailure.get()).isNull();
          assertThat(acked).hasSize(records);
          long uncommitted = EosOutput.endOffsets(bootstrap, EosApp.COPY, PARTITIONS, "read_uncommitted");
          System.out.println("StreamsClusterKillTest: " + records + " input records, " + kills + " kill(s) of the input leader, "
              + uncommitted + " copy offsets in the log including aborted ones and markers, " + replacedThreads
              + " stream thread(s) replaced, application " + streams.state() + ", "
              + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started) + " s, load average " + FailoverTest.loadAverage());
          output.assertExactlyOnce(records, acked, Duration.ofSeconds(1));
        }
        assertThat(streams.state()).as("the application still runs").isIn(KafkaStreams.State.RUNNING, KafkaStreams.State.REBALANCING);
      } finally {
        // bounded: a stream thread stuck on the broker must fail the test, not hang it
        if (!streams.close(Duration.ofSeconds(60))) {
          System.out.println("StreamsClusterKillTest: the application did not close within 60 s");
        }
      }
    }
  }

  /**
   * Moves every input partition onto the live broker that leads the most of them (a move of a
   * partition it already leads is skipped) and waits until it leads all of them; returns it.
   */
  private int gatherInput(Admin admin) throws Exception {
    Map<Integer, Integer> now = FailoverTest.leaders(admin, EosApp.INPUT);
    int target = now.values().stream().collect(Collectors.groupingBy(id -> id, Collectors.counting())).entrySet().stream()
        .max(Map.Entry.<Integer, Long>comparingByValue().thenComparing(Map.Entry.comparingByKey())).orElseThrow().getKey();
    Map<TopicPartition, Optional<NewPartitionReassignment>> moves = new HashMap<>();
    now.forEach((p, leader) -> {
      if (leader != target) {
        moves.put(new TopicPartition(EosApp.INPUT, p), Optional.of(new NewPartitionReassignment(List.of(target))));
      }
    });
    if (!moves.isEmpty()) {
      admin.alterPartitionReassignments(moves).all().get(2, TimeUnit.MINUTES);
    }
    await("every input partition led by node " + target).atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(200))
        .ignoreExceptions().until(() -> {
          Map<Integer, Integer> l = FailoverTest.leaders(admin, EosApp.INPUT);
          return l.size() == PARTITIONS && l.values().stream().allMatch(id -> id == target)
              && admin.listPartitionReassignments().reassignments().get(1, TimeUnit.MINUTES).isEmpty();
        });
    return target;
  }

  private static List<TopicPartition> inputPartitions() {
    return java.util.stream.IntStream.range(0, PARTITIONS).mapToObj(p -> new TopicPartition(EosApp.INPUT, p)).toList();
  }
}
