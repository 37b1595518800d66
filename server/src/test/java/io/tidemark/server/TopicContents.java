package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/** Reads a whole topic back with a real consumer, for tests that compare a table with its topic. */
final class TopicContents {

  private TopicContents() {}

  /** Where a record is: partition and offset. */
  record Position(int partition, long offset) {}

  /** Every record of {@code topic} (string keys and values), by partition and offset; fails unless all are read. */
  static Map<Position, ConsumerRecord<String, String>> read(String bootstrap, String topic, int partitions) {
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    Map<Position, ConsumerRecord<String, String>> out = new HashMap<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
      List<TopicPartition> tps = new ArrayList<>();
      for (int p = 0; p < partitions; p++) {
        tps.add(new TopicPartition(topic, p));
      }
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
      long stop = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (tps.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp)) && System.nanoTime() < stop) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
          out.put(new Position(r.partition(), r.offset()), r);
        }
      }
      long total = ends.values().stream().mapToLong(Long::longValue).sum();
      assertThat((long) out.size()).as("read the whole topic").isEqualTo(total);
    }
    return out;
  }
}
