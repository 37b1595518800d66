package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.broker.partition.MemoryStreamStore;
import io.tidemark.stream.config.Settings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: real Java consumers with {@code group.protocol=consumer} (KIP-848) share partitions through
 * the broker's server-side assignment: every partition assigned exactly once, rebalances when
 * members leave and join, every record consumed exactly once with committed offsets, static
 * members and regex subscriptions, and Admin describing the group as a CONSUMER group.
 */
class ConsumerProtocolGroupTest {

  static TestBroker broker;
  static Admin admin;

  @BeforeAll
  static void start() {
    broker = new TestBroker(Map.of("kafka.group.consumer.heartbeat.interval.ms", "500"));
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

  /** A consumer-protocol member that commits what it consumed before it gives up a partition. */
  private static KafkaConsumer<String, String> member(String group, String instanceId) {
    Map<String, Object> o = new HashMap<>(Map.of(
        ConsumerConfig.GROUP_ID_CONFIG, group,
        ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer",
        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
        ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, 60_000));
    if (instanceId != null) {
      o.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instanceId);
    }
    return broker.consumer(o);
  }

  private static void subscribe(KafkaConsumer<String, String> c, String topic) {
    c.subscribe(List.of(topic), new ConsumerRebalanceListener() {
      @Override
      public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        c.commitSync();
      }

      @Override
      public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
      }
    });
  }

  /**
   * Polls every consumer in turn, committing after each poll, until {@code done}; after every round
   * the broker must list each partition under at most one member. (The clients' own assignment()
   * may briefly overlap: a partition the client is still adding, before it ever reported owning
   * it, can be moved to another member, as in Kafka; such a partition is revoked before it is
   * fetched. Double consumption is checked on the records themselves.)
   */
  private static void pollUntil(List<KafkaConsumer<String, String>> consumers, Map<String, Integer> seen, BooleanSupplier done) {
    await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(1)).until(() -> {
      for (KafkaConsumer<String, String> c : consumers) {
        ConsumerRecords<String, String> records = c.poll(Duration.ofMillis(50));
        records.forEach(r -> seen.merge(r.value(), 1, Integer::sum));
        if (!records.isEmpty()) {
          try {
            c.commitSync();
          } catch (KafkaException e) {
            // the member's epoch moved on between poll and commit; the next commit (or the revocation callback) covers it
          }
        }
      }
      String group = consumers.get(0).groupMetadata().groupId();
      Set<TopicPartition> held = new HashSet<>();
      org.apache.kafka.clients.admin.ConsumerGroupDescription described;
      try {
        described = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
      } catch (java.util.concurrent.ExecutionException e) {
        if (e.getCause() instanceof org.apache.kafka.common.errors.GroupIdNotFoundException) {
          return false; // the first heartbeat has not reached the broker yet (a loaded machine)
        }
        throw e;
      }
      for (MemberDescription m : described.members()) {
        for (TopicPartition tp : m.assignment().topicPartitions()) {
          assertThat(held.add(tp)).as("%s assigned to two members at once", tp).isTrue();
        }
      }
      return done.getAsBoolean();
    });
  }

  private static boolean spread(List<KafkaConsumer<String, String>> consumers, int each) {
    return consumers.stream().allMatch(c -> c.assignment().size() == each);
  }

  @Test
  void threeConsumersShareSixPartitionsAndConsumeEveryRecordOnceAcrossRebalances() throws Exception {
    String topic = "kip848-six";
    admin.createTopics(List.of(new NewTopic(topic, 6, (short) 1))).all().get();
    produce(topic, 0, 300, 6);
    List<KafkaConsumer<String, String>> consumers = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      consumers.add(member("kip848", null));
      subscribe(consumers.get(i), topic);
    }
    Map<String, Integer> seen = new HashMap<>();
    pollUntil(consumers, seen, () -> seen.size() == 300 && spread(consumers, 2));

    ConsumerGroupDescription d = admin.describeConsumerGroups(List.of("kip848")).all().get().get("kip848");
    assertThat(d.type()).isEqualTo(GroupType.CONSUMER);
    assertThat(d.groupState()).isEqualTo(GroupState.STABLE);
    assertThat(d.partitionAssignor()).isEqualTo("uniform");
    assertThat(d.members()).hasSize(3);
    Set<TopicPartition> described = new HashSet<>();
    for (MemberDescription m : d.members()) {
      assertThat(m.assignment().topicPartitions()).hasSize(2);
      described.addAll(m.assignment().topicPartitions());
    }
    assertThat(described).hasSize(6);

    KafkaConsumer<String, String> leaving = consumers.remove(2);
    leaving.commitSync();
    leaving.close();
    produce(topic, 300, 600, 6);
    pollUntil(consumers, seen, () -> seen.size() == 600 && spread(consumers, 3));

    KafkaConsumer<String, String> joining = member("kip848", null);
    subscribe(joining, topic);
    consumers.add(joining);
    produce(topic, 600, 900, 6);
    pollUntil(consumers, seen, () -> seen.size() == 900 && spread(consumers, 2));

    assertThat(seen).hasSize(900);
    assertThat(seen.entrySet()).as("records consumed more than once").allMatch(e -> e.getValue() == 1);
    for (KafkaConsumer<String, String> c : consumers) {
      c.commitSync();
    }
    Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets("kip848").partitionsToOffsetAndMetadata().get();
    assertThat(committed.values().stream().mapToLong(OffsetAndMetadata::offset).sum()).isEqualTo(900);
    for (KafkaConsumer<String, String> c : consumers) {
      // closing revokes the member's partitions, and the listener commits them again; when the member before it
      // left, the coordinator may have given this member a new epoch that its heartbeat has not brought back yet,
      // so that commit can be answered STALE_MEMBER_EPOCH (as Kafka answers it). Every offset is committed above.
      String memberId = c.groupMetadata().memberId();
      try {
        c.close();
      } catch (org.apache.kafka.common.KafkaException e) {
        assertThat(e.getCause()).as("closing %s", memberId)
            .isInstanceOf(org.apache.kafka.clients.consumer.CommitFailedException.class)
            .hasMessageContaining("stale member epoch");
      }
    }
    ConsumerGroupDescription empty = admin.describeConsumerGroups(List.of("kip848")).all().get().get("kip848");
    assertThat(empty.groupState()).isEqualTo(GroupState.EMPTY);
    assertThat(empty.type()).isEqualTo(GroupType.CONSUMER);
  }

  @Test
  void aRestartedStaticMemberGetsItsPartitionsBack() throws Exception {
    String topic = "kip848-static";
    admin.createTopics(List.of(new NewTopic(topic, 4, (short) 1))).all().get();
    KafkaConsumer<String, String> a = member("kip848-static", "static-a");
    KafkaConsumer<String, String> b = member("kip848-static", "static-b");
    subscribe(a, topic);
    subscribe(b, topic);
    Map<String, Integer> seen = new HashMap<>();
    pollUntil(List.of(a, b), seen, () -> spread(List.of(a, b), 2));
    Set<TopicPartition> before = new HashSet<>(b.assignment());
    b.close(); // a static member leaves with epoch -2: its partitions wait for it
    KafkaConsumer<String, String> b2 = member("kip848-static", "static-b");
    subscribe(b2, topic);
    pollUntil(List.of(a, b2), seen, () -> b2.assignment().size() == 2);
    assertThat(b2.assignment()).isEqualTo(before);
    assertThat(admin.describeConsumerGroups(List.of("kip848-static")).all().get().get("kip848-static").members()).hasSize(2);
    a.close();
    b2.close();
  }

  @Test
  void committedOffsetsOfAConsumerGroupSurviveABrokerRestart(@TempDir Path dir) throws Exception {
    MemoryStreamStore store = new MemoryStreamStore(1L << 30);
    int committed;
    Settings settings = new Settings(Map.of("kafka.listener.port", "0", "kafka.listener.host", "127.0.0.1",
        "kafka.advertised.host", "127.0.0.1", "kafka.data.dir", dir.toString(), "kafka.group.consumer.heartbeat.interval.ms", "500"));
    Map<String, Object> config = Map.of(ConsumerConfig.GROUP_ID_CONFIG, "kip848-restart", ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer",
        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false, ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10,
        ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    try (KafkaBroker b = new KafkaBroker(new BrokerConfig(settings), store, Time.SYSTEM)) {
      b.start();
      try (Admin a = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, b.bootstrapServers()))) {
        a.createTopics(List.of(new NewTopic("restart-848", 1, (short) 1))).all().get();
      }
      try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, b.bootstrapServers()),
          new StringSerializer(), new StringSerializer())) {
        for (int i = 0; i < 20; i++) {
          p.send(new ProducerRecord<>("restart-848", 0, null, "r" + i));
        }
      }
      try (KafkaConsumer<String, String> c = consumerOf(b, config)) {
        c.subscribe(List.of("restart-848"));
        List<String> first = new ArrayList<>();
        await().atMost(Duration.ofSeconds(60)).until(() -> {
          c.poll(Duration.ofMillis(100)).forEach(r -> first.add(r.value()));
          return !first.isEmpty();
        });
        c.commitSync();
        assertThat(first).startsWith("r0");
        committed = first.size();
      }
    }
    try (KafkaBroker b = new KafkaBroker(new BrokerConfig(settings), store, Time.SYSTEM)) {
      b.start();
      try (KafkaConsumer<String, String> c = consumerOf(b, config)) {
        c.subscribe(List.of("restart-848"));
        List<String> rest = new ArrayList<>();
        await().atMost(Duration.ofSeconds(60)).until(() -> {
          c.poll(Duration.ofMillis(100)).forEach(r -> rest.add(r.value()));
          return !rest.isEmpty();
        });
        assertThat(rest.get(0)).as("resumes from the offset committed before the restart").isEqualTo("r" + committed);
        try (Admin a = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, b.bootstrapServers()))) {
          assertThat(a.describeConsumerGroups(List.of("kip848-restart")).all().get().get("kip848-restart").type())
              .isEqualTo(GroupType.CONSUMER);
        }
      }
    }
  }

  private static KafkaConsumer<String, String> consumerOf(KafkaBroker b, Map<String, Object> config) {
    Map<String, Object> all = new HashMap<>(config);
    all.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, b.bootstrapServers());
    return new KafkaConsumer<>(all, new StringDeserializer(), new StringDeserializer());
  }

  @Test
  void aRegexSubscriptionIsResolvedByTheBroker() throws Exception {
    admin.createTopics(List.of(new NewTopic("pat-a", 2, (short) 1), new NewTopic("pat-b", 1, (short) 1),
        new NewTopic("other-c", 1, (short) 1))).all().get();
    try (KafkaConsumer<String, String> c = member("kip848-regex", null)) {
      c.subscribe(new SubscriptionPattern("pat-.*"));
      Map<String, Integer> seen = new HashMap<>();
      pollUntil(List.of(c), seen, () -> c.assignment().size() == 3);
      assertThat(c.assignment()).extracting(TopicPartition::topic).containsOnly("pat-a", "pat-b");
    }
  }
}
