package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.stream.testing.S3ProxyFixture;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: with the object WAL ({@code wal.type=object}, on S3 through S3Proxy), a broker killed with
 * {@code kill -9} loses nothing it acknowledged: another broker reads its WAL objects from the
 * bucket, uploads and commits what was not uploaded, and the dead broker's partitions are served
 * again while it stays dead. Three nodes as child JVMs; {@code stream.upload.interval.ms} is ten
 * minutes here, so every record the victim acknowledged is only in its WAL when it is killed.
 * Checks: each partition the victim led acknowledges again on another broker; every acknowledged
 * record is read back once at its acknowledged offset with dense offsets; a survivor logged the
 * failover of the victim as done. Full profile only ({@code -Dtidemark.test.scale=full}): its own three
 * nodes on S3Proxy take about a minute on two cores.
 */
@org.junit.jupiter.api.condition.EnabledIfSystemProperty(named = "tidemark.test.scale", matches = "full")
class ObjectWalFailoverTest {

  private static final String TOPIC = "object-wal";
  private static final int PARTITIONS = 6;
  @TempDir static Path root;
  private static S3ProxyFixture s3;
  private static ChildCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    // S3Proxy does not take the SDK's default trailing checksums
    List<String> checksums = List.of("-Daws.requestChecksumCalculation=when_required",
        "-Daws.responseChecksumValidation=when_required");
    s3 = S3ProxyFixture.start();
    String bucket = s3.newBucket("object-wal");
    cluster = new ChildCluster(root, List.of("wal.type=object", "storage.type=s3", "storage.s3.endpoint=" + s3.endpoint(),
        "storage.s3.bucket=" + bucket, "storage.s3.path.style=true", "storage.s3.region=" + S3ProxyFixture.REGION,
        "storage.s3.access.key=" + s3.accessKey(), "storage.s3.secret.key=" + s3.secretKey(),
        "stream.upload.interval.ms=600000", "controller.session.timeout.ms=" + SharedCluster.SESSION_TIMEOUT_MS), checksums);
    cluster.start();
  }

  @AfterAll
  static void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
      cluster.keepLogs(Path.of("target", "object-wal-failover-logs"));
    }
    if (s3 != null) {
      s3.close();
    }
  }

  @Test
  void aKilledBrokersUnuploadedObjectWalIsRecoveredByAnother() throws Exception {
    try (Admin admin = cluster.admin()) {
      admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get(2, TimeUnit.MINUTES);
      Map<Integer, Integer> leaders = leaders(admin);
      ClusterLoad load = new ClusterLoad(cluster.bootstrapAll(), TOPIC, PARTITIONS);
      int victim = leaders.values().stream().collect(Collectors.groupingBy(id -> id, Collectors.counting())).entrySet()
          .stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
      List<Integer> led = leaders.entrySet().stream().filter(e -> e.getValue() == victim).map(Map.Entry::getKey).toList();
      load.awaitMoreAcks(2000);
      long[] marks = {0, cluster.logMark(1), cluster.logMark(2), cluster.logMark(3)};
      cluster.kill(victim);
      long mark = load.mark();
      await("partitions " + led + " of node " + victim + " acknowledge again").atMost(Duration.ofMinutes(3))
          .pollInterval(Duration.ofMillis(50))
          .until(() -> led.stream().allMatch(p -> load.againAt.containsKey(new TopicPartition(TOPIC, p))));
      long served = led.stream().mapToLong(p -> load.againAt.get(new TopicPartition(TOPIC, p))).max().orElseThrow() - mark;
      System.out.println("ObjectWalFailoverTest: the " + led.size() + " partitions of node " + victim
          + " acknowledged again " + TimeUnit.NANOSECONDS.toMillis(served) + " ms after its kill -9");
      Map<Integer, Integer> now = leaders(admin);
      led.forEach(p -> assertThat(now.get(p)).as("leader of partition %d", p).isNotEqualTo(victim));
      await("a survivor reports the failover of node " + victim).atMost(Duration.ofMinutes(2))
          .pollInterval(Duration.ofMillis(200)).until(() -> {
            for (int id = 1; id <= 3; id++) {
              if (id != victim && cluster.logSince(id, marks[id]).contains("failover of node " + victim + " done")) {
                return true;
              }
            }
            return false;
          });
      load.awaitMoreAcks(500);
      load.close();
      assertThat(cluster.alive(victim)).as("the victim stays dead").isFalse();
      assertThat(load.failures).as("producer failures").isEmpty();
      load.checkLog(TOPIC, PARTITIONS, null);
    }
  }

  private static Map<Integer, Integer> leaders(Admin admin) {
    return await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(300)).ignoreExceptions()
        .until(() -> {
          Map<Integer, Integer> out = new java.util.HashMap<>();
          for (TopicPartitionInfo p : admin.describeTopics(List.of(TOPIC)).allTopicNames().get(30, TimeUnit.SECONDS)
              .get(TOPIC).partitions()) {
            if (p.leader() != null) {
              out.put(p.partition(), p.leader().id());
            }
          }
          return out;
        }, m -> m.size() == PARTITIONS);
  }
}
