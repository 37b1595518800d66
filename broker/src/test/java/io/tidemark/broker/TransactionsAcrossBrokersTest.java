package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.broker.partition.MemoryStreamStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Goal: a transaction spans partitions led by two brokers: the coordinator writes markers into
 * the partitions led by the other broker with WriteTxnMarkers over the network, and when the
 * transaction's {@code __transaction_state} partition moves to the other broker in the middle of
 * a transaction, the new coordinator loads it from the log and the commit completes there. On a
 * cluster whose only listener needs SASL, the markers and the leaders' KIP-890 calls to the
 * coordinator (AddPartitionsToTxn v5) authenticate as the broker's inter-broker principal.
 */
class TransactionsAcrossBrokersTest {

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
    return metadata.startBroker(id, store, null, Map.of());
  }

  /** Client settings on top of the bootstrap servers (SASL ones for the secured cluster). */
  private Map<String, Object> clientSecurity = Map.of();

  private Map<String, Object> client(String bootstrap, Object... more) {
    Map<String, Object> c = new java.util.HashMap<>(clientSecurity);
    c.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    for (int i = 0; i < more.length; i += 2) {
      c.put((String) more[i], more[i + 1]);
    }
    return c;
  }

  private KafkaProducer<String, String> producer(String transactionalId) {
    KafkaProducer<String, String> p = new KafkaProducer<>(client(second.bootstrapServers(),
        ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId, ProducerConfig.MAX_BLOCK_MS_CONFIG, 60_000),
        new StringSerializer(), new StringSerializer());
    p.initTransactions();
    return p;
  }

  private List<String> readCommitted(String topic, int partitions) {
    List<String> out = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(client(first.bootstrapServers(),
        ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"), new StringDeserializer(), new StringDeserializer())) {
      List<TopicPartition> tps = new ArrayList<>();
      for (int p = 0; p < partitions; p++) {
        tps.add(new TopicPartition(topic, p));
      }
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      Map<TopicPartition, Long> end = consumer.endOffsets(tps);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (tps.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
        assertThat(System.nanoTime()).isLessThan(deadline);
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          out.add(r.value());
        }
      }
    }
    return out;
  }

  @Test
  void markersReachPartitionsOfTheOtherBrokerAndTheCoordinatorMovesMidTransaction() throws Exception {
    first = start(1); // creates __transaction_state alone: it coordinates every transactional id at first
    second = start(2);
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, second.bootstrapServers()))) {
      admin.createTopics(List.of(new NewTopic("spread", 4, (short) 1))).all().get(30, TimeUnit.SECONDS);
      Set<Integer> leaders = new java.util.HashSet<>();
      for (int p = 0; p < 4; p++) {
        leaders.add(first.leaderOf("spread", p).orElseThrow());
      }
      assertThat(leaders).containsExactlyInAnyOrder(1, 2);

      try (KafkaProducer<String, String> producer = producer("across")) {
        producer.beginTransaction();
        for (int i = 0; i < 40; i++) {
          producer.send(new ProducerRecord<>("spread", i % 4, "k", "aborted-" + i));
        }
        producer.abortTransaction();
        producer.beginTransaction();
        for (int i = 0; i < 40; i++) {
          producer.send(new ProducerRecord<>("spread", i % 4, "k", "committed-" + i));
        }
        producer.commitTransaction();
        assertThat(readCommitted("spread", 4)).hasSize(40).allMatch(v -> v.startsWith("committed-"));

        // move the transaction's coordinator to broker 2 while a transaction is open
        producer.beginTransaction();
        for (int i = 0; i < 40; i++) {
          producer.send(new ProducerRecord<>("spread", i % 4, "k", "moved-" + i));
        }
        producer.flush();
        int logPartition = Math.floorMod("across".hashCode(), 4);
        admin.alterPartitionReassignments(Map.of(new TopicPartition("__transaction_state", logPartition),
            Optional.of(new NewPartitionReassignment(List.of(2))))).all().get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(60)).until(() -> first.leaderOf("__transaction_state", logPartition).orElse(-1) == 2
            && second.partitionLog(new TopicPartition("__transaction_state", logPartition)).isPresent());
        producer.commitTransaction();
      }
    }
    List<String> committed = readCommitted("spread", 4);
    assertThat(committed).hasSize(80).noneMatch(v -> v.startsWith("aborted-"));
    assertThat(committed.stream().filter(v -> v.startsWith("moved-"))).hasSize(40);
  }
  @Test
  void markersAndPartitionVerificationTravelOverASaslInterBrokerListener() throws Exception {
    Map<String, String> sasl = Map.of("listeners", "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms", "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required "
            + "username=\"broker\" password=\"broker-pw\" user_broker=\"broker-pw\" user_app=\"app-pw\";");
    clientSecurity = Map.of("security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN", "sasl.jaas.config",
        "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"app\" password=\"app-pw\";");
    first = metadata.startBroker(1, store, null, sasl); // creates __transaction_state alone: the coordinator of every id
    second = metadata.startBroker(2, store, null, sasl);
    try (Admin admin = Admin.create(client(second.bootstrapServers()))) {
      admin.createTopics(List.of(new NewTopic("secured", 2, (short) 1))).all().get(30, TimeUnit.SECONDS);
      for (int p = 0; p < 2; p++) { // partition 1 led by broker 2: its verification and its marker cross the listener
        TopicPartition tp = new TopicPartition("secured", p);
        int to = p + 1;
        // this metadata bumps the leader epoch even when the partition is already there: it reopens at the new epoch
        admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(to))))).all()
            .get(30, TimeUnit.SECONDS);
        int epoch = metadata.state().topics().get("secured").partitions().get(p).leaderEpoch();
        await().atMost(Duration.ofSeconds(60)).until(() -> first.leaderOf("secured", tp.partition()).orElse(-1) == to
            && (to == 1 ? first : second).partitionLog(tp).map(l -> l.leaderEpoch() == epoch).orElse(false));
      }
      try (KafkaProducer<String, String> producer = producer("secured-txn")) {
        producer.beginTransaction();
        producer.send(new ProducerRecord<>("secured", 0, "k", "aborted-0"));
        producer.send(new ProducerRecord<>("secured", 1, "k", "aborted-1"));
        producer.abortTransaction();
        producer.beginTransaction();
        producer.send(new ProducerRecord<>("secured", 0, "k", "committed-0"));
        producer.send(new ProducerRecord<>("secured", 1, "k", "committed-1"));
        producer.commitTransaction();
      }
      // the LSO of broker 2's partition moves only once the coordinator's marker got there
      assertThat(readCommitted("secured", 2)).containsExactlyInAnyOrder("committed-0", "committed-1");
    }
  }
}
