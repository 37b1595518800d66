package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.broker.partition.MemoryStreamStore;
import io.tidemark.stream.config.Settings;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Two brokers over one shared in-memory metadata and stream store: leadership is spread, each
 * broker serves only what it leads and sends clients to the other for the rest, and real clients
 * follow. The controller-backed metadata is covered by the server's three-node test.
 */
class TwoBrokerTest {

  private final MemoryStreamStore store = new MemoryStreamStore(256L << 20);
  private final SharedClusterMetadata metadata = new SharedClusterMetadata();
  private KafkaBroker first;
  private KafkaBroker second;

  @AfterEach
  void stop() {
    for (KafkaBroker b : new KafkaBroker[] {second, first}) {
      if (b != null) {
        b.close();
      }
    }
    store.close();
  }

  private KafkaBroker start(int id) {
    return start(id, store);
  }

  private KafkaBroker start(int id, io.tidemark.stream.api.StreamStore streams) {
    Map<String, String> s = new HashMap<>();
    s.put("kafka.node.id", Integer.toString(id));
    s.put("kafka.listener.port", "0");
    s.put("kafka.listener.host", "127.0.0.1");
    s.put("kafka.advertised.host", "127.0.0.1");
    s.put("kafka.group.initial.rebalance.delay.ms", "0");
    KafkaBroker broker = new KafkaBroker(new BrokerConfig(new Settings(s)), streams, Time.SYSTEM, metadata);
    broker.start();
    metadata.live(id, broker.port());
    return broker;
  }

  @Test
  void eachBrokerServesWhatItLeadsAndClientsFollow() throws Exception {
    // Goal: placement spreads leaders; non-leaders answer NOT_LEADER_OR_FOLLOWER / NOT_COORDINATOR; clients follow metadata.
    first = start(1); // creates __consumer_offsets alone: it coordinates every group
    second = start(2);
    Map<Integer, Long> perLeader;
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, second.bootstrapServers()))) {
      assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).extracting(Node::id).containsExactlyInAnyOrder(1, 2);
      admin.createTopics(List.of(new NewTopic("t", 4, (short) 1))).all().get(30, TimeUnit.SECONDS);
      TopicDescription t = admin.describeTopics(List.of("t")).allTopicNames().get(30, TimeUnit.SECONDS).get("t");
      perLeader = t.partitions().stream().collect(Collectors.groupingBy(p -> p.leader().id(), Collectors.counting()));
    }
    assertThat(perLeader).containsOnly(Map.entry(1, 2L), Map.entry(2, 2L));

    try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, second.bootstrapServers(), ProducerConfig.ACKS_CONFIG, "all"),
        new StringSerializer(), new StringSerializer())) {
      for (int i = 0; i < 40; i++) {
        producer.send(new ProducerRecord<>("t", i % 4, "k", "v" + i)).get(30, TimeUnit.SECONDS);
      }
    }
    Set<String> read = new HashSet<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, second.bootstrapServers(), ConsumerConfig.GROUP_ID_CONFIG, "g",
        ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new StringDeserializer(), new StringDeserializer())) {
      consumer.subscribe(List.of("t"));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (read.size() < 40 && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          assertThat(read.add(r.value())).isTrue();
        }
      }
    }
    assertThat(read).hasSize(40);

    try (RawConnection c = new RawConnection(second.port())) {
      int id = c.send(new FindCoordinatorRequest.Builder(new FindCoordinatorRequestData().setKeyType((byte) 0)
          .setCoordinatorKeys(List.of("g"))), (short) 4);
      FindCoordinatorResponse found = (FindCoordinatorResponse) c.receive(ApiKeys.FIND_COORDINATOR, (short) 4, id);
      assertThat(found.data().coordinators().get(0).nodeId()).isEqualTo(1);
      assertThat(found.data().coordinators().get(0).port()).isEqualTo(first.port());

      id = c.send(new JoinGroupRequest.Builder(new JoinGroupRequestData().setGroupId("g").setMemberId("")
          .setProtocolType("consumer").setSessionTimeoutMs(10_000).setRebalanceTimeoutMs(10_000)), (short) 5);
      JoinGroupResponse join = (JoinGroupResponse) c.receive(ApiKeys.JOIN_GROUP, (short) 5, id);
      assertThat(join.error()).isEqualTo(Errors.NOT_COORDINATOR);

      ListOffsetsRequestData.ListOffsetsTopic topic = new ListOffsetsRequestData.ListOffsetsTopic().setName("t");
      for (int p = 0; p < 4; p++) {
        topic.partitions().add(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(p).setTimestamp(-1));
      }
      id = c.send(ListOffsetsRequest.Builder.forConsumer(false, IsolationLevel.READ_UNCOMMITTED).setTargetTimes(List.of(topic)),
          (short) 7);
      ListOffsetsResponse offsets = (ListOffsetsResponse) c.receive(ApiKeys.LIST_OFFSETS, (short) 7, id);
      long notLeader = offsets.data().topics().get(0).partitions().stream()
          .filter(p -> p.errorCode() == Errors.NOT_LEADER_OR_FOLLOWER.code()).count();
      long served = offsets.data().topics().get(0).partitions().stream()
          .filter(p -> p.errorCode() == Errors.NONE.code() && p.offset() == 10).count();
      assertThat(notLeader).isEqualTo(perLeader.get(1));
      assertThat(served).isEqualTo(perLeader.get(2));
    }
  }

  @Test
  void aPartitionThatCouldNotOpenIsRetriedWithoutAnotherChange() throws Exception {
    // Goal: when a broker cannot open a partition newly led there (storage unreachable for a moment), its lifecycle
    // retries by itself; it does not wait for another metadata change, which may never come.
    java.util.concurrent.atomic.AtomicInteger failOpens = new java.util.concurrent.atomic.AtomicInteger();
    io.tidemark.stream.api.StreamStore flaky = new io.tidemark.stream.api.StreamStore() {
      @Override public java.util.concurrent.CompletableFuture<Long> createStream(Map<String, String> tags) {
        return store.createStream(tags);
      }
      @Override public java.util.concurrent.CompletableFuture<io.tidemark.stream.api.Stream> openStream(long id, long epoch) {
        if (failOpens.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
          return java.util.concurrent.CompletableFuture.failedFuture(
              new io.tidemark.stream.api.StreamException("injected: object storage unreachable"));
        }
        return store.openStream(id, epoch);
      }
      @Override public java.util.Optional<io.tidemark.stream.api.Stream> stream(long id) { return store.stream(id); }
      @Override public void close() {}
    };
    first = start(1);
    second = start(2, flaky);
    failOpens.set(3);
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, first.bootstrapServers()))) {
      admin.createTopics(List.of(new NewTopic("r", 4, (short) 1))).all().get(30, TimeUnit.SECONDS);
    }
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, first.bootstrapServers(), ProducerConfig.ACKS_CONFIG, "all",
        ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000), new StringSerializer(), new StringSerializer())) {
      for (int p = 0; p < 4; p++) {
        producer.send(new ProducerRecord<>("r", p, "k", "v" + p)).get(90, TimeUnit.SECONDS);
      }
    }
    assertThat(failOpens.get()).as("the injected failures happened").isZero();
  }
}
