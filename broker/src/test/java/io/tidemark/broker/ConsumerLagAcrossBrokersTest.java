package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tidemark.broker.partition.MemoryStreamStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Consumer lag in a cluster (two brokers over one shared in-memory metadata and stream store, real
 * network between them): the group's coordinator exports the lag of every partition of the group,
 * those another broker leads included (their end offsets asked of that broker over the
 * inter-broker listener), and drops the series of a deleted topic. One cluster for the class.
 */
class ConsumerLagAcrossBrokersTest {

  private static final MemoryStreamStore STORE = new MemoryStreamStore(64L << 20);
  private static final SharedClusterMetadata METADATA = new SharedClusterMetadata();
  private static final SimpleMeterRegistry COORDINATOR_METERS = new SimpleMeterRegistry();
  private static KafkaBroker first;
  private static KafkaBroker second;

  @BeforeAll
  static void start() {
    first = start(1, COORDINATOR_METERS); // creates __consumer_offsets alone: the coordinator of every group
    second = start(2, new SimpleMeterRegistry());
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

  private static KafkaBroker start(int id, SimpleMeterRegistry meters) {
    return METADATA.startBroker(id, STORE, meters, Map.of("kafka.offsets.topic.partitions", "4",
        "kafka.transaction.state.log.partitions", "2", "kafka.share.state.topic.partitions", "2",
        "kafka.metrics.consumer.lag.interval.ms", "200"));
  }

  @Test
  void theCoordinatorExportsTheLagOfPartitionsLedByTheOtherBrokerAndDropsADeletedTopic() throws Exception {
    // Goal: lag = produced - committed on the coordinator for a partition led by it and one led by the other broker.
    String topic = "orders";
    String group = "billing";
    int[] produced = {30, 25};
    long[] committed = {10, 7};
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, second.bootstrapServers()))) {
      admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get(30, TimeUnit.SECONDS);
      for (int p = 0; p < 2; p++) { // partition 0 led by broker 1 (the coordinator), partition 1 by broker 2
        TopicPartition tp = new TopicPartition(topic, p);
        int to = p + 1;
        admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(to)))))
            .all().get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(60)).until(() -> first.leaderOf(topic, tp.partition()).orElse(-1) == to
            && (to == 1 ? first : second).partitionLog(tp).isPresent());
      }
      try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
          first.bootstrapServers(), ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.LINGER_MS_CONFIG, "0"),
          new StringSerializer(), new StringSerializer())) {
        for (int p = 0; p < 2; p++) {
          for (int i = 0; i < produced[p]; i++) {
            producer.send(new ProducerRecord<>(topic, p, null, "r" + i));
          }
        }
        producer.flush();
      }
      try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
          second.bootstrapServers(), ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false"),
          new StringDeserializer(), new StringDeserializer())) {
        consumer.assign(List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1)));
        consumer.commitSync(Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(committed[0]),
            new TopicPartition(topic, 1), new OffsetAndMetadata(committed[1])), Duration.ofSeconds(30));
      }
      assertThat(first.leaderOf("__consumer_offsets", 0)).hasValue(1);

      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        assertThat(lag(group, topic, 0)).isEqualTo(produced[0] - committed[0]);
        assertThat(lag(group, topic, 1)).as("partition led by broker 2").isEqualTo(produced[1] - committed[1]);
      });
      assertThat(COORDINATOR_METERS.get("tidemark.kafka.consumer.group.total.lag").tag("group", group).gauge().value())
          .isEqualTo(produced[0] - committed[0] + produced[1] - committed[1]);
      assertThat(COORDINATOR_METERS.get("tidemark.kafka.consumer.group.lag.unknown.partitions").gauge().value()).isZero();

      assertThat(COORDINATOR_METERS.get("tidemark.kafka.produced.bytes").tag("topic", topic).counter().count()).isPositive();
      admin.deleteTopics(List.of(topic)).all().get(30, TimeUnit.SECONDS);
      await().atMost(Duration.ofSeconds(30)).until(() -> COORDINATOR_METERS.find("tidemark.kafka.consumer.group.lag")
          .tag("topic", topic).gauges().isEmpty() && COORDINATOR_METERS.find("tidemark.kafka.produced.bytes")
          .tag("topic", topic).counters().isEmpty());
    }
  }

  /** The coordinator's lag series of one partition, NaN while it has none. */
  private static double lag(String group, String topic, int partition) {
    Gauge g = COORDINATOR_METERS.find("tidemark.kafka.consumer.group.lag").tags("group", group, "topic", topic, "partition",
        Integer.toString(partition)).gauge();
    return g == null ? Double.NaN : g.value();
  }
}
