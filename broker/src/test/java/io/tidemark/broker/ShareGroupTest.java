package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Goal: real Java {@link KafkaShareConsumer}s (KIP-932) share a topic's records through Tidemark:
 * implicit and explicit acknowledgement, several consumers on one partition, redelivery after a
 * lock timeout and after a consumer closes without acknowledging, a poison record archived at the
 * delivery limit, group configs, and the Admin share-group APIs (describe, offsets, delete).
 */
class ShareGroupTest {

  static TestBroker broker;
  static Admin admin;

  @BeforeAll
  static void start() {
    broker = new TestBroker(Map.of("kafka.group.share.heartbeat.interval.ms", "500",
        "kafka.group.share.min.record.lock.duration.ms", "1000"));
    admin = broker.admin();
  }

  @AfterAll
  static void stop() {
    admin.close();
    broker.close();
  }

  static void topic(String name, int partitions) throws Exception {
    admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
  }

  static void groupConfig(String group, Map<String, String> configs) throws Exception {
    List<AlterConfigOp> ops = new ArrayList<>();
    configs.forEach((k, v) -> ops.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
    admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), ops)).all().get();
  }

  static KafkaShareConsumer<String, String> consumer(String group, String mode, Map<String, Object> extra) {
    Map<String, Object> o = new HashMap<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap(),
        ConsumerConfig.GROUP_ID_CONFIG, group, "share.acknowledgement.mode", mode));
    o.putAll(extra);
    return new KafkaShareConsumer<>(o, new StringDeserializer(), new StringDeserializer());
  }

  static Map<TopicPartition, SharePartitionOffsetInfo> offsets(String group) throws Exception {
    return admin.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(group).get();
  }

  @Test
  void implicitAcknowledgementConsumesEveryRecordOnce() throws Exception {
    topic("share-implicit", 2);
    groupConfig("g-implicit", Map.of("share.auto.offset.reset", "earliest"));
    broker.produceSpread("share-implicit", 0, 40, 2);
    List<String> seen = new ArrayList<>();
    try (KafkaShareConsumer<String, String> c = consumer("g-implicit", "implicit", Map.of())) {
      c.subscribe(List.of("share-implicit"));
      await().atMost(Duration.ofSeconds(60)).until(() -> {
        c.poll(Duration.ofMillis(200)).forEach(r -> seen.add(r.value()));
        return seen.size() >= 40;
      });
      c.poll(Duration.ofMillis(200)).forEach(r -> seen.add(r.value())); // acknowledges the last batch
      c.commitSync();
    }
    assertThat(seen).hasSize(40).doesNotHaveDuplicates();
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      Map<TopicPartition, SharePartitionOffsetInfo> o = offsets("g-implicit");
      assertThat(o.get(new TopicPartition("share-implicit", 0)).startOffset()
          + o.get(new TopicPartition("share-implicit", 1)).startOffset()).isEqualTo(40);
    });
  }

  @Test
  void explicitReleaseRedeliversWithHigherDeliveryCount() throws Exception {
    topic("share-explicit", 1);
    groupConfig("g-explicit", Map.of("share.auto.offset.reset", "earliest"));
    broker.produceSpread("share-explicit", 0, 10, 1);
    Map<String, List<Short>> deliveries = new HashMap<>();
    try (KafkaShareConsumer<String, String> c = consumer("g-explicit", "explicit", Map.of())) {
      c.subscribe(List.of("share-explicit"));
      await().atMost(Duration.ofSeconds(60)).until(() -> {
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
          List<Short> d = deliveries.computeIfAbsent(r.value(), k -> new ArrayList<>());
          d.add(r.deliveryCount().orElseThrow());
          int n = Integer.parseInt(r.value().substring(1));
          c.acknowledge(r, n % 2 == 1 && d.size() == 1 ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT);
        }
        c.commitSync();
        return deliveries.size() == 10 && deliveries.entrySet().stream().allMatch(e -> e.getValue().size() == (Integer.parseInt(e.getKey().substring(1)) % 2 == 1 ? 2 : 1));
      });
    }
    deliveries.forEach((v, d) -> assertThat(d).isEqualTo(Integer.parseInt(v.substring(1)) % 2 == 1 ? List.of((short) 1, (short) 2)
        : List.of((short) 1)));
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
        assertThat(offsets("g-explicit").get(new TopicPartition("share-explicit", 0)).startOffset()).isEqualTo(10));
  }

  @Test
  void severalConsumersShareOnePartition() throws Exception {
    topic("share-many", 1);
    groupConfig("g-many", Map.of("share.auto.offset.reset", "earliest"));
    int total = 600;
    broker.produceSpread("share-many", 0, total, 1);
    Map<String, Integer> byValue = new ConcurrentHashMap<>();
    Map<Integer, Integer> perConsumer = new ConcurrentHashMap<>();
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService pool = Executors.newFixedThreadPool(3);
    List<Future<?>> runs = new ArrayList<>();
    List<KafkaShareConsumer<String, String>> consumers = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 3; i++) {
      int id = i;
      KafkaShareConsumer<String, String> c = consumer("g-many", "explicit", Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10));
      consumers.add(c);
      c.subscribe(List.of("share-many"));
      runs.add(pool.submit(() -> {
        while (!stop.get()) {
          for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
            byValue.merge(r.value(), 1, Integer::sum);
            perConsumer.merge(id, 1, Integer::sum);
            c.acknowledge(r, AcknowledgeType.ACCEPT);
          }
          c.commitSync();
        }
        c.close();
        return null;
      }));
    }
    try {
      await().atMost(Duration.ofSeconds(90)).until(() -> byValue.size() == total);
      ShareGroupDescription d = admin.describeShareGroups(List.of("g-many")).describedGroups().get("g-many").get();
      assertThat(d.groupState()).isEqualTo(GroupState.STABLE);
      assertThat(d.members()).hasSize(3).allSatisfy(m -> assertThat(m.assignment().topicPartitions())
          .containsExactly(new TopicPartition("share-many", 0)));
    } finally {
      stop.set(true);
      for (Future<?> f : runs) {
        f.get(60, TimeUnit.SECONDS);
      }
      pool.shutdownNow();
    }
    assertThat(byValue.values()).allMatch(n -> n == 1);
    assertThat(perConsumer.values().stream().filter(n -> n > 0).count()).as("consumers that got records: " + perConsumer)
        .isGreaterThanOrEqualTo(2);
  }

  @Test
  void lockTimeoutRedeliversToAnotherConsumer() throws Exception {
    topic("share-lock", 1);
    groupConfig("g-lock", Map.of("share.auto.offset.reset", "earliest", "share.record.lock.duration.ms", "1000"));
    broker.produceSpread("share-lock", 0, 5, 1);
    try (KafkaShareConsumer<String, String> holder = consumer("g-lock", "explicit", Map.of());
        KafkaShareConsumer<String, String> other = consumer("g-lock", "explicit", Map.of())) {
      holder.subscribe(List.of("share-lock"));
      List<ConsumerRecord<String, String>> held = new ArrayList<>();
      await().atMost(Duration.ofSeconds(60)).until(() -> {
        holder.poll(Duration.ofMillis(200)).forEach(held::add);
        return !held.isEmpty();
      });
      assertThat(held).allMatch(r -> r.deliveryCount().orElseThrow() == 1);
      // the holder keeps its lock without acknowledging; after 1 s the records go to the other consumer
      other.subscribe(List.of("share-lock"));
      Map<String, Short> redelivered = new HashMap<>();
      await().atMost(Duration.ofSeconds(60)).until(() -> {
        for (ConsumerRecord<String, String> r : other.poll(Duration.ofMillis(200))) {
          redelivered.put(r.value(), r.deliveryCount().orElseThrow());
          other.acknowledge(r, AcknowledgeType.ACCEPT);
        }
        other.commitSync();
        return redelivered.keySet().containsAll(held.stream().map(ConsumerRecord::value).toList());
      });
      held.forEach(r -> assertThat(redelivered.get(r.value())).isEqualTo((short) 2));
    }
  }

  @Test
  void renewExtendsTheLock() throws Exception {
    topic("share-renew", 1);
    groupConfig("g-renew", Map.of("share.auto.offset.reset", "earliest", "share.record.lock.duration.ms", "4000"));
    broker.produceSpread("share-renew", 0, 3, 1);
    try (KafkaShareConsumer<String, String> holder = consumer("g-renew", "explicit", Map.of());
        KafkaShareConsumer<String, String> other = consumer("g-renew", "explicit", Map.of())) {
      holder.subscribe(List.of("share-renew"));
      List<ConsumerRecord<String, String>> held = new ArrayList<>();
      await().atMost(Duration.ofSeconds(60)).until(() -> {
        holder.poll(Duration.ofMillis(200)).forEach(held::add);
        return held.size() == 3;
      });
      long acquired = System.nanoTime();
      other.subscribe(List.of("share-renew"));
      int seenByOther = 0;
      while (System.nanoTime() - acquired < TimeUnit.MILLISECONDS.toNanos(1500)) {
        seenByOther += other.poll(Duration.ofMillis(100)).count();
      }
      held.forEach(r -> holder.acknowledge(r, AcknowledgeType.RENEW)); // the lock now ends 4 s from here, not 4 s from acquisition
      assertThat(holder.commitSync().values()).allMatch(java.util.Optional::isEmpty);
      while (System.nanoTime() - acquired < TimeUnit.MILLISECONDS.toNanos(5000)) {
        seenByOther += other.poll(Duration.ofMillis(100)).count();
      }
      assertThat(seenByOther).as("records delivered elsewhere before the renewed lock ended").isZero();
      Map<String, Short> redelivered = new HashMap<>();
      await().atMost(Duration.ofSeconds(60)).until(() -> {
        for (ConsumerRecord<String, String> r : other.poll(Duration.ofMillis(200))) {
          redelivered.put(r.value(), r.deliveryCount().orElseThrow());
          other.acknowledge(r, AcknowledgeType.ACCEPT);
        }
        other.commitSync();
        return redelivered.size() == 3;
      });
      assertThat(redelivered.values()).containsOnly((short) 2);
    }
  }

  @Test
  void closedConsumerReleasesItsRecords() throws Exception {
    topic("share-close", 1);
    groupConfig("g-close", Map.of("share.auto.offset.reset", "earliest")); // lock 30 s: only the close can release in time
    broker.produceSpread("share-close", 0, 5, 1);
    List<String> held = new ArrayList<>();
    try (KafkaShareConsumer<String, String> dying = consumer("g-close", "explicit", Map.of())) {
      dying.subscribe(List.of("share-close"));
      await().atMost(Duration.ofSeconds(60)).until(() -> {
        dying.poll(Duration.ofMillis(200)).forEach(r -> held.add(r.value()));
        return !held.isEmpty();
      });
    } // closes without acknowledging
    long closedAt = System.nanoTime();
    Map<String, Short> redelivered = new HashMap<>();
    try (KafkaShareConsumer<String, String> next = consumer("g-close", "explicit", Map.of())) {
      next.subscribe(List.of("share-close"));
      await().atMost(Duration.ofSeconds(25)).until(() -> {
        for (ConsumerRecord<String, String> r : next.poll(Duration.ofMillis(200))) {
          redelivered.put(r.value(), r.deliveryCount().orElseThrow());
          next.acknowledge(r, AcknowledgeType.ACCEPT);
        }
        next.commitSync();
        return redelivered.keySet().containsAll(held);
      });
    }
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closedAt)).isLessThan(30_000);
    held.forEach(v -> assertThat(redelivered.get(v)).isEqualTo((short) 2));
  }

  @Test
  void poisonRecordIsArchivedAtTheDeliveryLimit() throws Exception {
    topic("share-poison", 1);
    groupConfig("g-poison", Map.of("share.auto.offset.reset", "earliest", "share.delivery.count.limit", "3"));
    broker.produceSpread("share-poison", 0, 4, 1); // v0..v3; v1 is the poison
    Map<String, List<Short>> deliveries = new HashMap<>();
    try (KafkaShareConsumer<String, String> c = consumer("g-poison", "explicit", Map.of())) {
      c.subscribe(List.of("share-poison"));
      await().atMost(Duration.ofSeconds(60)).until(() -> {
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
          deliveries.computeIfAbsent(r.value(), k -> new ArrayList<>()).add(r.deliveryCount().orElseThrow());
          c.acknowledge(r, r.value().equals("v1") ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT);
        }
        c.commitSync();
        var start = offsets("g-poison").get(new TopicPartition("share-poison", 0)); // absent until the partition has state
        return start != null && start.startOffset() == 4;
      });
      assertThat(c.poll(Duration.ofMillis(500))).isEmpty();
    }
    assertThat(deliveries.get("v1")).containsExactly((short) 1, (short) 2, (short) 3);
    assertThat(deliveries.get("v0")).containsExactly((short) 1);
    assertThat(deliveries.get("v3")).containsExactly((short) 1);
  }

  @Test
  void disabledShareGroupsAreNotAdvertised() throws Exception {
    try (TestBroker off = new TestBroker(Map.of("kafka.share.enable", "false")); Admin a = off.admin()) {
      assertThat(off.broker.apis().lookup(org.apache.kafka.common.protocol.ApiKeys.SHARE_FETCH)).isNull();
      assertThat(off.broker.apis().lookup(org.apache.kafka.common.protocol.ApiKeys.SHARE_GROUP_HEARTBEAT)).isNull();
      org.apache.kafka.clients.admin.FeatureMetadata features = a.describeFeatures().featureMetadata().get();
      assertThat(features.finalizedFeatures()).doesNotContainKey("share.version");
      assertThat(features.supportedFeatures().get("share.version").maxVersion()).isZero();
    }
    assertThat(admin.describeFeatures().featureMetadata().get().finalizedFeatures().get("share.version").maxVersionLevel())
        .isEqualTo((short) 1);
  }

  @Test
  void adminOffsetsResetAndDelete() throws Exception {
    topic("share-admin", 1);
    broker.produceSpread("share-admin", 0, 8, 1);
    // latest (the default): a new group starts at the end
    try (KafkaShareConsumer<String, String> c = consumer("g-admin", "implicit", Map.of())) {
      c.subscribe(List.of("share-admin"));
      await().atMost(Duration.ofSeconds(60)).until(() -> {
        c.poll(Duration.ofMillis(200));
        SharePartitionOffsetInfo o = offsets("g-admin").get(new TopicPartition("share-admin", 0));
        return o != null && o.startOffset() == 8;
      });
      assertThat(admin.listGroups().all().get()).anySatisfy(g -> {
        assertThat(g.groupId()).isEqualTo("g-admin");
        assertThat(g.type()).hasValue(org.apache.kafka.common.GroupType.SHARE);
      });
      // offsets cannot change while the group has members
      assertThat(admin.alterShareGroupOffsets("g-admin", Map.of(new TopicPartition("share-admin", 0), 2L)).all())
          .failsWithin(Duration.ofSeconds(30)).withThrowableThat().withMessageContaining("GroupNotEmpty");
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> admin.describeShareGroups(List.of("g-admin")).describedGroups().get("g-admin")
        .get().groupState() == GroupState.EMPTY);
    admin.alterShareGroupOffsets("g-admin", Map.of(new TopicPartition("share-admin", 0), 2L)).all().get();
    assertThat(offsets("g-admin").get(new TopicPartition("share-admin", 0)).startOffset()).isEqualTo(2);
    List<String> seen = new ArrayList<>();
    try (KafkaShareConsumer<String, String> c = consumer("g-admin", "implicit", Map.of())) {
      c.subscribe(List.of("share-admin"));
      await().atMost(Duration.ofSeconds(60)).until(() -> {
        c.poll(Duration.ofMillis(200)).forEach(r -> seen.add(r.value()));
        return seen.size() >= 6;
      });
    }
    assertThat(seen).containsExactly("v2", "v3", "v4", "v5", "v6", "v7");
    admin.deleteShareGroupOffsets("g-admin", Set.of("share-admin")).all().get();
    assertThat(offsets("g-admin").get(new TopicPartition("share-admin", 0))).isNull();
    admin.deleteShareGroups(List.of("g-admin")).all().get();
    Collection<String> ids = admin.listGroups().all().get().stream().map(g -> g.groupId()).toList();
    assertThat(ids).doesNotContain("g-admin");
  }

  @Test
  void shareStateApisFenceStaleLeadersAndStates() throws Exception {
    // Goal: the share coordinator's wire APIs as a partition leader of another broker sees them: fencing by state and leader
    // epoch; a partition without state (never initialized, deleted, or of a topic no broker knows) is refused and keeps nothing.
    org.apache.kafka.common.Uuid unknown = org.apache.kafka.common.Uuid.randomUuid();
    topic("state-topic", 1);
    org.apache.kafka.common.Uuid topicId = admin.describeTopics(List.of("state-topic")).allTopicNames().get().get("state-topic").topicId();
    try (RawConnection c = new RawConnection(broker.broker.port())) {
      assertThat(initialize(c, unknown, 1, 10)).isEqualTo(org.apache.kafka.common.protocol.Errors.UNKNOWN_TOPIC_OR_PARTITION);
      assertThat(readError(c, unknown, 3)).isEqualTo(org.apache.kafka.common.protocol.Errors.INVALID_REQUEST); // nothing was kept
      assertThat(write(c, unknown, 1, 3, 12)).isEqualTo(org.apache.kafka.common.protocol.Errors.INVALID_REQUEST);
      assertThat(readError(c, topicId, 3)).isEqualTo(org.apache.kafka.common.protocol.Errors.INVALID_REQUEST); // no state yet
      assertThat(initialize(c, topicId, 1, 10)).isEqualTo(org.apache.kafka.common.protocol.Errors.NONE);
      assertThat(initialize(c, topicId, 1, 20)).isEqualTo(org.apache.kafka.common.protocol.Errors.FENCED_STATE_EPOCH);
      var state = read(c, topicId, 3); // raises the stored leader epoch to 3
      assertThat(state.startOffset()).isEqualTo(10);
      assertThat(state.stateEpoch()).isEqualTo(1);
      assertThat(write(c, topicId, 1, 2, 12)).isEqualTo(org.apache.kafka.common.protocol.Errors.FENCED_LEADER_EPOCH);
      assertThat(write(c, topicId, 1, 3, 12)).isEqualTo(org.apache.kafka.common.protocol.Errors.NONE);
      assertThat(write(c, topicId, 0, 3, 13)).isEqualTo(org.apache.kafka.common.protocol.Errors.FENCED_STATE_EPOCH);
      assertThat(read(c, topicId, 3).startOffset()).isEqualTo(12); // the fenced writes changed nothing
      int id = c.send(new org.apache.kafka.common.requests.DeleteShareGroupStateRequest.Builder(
          new org.apache.kafka.common.message.DeleteShareGroupStateRequestData().setGroupId("state-g").setTopics(List.of(
              new org.apache.kafka.common.message.DeleteShareGroupStateRequestData.DeleteStateData().setTopicId(topicId).setPartitions(List.of(
                  new org.apache.kafka.common.message.DeleteShareGroupStateRequestData.PartitionData().setPartition(0)))))), (short) 0);
      assertThat(((org.apache.kafka.common.requests.DeleteShareGroupStateResponse) c.receive(
          org.apache.kafka.common.protocol.ApiKeys.DELETE_SHARE_GROUP_STATE, (short) 0, id)).data().results().get(0).partitions().get(0)
          .errorCode()).isZero();
      assertThat(write(c, topicId, 1, 3, 14)).isEqualTo(org.apache.kafka.common.protocol.Errors.INVALID_REQUEST); // deleted
      assertThat(readError(c, topicId, 3)).isEqualTo(org.apache.kafka.common.protocol.Errors.INVALID_REQUEST);
      assertThat(initialize(c, topicId, 1, 0)).isEqualTo(org.apache.kafka.common.protocol.Errors.FENCED_STATE_EPOCH); // epochs kept
      assertThat(initialize(c, topicId, 2, 0)).isEqualTo(org.apache.kafka.common.protocol.Errors.NONE);
    }
  }

  private static org.apache.kafka.common.protocol.Errors readError(RawConnection c, org.apache.kafka.common.Uuid topicId, int leaderEpoch)
      throws Exception {
    return org.apache.kafka.common.protocol.Errors.forCode(readPartition(c, topicId, leaderEpoch).errorCode());
  }

  private static org.apache.kafka.common.message.ReadShareGroupStateResponseData.PartitionResult read(RawConnection c,
      org.apache.kafka.common.Uuid topicId, int leaderEpoch) throws Exception {
    var p = readPartition(c, topicId, leaderEpoch);
    assertThat(p.errorCode()).isZero();
    return p;
  }

  private static org.apache.kafka.common.message.ReadShareGroupStateResponseData.PartitionResult readPartition(RawConnection c,
      org.apache.kafka.common.Uuid topicId, int leaderEpoch) throws Exception {
    int id = c.send(new org.apache.kafka.common.requests.ReadShareGroupStateRequest.Builder(
        new org.apache.kafka.common.message.ReadShareGroupStateRequestData().setGroupId("state-g").setTopics(List.of(
            new org.apache.kafka.common.message.ReadShareGroupStateRequestData.ReadStateData().setTopicId(topicId).setPartitions(List.of(
                new org.apache.kafka.common.message.ReadShareGroupStateRequestData.PartitionData().setPartition(0)
                    .setLeaderEpoch(leaderEpoch)))))), (short) 0);
    return ((org.apache.kafka.common.requests.ReadShareGroupStateResponse) c.receive(org.apache.kafka.common.protocol.ApiKeys
        .READ_SHARE_GROUP_STATE, (short) 0, id)).data().results().get(0).partitions().get(0);
  }

  private static org.apache.kafka.common.protocol.Errors initialize(RawConnection c, org.apache.kafka.common.Uuid topicId, int stateEpoch,
      long startOffset) throws Exception {
    int id = c.send(new org.apache.kafka.common.requests.InitializeShareGroupStateRequest.Builder(
        new org.apache.kafka.common.message.InitializeShareGroupStateRequestData().setGroupId("state-g").setTopics(List.of(
            new org.apache.kafka.common.message.InitializeShareGroupStateRequestData.InitializeStateData().setTopicId(topicId)
                .setPartitions(List.of(new org.apache.kafka.common.message.InitializeShareGroupStateRequestData.PartitionData()
                    .setPartition(0).setStateEpoch(stateEpoch).setStartOffset(startOffset)))))), (short) 0);
    return org.apache.kafka.common.protocol.Errors.forCode(((org.apache.kafka.common.requests.InitializeShareGroupStateResponse) c.receive(
        org.apache.kafka.common.protocol.ApiKeys.INITIALIZE_SHARE_GROUP_STATE, (short) 0, id)).data().results().get(0).partitions().get(0)
        .errorCode());
  }

  private static org.apache.kafka.common.protocol.Errors write(RawConnection c, org.apache.kafka.common.Uuid topicId, int stateEpoch,
      int leaderEpoch, long startOffset) throws Exception {
    int id = c.send(new org.apache.kafka.common.requests.WriteShareGroupStateRequest.Builder(
        new org.apache.kafka.common.message.WriteShareGroupStateRequestData().setGroupId("state-g").setTopics(List.of(
            new org.apache.kafka.common.message.WriteShareGroupStateRequestData.WriteStateData().setTopicId(topicId)
                .setPartitions(List.of(new org.apache.kafka.common.message.WriteShareGroupStateRequestData.PartitionData()
                    .setPartition(0).setStateEpoch(stateEpoch).setLeaderEpoch(leaderEpoch).setStartOffset(startOffset)))))), (short) 1);
    return org.apache.kafka.common.protocol.Errors.forCode(((org.apache.kafka.common.requests.WriteShareGroupStateResponse) c.receive(
        org.apache.kafka.common.protocol.ApiKeys.WRITE_SHARE_GROUP_STATE, (short) 1, id)).data().results().get(0).partitions().get(0)
        .errorCode());
  }
}
