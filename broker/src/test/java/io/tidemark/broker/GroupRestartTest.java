package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.broker.partition.MemoryStreamStore;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.net.LoopbackPorts;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: classic group membership (generation, leader, members, assignments, static instance ids)
 * survives a broker restart over the same stream store, so consumers that heartbeat through the
 * restart carry on without a rebalance.
 */
class GroupRestartTest {

  private static final String TOPIC = "orders";
  private static final int PARTITIONS = 6;

  @TempDir
  Path dir;

  private final MemoryStreamStore store = new MemoryStreamStore(1L << 30);
  private final List<AutoCloseable> open = new ArrayList<>();
  private int port;
  private KafkaBroker broker;

  @AfterEach
  void closeAll() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
    if (broker != null) {
      broker.close();
    }
  }

  private void startBroker() throws Exception {
    if (port == 0) {
      port = LoopbackPorts.pick();
    }
    Settings s = new Settings(Map.of("kafka.listener.port", Integer.toString(port), "kafka.listener.host", "127.0.0.1",
        "kafka.advertised.host", "127.0.0.1", "kafka.data.dir", dir.toString(), "kafka.group.initial.rebalance.delay.ms", "0",
        "kafka.group.consumer.heartbeat.interval.ms", "500"));
    broker = new KafkaBroker(new BrokerConfig(s), store, Time.SYSTEM);
    broker.start();
  }

  private void restartBroker() throws Exception {
    broker.close();
    broker = null;
    startBroker();
  }

  private String bootstrap() {
    return "127.0.0.1:" + port;
  }

  private Admin admin() {
    Admin a = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(),
        AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000));
    open.add(a);
    return a;
  }

  private void produce(int from, int to) {
    try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap()),
        new StringSerializer(), new StringSerializer())) {
      for (int i = from; i < to; i++) {
        p.send(new ProducerRecord<>(TOPIC, i % PARTITIONS, "k" + i, "v" + i));
      }
      p.flush();
    }
  }

  private KafkaConsumer<String, String> member(String group, String instanceId, int sessionTimeoutMs) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, sessionTimeoutMs);
    p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 500);
    p.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, 120_000);
    p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 200);
    p.put(ConsumerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 500);
    if (instanceId != null) {
      p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instanceId);
    }
    KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    open.add(c);
    c.subscribe(List.of(TOPIC));
    return c;
  }

  private KafkaConsumer<String, String> consumerProtocolMember(String group) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 200);
    p.put(ConsumerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 500);
    KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    open.add(c);
    c.subscribe(List.of(TOPIC));
    return c;
  }

  /** Polls every consumer in turn until they share all partitions in one generation and {@code want} values were seen. */
  private static void pollUntilStable(List<KafkaConsumer<String, String>> consumers, Set<String> seen, int want) {
    await().atMost(Duration.ofSeconds(60)).until(() -> {
      int total = 0;
      Set<Integer> generations = new HashSet<>();
      for (KafkaConsumer<String, String> c : consumers) {
        c.poll(Duration.ofMillis(50)).forEach(r -> seen.add(r.value()));
        total += c.assignment().size();
        generations.add(c.groupMetadata().generationId());
      }
      return total == PARTITIONS && generations.size() == 1 && seen.size() >= want;
    });
  }

  private ConsumerGroupDescription describe(Admin admin, String group) throws Exception {
    return admin.describeConsumerGroups(List.of(group)).all().get().get(group);
  }

  private static Map<String, Set<TopicPartition>> assignmentsByMember(ConsumerGroupDescription d) {
    Map<String, Set<TopicPartition>> out = new HashMap<>();
    for (MemberDescription m : d.members()) {
      out.put(m.consumerId(), m.assignment().topicPartitions());
    }
    return out;
  }

  @Test
  void membersHeartbeatingThroughARestartKeepTheirGenerationAndAssignment() throws Exception {
    // Goal: after a restart the group is described Stable with the old members right away, and consumers carry on without a rebalance.
    startBroker();
    admin().createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get();
    produce(0, 60);
    List<KafkaConsumer<String, String>> consumers = List.of(member("keep", null, 30_000), member("keep", null, 30_000),
        member("keep", "static-3", 30_000));
    Set<String> seen = new HashSet<>();
    pollUntilStable(consumers, seen, 60);
    int generation = consumers.get(0).groupMetadata().generationId();
    List<String> memberIds = consumers.stream().map(c -> c.groupMetadata().memberId()).toList();
    Map<String, Set<TopicPartition>> assignedBefore = new HashMap<>();
    consumers.forEach(c -> assignedBefore.put(c.groupMetadata().memberId(), Set.copyOf(c.assignment())));
    ConsumerGroupDescription before = describe(admin(), "keep");
    assertThat(before.groupState()).isEqualTo(GroupState.STABLE);

    restartBroker();

    ConsumerGroupDescription after = describe(admin(), "keep");
    assertThat(after.groupState()).isEqualTo(GroupState.STABLE);
    assertThat(after.coordinator().port()).isEqualTo(port);
    assertThat(after.members()).extracting(MemberDescription::consumerId).containsExactlyInAnyOrderElementsOf(memberIds);
    assertThat(assignmentsByMember(after)).isEqualTo(assignedBefore);
    assertThat(after.members()).filteredOn(m -> m.groupInstanceId().isPresent())
        .singleElement().satisfies(m -> {
          assertThat(m.groupInstanceId()).contains("static-3");
          assertThat(m.consumerId()).isEqualTo(memberIds.get(2));
        });
    assertThat(after.partitionAssignor()).isEqualTo(before.partitionAssignor());

    produce(60, 120);
    pollUntilStable(consumers, seen, 120);
    assertThat(seen).hasSize(120);
    for (int i = 0; i < consumers.size(); i++) {
      KafkaConsumer<String, String> c = consumers.get(i);
      assertThat(c.groupMetadata().generationId()).as("generation of member %d", i).isEqualTo(generation);
      assertThat(c.groupMetadata().memberId()).isEqualTo(memberIds.get(i));
      assertThat(c.assignment()).isEqualTo(assignedBefore.get(memberIds.get(i)));
    }
    consumers.get(0).commitSync();
    assertThat(describe(admin(), "keep").members()).hasSize(3);
  }

  @Test
  void aMemberThatNeverComesBackExpiresAfterItsSessionTimeout() throws Exception {
    // Goal: a restored member that does not heartbeat after the restart is expired and the others rebalance to a newer generation.
    startBroker();
    admin().createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get();
    produce(0, 30);
    KafkaConsumer<String, String> gone = member("expire", null, 6_000);
    List<KafkaConsumer<String, String>> consumers = List.of(member("expire", null, 6_000), gone);
    Set<String> seen = new HashSet<>();
    pollUntilStable(consumers, seen, 30);
    int generation = gone.groupMetadata().generationId();
    String goneId = gone.groupMetadata().memberId();
    broker.close();
    broker = null;
    gone.close(Duration.ofMillis(200)); // cannot reach the coordinator to leave
    open.remove(gone);
    startBroker();
    assertThat(describe(admin(), "expire").members()).extracting(MemberDescription::consumerId).contains(goneId);

    KafkaConsumer<String, String> stays = consumers.get(0);
    await().atMost(Duration.ofSeconds(40)).until(() -> {
      stays.poll(Duration.ofMillis(100));
      return stays.assignment().size() == PARTITIONS;
    });
    assertThat(stays.groupMetadata().generationId()).isGreaterThan(generation);
    ConsumerGroupDescription d = describe(admin(), "expire");
    assertThat(d.members()).extracting(MemberDescription::consumerId).containsExactly(stays.groupMetadata().memberId());
  }

  @Test
  void anEmptyGroupStaysEmptyAndADeletedGroupStaysDeleted() throws Exception {
    // Goal: a group whose members left is Empty after a restart with its offsets and generation; a deleted group does not come back.
    startBroker();
    admin().createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get();
    produce(0, 30);
    int[] generations = new int[2];
    String[] groups = {"left", "deleted"};
    for (int g = 0; g < groups.length; g++) {
      List<KafkaConsumer<String, String>> consumers = List.of(member(groups[g], null, 10_000), member(groups[g], null, 10_000));
      pollUntilStable(consumers, new HashSet<>(), 30);
      generations[g] = consumers.get(0).groupMetadata().generationId();
      for (KafkaConsumer<String, String> c : consumers) {
        c.commitSync();
      }
      for (KafkaConsumer<String, String> c : consumers) {
        c.close();
        open.remove(c);
      }
    }
    Admin admin = admin();
    await().atMost(Duration.ofSeconds(20)).until(() -> describe(admin, "left").groupState() == GroupState.EMPTY
        && describe(admin, "deleted").groupState() == GroupState.EMPTY);
    var committedBefore = admin.listConsumerGroupOffsets("left").partitionsToOffsetAndMetadata().get();
    assertThat(committedBefore).isNotEmpty();
    admin.deleteConsumerGroups(List.of("deleted")).all().get();

    restartBroker();

    Admin after = admin();
    ConsumerGroupDescription left = describe(after, "left");
    assertThat(left.groupState()).isEqualTo(GroupState.EMPTY);
    assertThat(left.members()).isEmpty();
    assertThat(after.listConsumerGroupOffsets("left").partitionsToOffsetAndMetadata().get()).isEqualTo(committedBefore);
    assertThat(after.listConsumerGroups().all().get()).extracting(ConsumerGroupListing::groupId)
        .contains("left").doesNotContain("deleted");
    try {
      ConsumerGroupDescription deleted = describe(after, "deleted");
      assertThat(deleted.groupState()).isEqualTo(GroupState.DEAD);
      assertThat(deleted.members()).isEmpty();
    } catch (ExecutionException e) {
      assertThat(e.getCause()).isInstanceOf(GroupIdNotFoundException.class);
    }
    assertThat(after.listConsumerGroupOffsets("deleted").partitionsToOffsetAndMetadata().get()).isEmpty();

    // the Empty group's generation survived: a returning member continues from it, the deleted one starts over
    KafkaConsumer<String, String> back = member("left", null, 10_000);
    KafkaConsumer<String, String> fresh = member("deleted", null, 10_000);
    pollUntilStable(List.of(back), new HashSet<>(), 0);
    pollUntilStable(List.of(fresh), new HashSet<>(), 0);
    assertThat(back.groupMetadata().generationId()).isGreaterThan(generations[0]);
    assertThat(fresh.groupMetadata().generationId()).isEqualTo(1);
  }

  @Test
  void consumerProtocolMembersKeepTheirEpochsAndAssignmentsThroughARestart() throws Exception {
    // Goal: a KIP-848 group is described with its group epoch and members right after a restart, and its members go on at their epochs.
    startBroker();
    admin().createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get();
    produce(0, 60);
    List<KafkaConsumer<String, String>> consumers = List.of(consumerProtocolMember("kip848"), consumerProtocolMember("kip848"));
    Set<String> seen = new HashSet<>();
    Admin admin = admin();
    await().atMost(Duration.ofSeconds(60)).until(() -> {
      int total = 0;
      for (KafkaConsumer<String, String> c : consumers) {
        c.poll(Duration.ofMillis(50)).forEach(r -> seen.add(r.value()));
        total += c.assignment().size();
      }
      return total == PARTITIONS && seen.size() >= 60 && describe(admin, "kip848").groupState() == GroupState.STABLE;
    });
    ConsumerGroupDescription before = describe(admin, "kip848");
    int groupEpoch = before.groupEpoch().orElseThrow();
    Map<String, Set<TopicPartition>> assignedBefore = assignmentsByMember(before);
    Map<String, Integer> epochsBefore = new HashMap<>();
    before.members().forEach(m -> epochsBefore.put(m.consumerId(), m.memberEpoch().orElseThrow()));
    assertThat(assignedBefore).hasSize(2);

    restartBroker();

    ConsumerGroupDescription after = describe(admin(), "kip848");
    assertThat(after.groupEpoch()).contains(groupEpoch);
    assertThat(after.groupState()).isEqualTo(GroupState.STABLE);
    assertThat(assignmentsByMember(after)).isEqualTo(assignedBefore);
    after.members().forEach(m -> assertThat(m.memberEpoch()).contains(epochsBefore.get(m.consumerId())));

    produce(60, 120);
    await().atMost(Duration.ofSeconds(60)).until(() -> {
      for (KafkaConsumer<String, String> c : consumers) {
        c.poll(Duration.ofMillis(50)).forEach(r -> seen.add(r.value()));
      }
      return seen.size() >= 120;
    });
    assertThat(seen).hasSize(120);
    for (KafkaConsumer<String, String> c : consumers) {
      String id = c.groupMetadata().memberId();
      assertThat(epochsBefore).containsKey(id);
      assertThat(c.groupMetadata().generationId()).isEqualTo(epochsBefore.get(id));
      assertThat(c.assignment()).isEqualTo(assignedBefore.get(id));
    }
    assertThat(describe(admin(), "kip848").groupEpoch()).contains(groupEpoch);
  }
}
