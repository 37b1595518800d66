package io.tidemark.broker.cleaner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.broker.partition.PartitionLog;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: the broker's own compacted topics stop growing when the same keys are written again and
 * again: offset commits of one group ({@code __consumer_offsets}) and the transactions of one
 * transactional id ({@code __transaction_state}), uploaded into shared stream-set objects as small
 * partitions' data is, are cleaned by the automatic cleaner to a few records however many rounds
 * were written.
 */
class InternalTopicsCleaningTest {

  private static final int ROUNDS = 10;
  /** Records a cleaned internal partition may keep: a handful of live keys and their tombstones. */
  private static final long CLEANED_BOUND = 6;

  @TempDir
  Path dir;

  @Test
  void offsetCommitsAndTransactionStateStopGrowing() throws Exception {
    try (CompactedBrokerFixture fixture = new CompactedBrokerFixture(dir, 64L << 20, 200);
        Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, fixture.bootstrap()))) {
      admin.createTopics(List.of(new NewTopic("input", 1, (short) 1))).all().get();
      TopicPartition input = new TopicPartition("input", 0);
      try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
          ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, fixture.bootstrap(), ProducerConfig.TRANSACTIONAL_ID_CONFIG, "copier"),
          new StringSerializer(), new StringSerializer())) {
        producer.initTransactions();
        for (int pass = 0; pass < 2; pass++) {
          for (int round = 0; round < ROUNDS; round++) {
            admin.alterConsumerGroupOffsets("readers", Map.of(input, new OffsetAndMetadata(pass * ROUNDS + round)))
                .all().get(60, TimeUnit.SECONDS);
            producer.beginTransaction();
            producer.send(new ProducerRecord<>("input", 0, "k", "v" + round));
            producer.commitTransaction();
          }
          fixture.upload();
          for (String topic : List.of("__consumer_offsets", "__transaction_state")) {
            assertThat(offsets(fixture, topic)).as("offsets written to %s", topic).isGreaterThanOrEqualTo((pass + 1L) * ROUNDS);
          }
          int done = pass;
          for (String topic : List.of("__consumer_offsets", "__transaction_state")) {
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(300)).untilAsserted(() ->
                assertThat(records(fixture, topic)).as("records left in %s after pass %d", topic, done)
                    .isLessThanOrEqualTo(CLEANED_BOUND));
          }
        }
      }
    }
  }

  /** Offsets written to every open partition of {@code topic} (whatever cleaning removed since). */
  private static long offsets(CompactedBrokerFixture fixture, String topic) {
    long count = 0;
    for (int p = 0; p < 64; p++) {
      Optional<PartitionLog> log = fixture.broker.partitionLog(new TopicPartition(topic, p));
      if (log.isPresent()) {
        count += log.get().highWatermark() - log.get().logStartOffset();
      }
    }
    return count;
  }

  /** Records readable from every open partition of {@code topic}, from its start. */
  private static long records(CompactedBrokerFixture fixture, String topic) throws Exception {
    long count = 0;
    for (int p = 0; p < 64; p++) {
      Optional<PartitionLog> log = fixture.broker.partitionLog(new TopicPartition(topic, p));
      if (log.isEmpty()) {
        continue;
      }
      long offset = log.get().logStartOffset();
      while (offset < log.get().highWatermark()) {
        PartitionLog.RecordPage page = log.get().readRecords(offset, 1 << 16).get(60, TimeUnit.SECONDS);
        count += page.records().size();
        offset = page.nextOffset();
      }
    }
    return count;
  }
}
