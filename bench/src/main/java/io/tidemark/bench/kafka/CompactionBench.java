package io.tidemark.bench.kafka;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Compaction throughput of one broker, measured from outside the same way for Tidemark and Kafka:
 * a compacted topic of one partition gets {@code mib} MiB of 1 KiB records whose keys cycle over
 * {@code keys} keys, so everything but the last {@code keys} records is superseded, then a filler
 * larger than one segment (so that Kafka's active segment, which it never cleans, holds none of
 * it). Cleaning is held back by {@code min.compaction.lag.ms} of an hour while writing; the clock
 * starts when it is set to 0 and stops when a read from offset 0 first returns an offset at or
 * above the first of the last {@code keys} records: every superseded record is gone. The result is
 * the written (superseded plus kept) MiB over that time. Both brokers run one cleaner thread and
 * look for work every {@link #CLEANER_BACKOFF_MS} ms ({@link #EXTRA}). Stateless.
 */
final class CompactionBench {

  /** How often both brokers' cleaners look for work (Kafka's default is 15 s, Tidemark's 30 s). */
  static final int CLEANER_BACKOFF_MS = 500;

  /** The broker settings of the compaction measurement: the same backoff on both, everything else default. */
  static final Contender.Extra EXTRA = new Contender.Extra(
      "# Compaction benchmark: the cleaner looks for work every " + CLEANER_BACKOFF_MS + " ms.\nlog.cleaner.backoff.ms="
          + CLEANER_BACKOFF_MS + "\n",
      "# Compaction benchmark: the cleaner looks for work every " + CLEANER_BACKOFF_MS + " ms.\nkafka.log.cleaner.interval.ms="
          + CLEANER_BACKOFF_MS + "\n");

  private static final int SEGMENT_BYTES = 8 << 20;
  private static final Duration LIMIT = Duration.ofMinutes(10);

  private CompactionBench() {}

  /** One measurement: MiB of log cleaned per second, and the seconds it took. */
  record Result(double mibPerSecond, double seconds) {}

  static Result measure(BrokerNode node, String topic, int mib, int keys) throws Exception {
    node.createTopic(topic, 1, Map.of("cleanup.policy", "compact", "min.compaction.lag.ms", "3600000",
        "segment.bytes", Integer.toString(SEGMENT_BYTES)));
    long records = (long) mib * (1 << 20) / KafkaTools.RECORD_BYTES;
    if (keys < 1 || keys >= records) {
      throw new IllegalArgumentException("keys " + keys + " must be between 1 and the record count " + records);
    }
    Map<String, Object> config = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, node.bootstrap(),
        ProducerConfig.ACKS_CONFIG, KafkaTools.ACKS, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false",
        ProducerConfig.LINGER_MS_CONFIG, "5", ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(256 << 10));
    byte[] value = new byte[KafkaTools.RECORD_BYTES];
    new Random(7).nextBytes(value);
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer())) {
      for (long i = 0; i < records; i++) {
        producer.send(new ProducerRecord<>(topic, 0, key("key-", i % keys), value));
      }
      for (long i = 0; i < SEGMENT_BYTES / KafkaTools.RECORD_BYTES + 1024; i++) {
        producer.send(new ProducerRecord<>(topic, 0, key("filler-", i), value));
      }
      producer.flush();
    }
    long firstKept = records - keys;
    TopicPartition tp = new TopicPartition(topic, 0);
    Map<String, Object> consumerConfig = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, node.bootstrap(),
        ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, "16384", ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "1",
        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerConfig, new ByteArrayDeserializer(),
        new ByteArrayDeserializer())) {
      consumer.assign(List.of(tp));
      long started = System.nanoTime();
      node.setTopicConfig(topic, "min.compaction.lag.ms", "0");
      long deadline = started + LIMIT.toNanos();
      while (System.nanoTime() < deadline) {
        node.requireAlive();
        if (firstRecordOffset(consumer, tp) >= firstKept) {
          double seconds = (System.nanoTime() - started) / 1e9;
          return new Result(mib / seconds, seconds);
        }
        Thread.sleep(100);
      }
      throw new IllegalStateException(node.label() + " did not clean " + topic + " within " + LIMIT.toSeconds() + " s");
    }
  }

  /**
   * The offset of the first record a read from offset 0 returns (polls past batches left empty by
   * cleaning), or -1 when none came within 10 s.
   */
  private static long firstRecordOffset(KafkaConsumer<byte[], byte[]> consumer, TopicPartition tp) {
    consumer.seek(tp, 0);
    long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (System.nanoTime() < until) {
      ConsumerRecords<byte[], byte[]> polled = consumer.poll(Duration.ofMillis(200));
      if (!polled.isEmpty()) {
        return polled.records(tp).getFirst().offset();
      }
    }
    return -1;
  }

  private static byte[] key(String prefix, long n) {
    return String.format(java.util.Locale.ROOT, "%s%09d", prefix, n).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  }
}
