package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Goal: classic consumer groups of real Java consumers share partitions, rebalance, commit and manage offsets. */
class ConsumerGroupTest {

  static TestBroker broker;
  static Admin admin;

  @BeforeAll
  static void start() {
    broker = new TestBroker();
    admin = broker.admin();
  }

  @AfterAll
  static void stop() {
    admin.close();
    broker.close();
  }

  private static void produce(String topic, int from, int to, int partitions) {
    broker.produceSpread(topic, from, to, partitions);
  }

  private static KafkaConsumer<String, String> member(String group, String topic, String instanceId) {
    Map<String, Object> o = new java.util.HashMap<>(Map.of(
        ConsumerConfig.GROUP_ID_CONFIG, group,
        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
        ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 10_000,
        ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 500,
        ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, 20_000));
    if (instanceId != null) {
      o.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instanceId);
    }
    KafkaConsumer<String, String> c = broker.consumer(o);
    c.subscribe(List.of(topic));
    return c;
  }

  /** Polls every consumer in turn, committing, until {@code want} distinct values were seen. */
  private static void pollUntil(List<KafkaConsumer<String, String>> consumers, Set<String> seen, int want) {
    await().atMost(Duration.ofSeconds(60)).until(() -> {
      for (KafkaConsumer<String, String> c : consumers) {
        c.poll(Duration.ofMillis(50)).forEach(r -> seen.add(r.value()));
        try {
          c.commitSync();
        } catch (RebalanceInProgressException | CommitFailedException e) {
          // expected while the group rebalances: the next poll rejoins, records are re-delivered
        }
      }
      return seen.size() >= want;
    });
  }

  @Test
  void groupOfThreeSharesPartitionsAndRebalancesWhenOneLeaves() throws Exception {
    String topic = "group-three";
    admin.createTopics(List.of(new NewTopic(topic, 6, (short) 1))).all().get();
    produce(topic, 0, 600, 6);
    List<KafkaConsumer<String, String>> consumers = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      consumers.add(member("g3", topic, null));
    }
    Set<String> seen = new HashSet<>();
    pollUntil(consumers, seen, 600);
    await().atMost(Duration.ofSeconds(60)).until(() -> {
      int total = 0;
      boolean everyone = true;
      for (KafkaConsumer<String, String> c : consumers) {
        c.poll(Duration.ofMillis(20));
        total += c.assignment().size();
        everyone &= c.assignment().size() == 2;
      }
      return total == 6 && everyone;
    });
    ConsumerGroupDescription d = admin.describeConsumerGroups(List.of("g3")).all().get().get("g3");
    assertThat(d.groupState()).isEqualTo(GroupState.STABLE);
    assertThat(d.members()).hasSize(3);

    consumers.remove(2).close();
    produce(topic, 600, 900, 6);
    pollUntil(consumers, seen, 900);
    await().atMost(Duration.ofSeconds(60)).until(() -> {
      int total = 0;
      for (KafkaConsumer<String, String> c : consumers) {
        c.poll(Duration.ofMillis(20));
        total += c.assignment().size();
      }
      return total == 6;
    });
    for (int i = 0; i < 900; i++) {
      assertThat(seen).contains("v" + i);
    }
    Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets("g3").partitionsToOffsetAndMetadata().get();
    assertThat(committed.values().stream().mapToLong(OffsetAndMetadata::offset).sum()).isEqualTo(900);
    assertThatThrownBy(() -> admin.deleteConsumerGroups(List.of("g3")).all().get()).hasCauseInstanceOf(GroupNotEmptyException.class);
    consumers.forEach(KafkaConsumer::close);
    await().atMost(Duration.ofSeconds(30)).until(() ->
        admin.describeConsumerGroups(List.of("g3")).all().get().get("g3").groupState() == GroupState.EMPTY);
    admin.deleteConsumerGroups(List.of("g3")).all().get();
    assertThat(admin.listConsumerGroupOffsets("g3").partitionsToOffsetAndMetadata().get()).isEmpty();
  }

  @Test
  void staticMemberRejoinsWithItsAssignment() throws Exception {
    String topic = "static-topic";
    admin.createTopics(List.of(new NewTopic(topic, 4, (short) 1))).all().get();
    produce(topic, 0, 40, 4);
    KafkaConsumer<String, String> a = member("gs", topic, "instance-a");
    KafkaConsumer<String, String> b = member("gs", topic, "instance-b");
    Set<String> seen = new HashSet<>();
    pollUntil(List.of(a, b), seen, 40);
    await().atMost(Duration.ofSeconds(30)).until(() -> {
      a.poll(Duration.ofMillis(20));
      b.poll(Duration.ofMillis(20));
      return a.assignment().size() == 2 && b.assignment().size() == 2;
    });
    Set<TopicPartition> before = new HashSet<>(b.assignment());
    b.close(); // static members do not leave the group on close
    KafkaConsumer<String, String> b2 = member("gs", topic, "instance-b");
    await().atMost(Duration.ofSeconds(30)).until(() -> {
      a.poll(Duration.ofMillis(20));
      b2.poll(Duration.ofMillis(20));
      return b2.assignment().size() == 2;
    });
    assertThat(b2.assignment()).isEqualTo(before);
    assertThat(admin.describeConsumerGroups(List.of("gs")).all().get().get("gs").members()).hasSize(2);
    a.close();
    b2.close();
  }

  @Test
  void adminResetsAndDeletesOffsetsOfAnEmptyGroup() throws Exception {
    String topic = "reset-topic";
    admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
    produce(topic, 0, 10, 1);
    TopicPartition tp = new TopicPartition(topic, 0);
    admin.alterConsumerGroupOffsets("gr", Map.of(tp, new OffsetAndMetadata(7, "by admin"))).all().get();
    assertThat(admin.listConsumerGroupOffsets("gr").partitionsToOffsetAndMetadata().get().get(tp))
        .isEqualTo(new OffsetAndMetadata(7, "by admin"));
    assertThat(admin.listConsumerGroups().all().get()).anyMatch(l -> l.groupId().equals("gr"));
    try (KafkaConsumer<String, String> c = member("gr", topic, null)) {
      Set<String> seen = new HashSet<>();
      pollUntil(List.of(c), seen, 3);
      assertThat(seen).containsExactlyInAnyOrder("v7", "v8", "v9");
    }
    admin.deleteConsumerGroupOffsets("gr", Set.of(tp)).all().get();
    assertThat(admin.listConsumerGroupOffsets("gr").partitionsToOffsetAndMetadata().get()).doesNotContainKey(tp);
  }
}
