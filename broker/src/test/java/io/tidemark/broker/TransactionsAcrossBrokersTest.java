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
 * a transaction, the new coordinator loads it from the log and the commit completes there.
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

  private KafkaProducer<String, String> producer(String transactionalId) {
    KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, second.bootstrapServers(),
        ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId, ProducerConfig.MAX_BLOCK_MS_CONFIG, 60_000),
        new StringSerializer(), new StringSerializer());
    p.initTransactions();
    return p;
  }

  private List<String> readCommitted(String topic, int partitions) {
    List<String> out = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
        first.bootstrapServers(), ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"), new StringDeserializer(),
        new StringDeserializer())) {
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
}
