package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.broker.partition.MemoryStreamStore;
import io.tidemark.stream.config.Settings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: transaction state survives a broker restart on the same streams: the aborted-transaction
 * index and the open transaction come back with the partition (its meta-stream snapshot), so the
 * last stable offset and read_committed answer exactly as before; the coordinator reloads the
 * open transaction from {@code __transaction_state}, and a new producer with the same
 * transactional.id aborts it (markers written after the restart) and commits its own.
 */
class TransactionRestartTest {

  @TempDir
  Path dir;

  private KafkaBroker start(MemoryStreamStore store) {
    Settings s = new Settings(Map.of("kafka.listener.port", "0", "kafka.listener.host", "127.0.0.1",
        "kafka.advertised.host", "127.0.0.1", "kafka.data.dir", dir.toString(), "kafka.group.initial.rebalance.delay.ms", "0"));
    KafkaBroker b = new KafkaBroker(new BrokerConfig(s), store, Time.SYSTEM);
    b.start();
    return b;
  }

  private static KafkaProducer<String, String> producer(KafkaBroker b, String id) {
    KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, b.bootstrapServers(),
        ProducerConfig.TRANSACTIONAL_ID_CONFIG, id, ProducerConfig.MAX_BLOCK_MS_CONFIG, 60_000), new StringSerializer(),
        new StringSerializer());
    p.initTransactions();
    return p;
  }

  private static long lso(KafkaBroker b, TopicPartition tp) throws Exception {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, b.bootstrapServers()))) {
      return admin.listOffsets(Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all().get()
          .get(tp).offset();
    }
  }

  private static List<String> readCommitted(KafkaBroker b, TopicPartition tp) {
    List<String> out = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
        b.bootstrapServers(), ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"), new StringDeserializer(),
        new StringDeserializer())) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long end = consumer.endOffsets(List.of(tp)).get(tp);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (consumer.position(tp) < end) {
        assertThat(System.nanoTime()).isLessThan(deadline);
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          out.add(r.value());
        }
      }
    }
    return out;
  }

  @Test
  void abortedIndexOpenTransactionAndCoordinatorStateSurviveARestart() throws Exception {
    MemoryStreamStore store = new MemoryStreamStore(1L << 30);
    TopicPartition tp = new TopicPartition("durable-txn", 0);
    long openStart = 8;
    try (KafkaBroker b = start(store)) {
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, b.bootstrapServers()))) {
        admin.createTopics(List.of(new NewTopic(tp.topic(), 1, (short) 1))).all().get();
      }
      try (KafkaProducer<String, String> p = producer(b, "done")) {
        p.beginTransaction();
        p.send(new ProducerRecord<>(tp.topic(), "k", "kept"));
        p.commitTransaction();
        p.beginTransaction();
        for (int i = 0; i < 5; i++) {
          p.send(new ProducerRecord<>(tp.topic(), "k", "aborted-" + i));
        }
        p.flush(); // written before the abort (abortTransaction drops what is still unsent)
        p.abortTransaction();
      }
      KafkaProducer<String, String> open = producer(b, "open");
      open.beginTransaction();
      open.send(new ProducerRecord<>(tp.topic(), "k", "never-committed")).get();
      // openStart: kept + marker, 5 aborted + marker
      // the abort's marker follows its EndTxn answer: until it is durable the aborted transaction holds the LSO
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> lso(b, tp) == 8);
      open.close(Duration.ZERO); // the client dies with its transaction open
    }
    try (KafkaBroker b = start(store)) {
      assertThat(lso(b, tp)).as("the open transaction still holds the LSO after the restart").isEqualTo(openStart);
      assertThat(readCommitted(b, tp)).containsExactly("kept");
      try (KafkaProducer<String, String> again = producer(b, "open")) { // fences and aborts the reloaded transaction
        again.beginTransaction();
        again.send(new ProducerRecord<>(tp.topic(), "k", "after-restart"));
        again.commitTransaction();
      }
      assertThat(readCommitted(b, tp)).containsExactly("kept", "after-restart");
    }
    try (KafkaBroker b = start(store)) {
      assertThat(readCommitted(b, tp)).containsExactly("kept", "after-restart");
      assertThat(lso(b, tp)).isEqualTo(12);
    }
  }
}
