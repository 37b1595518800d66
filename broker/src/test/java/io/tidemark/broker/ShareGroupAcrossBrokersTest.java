package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.broker.partition.MemoryStreamStore;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.internals.Exit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Share groups on two brokers (one shared in-memory metadata and stream store, real network
 * between them and to the clients): the group coordinator, the share coordinators (leaders of
 * {@code __share_group_state} partitions) and the data partitions' leaders sit on different
 * brokers, so share state travels over the inter-broker share-state APIs; a data partition and a
 * state partition move in the middle. One cluster for the class.
 */
class ShareGroupAcrossBrokersTest {

  private static final MemoryStreamStore STORE = new MemoryStreamStore(256L << 20);
  private static final SharedClusterMetadata METADATA = new SharedClusterMetadata();
  private static KafkaBroker first;
  private static KafkaBroker second;

  @BeforeAll
  static void start() {
    first = start(1); // creates __consumer_offsets and __share_group_state alone: coordinator of every group and share partition
    second = start(2);
  }

  @AfterAll
  static void stop() {
    for (KafkaBroker b : new KafkaBroker[] {second, first}) {
      if (b != null) {
        b.close();
      }
    }
    STORE.close();
  }

  private static KafkaBroker start(int id) {
    return METADATA.startBroker(id, STORE, null, Map.of("kafka.share.state.topic.partitions", "4"));
  }

  private static Admin admin() {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, second.bootstrapServers()));
  }

  private static void move(Admin admin, TopicPartition tp, int to) throws Exception {
    admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(to))))).all().get(30, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(60)).until(() -> first.leaderOf(tp.topic(), tp.partition()).orElse(-1) == to
        && (to == 1 ? first : second).partitionLog(tp).isPresent());
  }

  private static KafkaProducer<String, String> producer() {
    return new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, second.bootstrapServers(), ProducerConfig.ACKS_CONFIG, "all"),
        new StringSerializer(), new StringSerializer());
  }

  @Test
  void consumersOnBothBrokersShareRecordsThroughMovesWithNoneLostOrAcknowledgedTwice() throws Exception {
    // Goal: every record acknowledged exactly once across brokers, a release redelivered, data and state partitions moved mid-run.
    String topic = "jobs";
    int records = 300;
    try (Admin admin = admin()) {
      admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get(30, TimeUnit.SECONDS);
      for (int p = 0; p < 2; p++) { // one data partition per broker
        move(admin, new TopicPartition(topic, p), p + 1);
      }
      // the state partitions are all on broker 1: move two of them to broker 2, so both brokers coordinate share state
      move(admin, new TopicPartition("__share_group_state", 0), 2);
      move(admin, new TopicPartition("__share_group_state", 1), 2);
      // a group config set through either broker reaches the partition leaders of both (the coordinator is broker 1)
      admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, "workers"), List.of(new AlterConfigOp(
          new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
    }
    try (KafkaProducer<String, String> producer = producer()) { // before any consumer: read because of "earliest"
      for (int i = 0; i < records / 2; i++) {
        producer.send(new ProducerRecord<>(topic, i % 2, null, "r" + i)).get(30, TimeUnit.SECONDS);
      }
    }

    Map<String, Integer> accepted = new ConcurrentHashMap<>();
    Set<String> released = ConcurrentHashMap.newKeySet();
    ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
    AtomicBoolean running = new AtomicBoolean(true);
    List<Thread> consumers = new ArrayList<>();
    for (int c = 0; c < 3; c++) {
      String bootstrap = (c % 2 == 0 ? first : second).bootstrapServers();
      Thread t = new Thread(() -> consume(bootstrap, topic, accepted, released, problems, running), "share-consumer-" + c);
      t.start();
      consumers.add(t);
    }
    try (Admin admin = admin()) {
      await().atMost(Duration.ofSeconds(60)).until(() -> accepted.size() >= records / 8 || !problems.isEmpty());
      move(admin, new TopicPartition(topic, 1), 1); // the data partition led by broker 2 moves to broker 1 mid-run
      move(admin, new TopicPartition("__share_group_state", 2), 2); // and a state partition of broker 1 to broker 2
      try (KafkaProducer<String, String> producer = producer()) {
        for (int i = records / 2; i < records; i++) {
          producer.send(new ProducerRecord<>(topic, i % 2, null, "r" + i)).get(30, TimeUnit.SECONDS);
        }
      }
      try {
        await().atMost(Duration.ofSeconds(120)).until(() -> accepted.size() == records || !problems.isEmpty());
      } catch (org.awaitility.core.ConditionTimeoutException e) {
        List<String> missing = new ArrayList<>();
        for (int i = 0; i < records; i++) {
          if (!accepted.containsKey("r" + i)) {
            missing.add("r" + i);
          }
        }
        throw new AssertionError("accepted " + accepted.size() + " of " + records + "; missing " + missing + "; offsets "
            + admin.listShareGroupOffsets(Map.of("workers", new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo("workers")
                .get(30, TimeUnit.SECONDS), e);
      }
      running.set(false);
      for (Thread t : consumers) {
        t.join(30_000);
      }
      assertThat(problems).isEmpty();
      assertThat(accepted).hasSize(records);
      assertThat(accepted.values()).allMatch(n -> n == 1);
      assertThat(released).isNotEmpty();

      // the group's offsets, read by the group coordinator (broker 1) from the share coordinators of both brokers, with the lag
      // of a partition led by broker 2 asked of it
      move(admin, new TopicPartition(topic, 1), 2);
      await().atMost(Duration.ofSeconds(30)).until(() -> admin.listShareGroupOffsets(Map.of("workers", new ListShareGroupOffsetsSpec()))
          .partitionsToOffsetInfo("workers").get(30, TimeUnit.SECONDS).values().stream()
          .allMatch(o -> o.startOffset() == records / 2 && o.lag().orElse(-1L) == 0));
    }
    String describe = shareGroupsDescribe(second.bootstrapServers(), "workers");
    assertThat(describe).containsPattern("workers\\s+jobs\\s+0\\s+" + records / 2 + "\\s+0\\b")
        .containsPattern("workers\\s+jobs\\s+1\\s+" + records / 2 + "\\s+0\\b");
  }

  /** A share consumer in explicit mode: accepts each record, except the first delivery of every tenth, which it releases. */
  private static void consume(String bootstrap, String topic, Map<String, Integer> accepted, Set<String> released,
      ConcurrentLinkedQueue<String> problems, AtomicBoolean running) {
    try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(Map.of("bootstrap.servers", bootstrap, "group.id", "workers",
        "share.acknowledgement.mode", "explicit"), new StringDeserializer(), new StringDeserializer())) {
      consumer.subscribe(List.of(topic));
      while (running.get()) {
        Map<Integer, List<String>> acceptedNow = new HashMap<>();
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
          if (accepted.containsKey(r.value())) {
            problems.add(r.value() + " delivered again after its acceptance was acknowledged");
          }
          int n = Integer.parseInt(r.value().substring(1));
          if (n % 10 == 0 && r.deliveryCount().orElse((short) 1) == 1) {
            consumer.acknowledge(r, AcknowledgeType.RELEASE);
            released.add(r.value());
          } else {
            consumer.acknowledge(r, AcknowledgeType.ACCEPT);
            acceptedNow.computeIfAbsent(r.partition(), p -> new ArrayList<>()).add(r.value());
          }
        }
        Map<TopicIdPartition, Optional<KafkaException>> result = consumer.commitSync(Duration.ofSeconds(30));
        result.forEach((tip, error) -> {
          if (error.isEmpty()) {
            acceptedNow.getOrDefault(tip.partition(), List.of()).forEach(v -> accepted.merge(v, 1, Integer::sum));
          }
        });
      }
    } catch (RuntimeException e) {
      problems.add("consumer failed: " + e);
    }
  }

  /** {@code kafka-share-groups --describe --group g} through the tool's class, its output. */
  private static synchronized String shareGroupsDescribe(String bootstrap, String group) {
    PrintStream oldOut = System.out;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    Exit.setExitProcedure((code, message) -> {
      throw new IllegalStateException("kafka-share-groups exited with " + code + ": " + message);
    });
    try {
      org.apache.kafka.tools.consumer.group.ShareGroupCommand.main(new String[] {"--bootstrap-server", bootstrap, "--describe", "--group",
          group});
    } catch (IllegalStateException e) {
      if (!e.getMessage().contains("exited with 0")) {
        throw e;
      }
    } finally {
      System.setOut(oldOut);
      Exit.resetExitProcedure();
    }
    String text = out.toString(StandardCharsets.UTF_8);
    oldOut.println(text);
    return text;
  }
}
