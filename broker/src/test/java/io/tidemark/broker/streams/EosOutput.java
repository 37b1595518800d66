package io.tidemark.broker.streams;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.awaitility.Awaitility;

/**
 * The input of {@link EosApp} and the check of its output: reads {@value EosApp#COPY} and
 * {@value EosApp#COUNTS} under {@code read_committed} from their beginning and checks that every
 * acknowledged input record was copied exactly once and that every word's running counts read 1,
 * 2, 3, ... up to its total, nothing repeated or skipped. Used from the test thread only.
 */
public final class EosOutput implements AutoCloseable {

  private static final String[] WORDS = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"};

  private final KafkaConsumer<byte[], byte[]> copyReader;
  private final KafkaConsumer<byte[], byte[]> countsReader;
  private final List<String> copies = new ArrayList<>();
  private final Map<String, List<Long>> counts = new LinkedHashMap<>();

  public EosOutput(String bootstrap, int partitions) {
    copyReader = reader(bootstrap, EosApp.COPY, partitions);
    countsReader = reader(bootstrap, EosApp.COUNTS, partitions);
  }

  /** The word of input record {@code i}. */
  public static String word(int i) {
    return WORDS[(i * 31 + i / 7) % WORDS.length];
  }

  /** The value of input record {@code i} ({@code word:i}; its key is {@code r<i>}). */
  public static String value(int i) {
    return word(i) + ":" + i;
  }

  /** Each word's total over input records 0 to {@code records - 1}. */
  public static Map<String, Long> expectedCounts(int records) {
    Map<String, Long> expected = new HashMap<>();
    for (int i = 0; i < records; i++) {
      expected.merge(word(i), 1L, Long::sum);
    }
    return expected;
  }

  /** Waits until the copies and every word's counts reach the totals of {@code records} input records. */
  public void awaitTotals(int records, Duration atMost) {
    Map<String, Long> expected = expectedCounts(records);
    Awaitility.await().atMost(atMost).pollInterval(Duration.ofMillis(10)).until(() -> {
      read();
      return copies.size() >= records && expected.keySet().stream()
          .allMatch(w -> counts.getOrDefault(w, List.of()).size() >= expected.get(w));
    });
  }

  /**
   * Reads on for {@code quiet} (a duplicate would show up after the totals were reached), then
   * checks the output of {@code records} input records whose values {@code acked} were acknowledged.
   */
  public void assertExactlyOnce(int records, Collection<String> acked, Duration quiet) {
    long until = System.nanoTime() + quiet.toNanos();
    while (System.nanoTime() < until) {
      read();
    }
    assertThat(copies).as("every input record copied exactly once").hasSize(records).doesNotHaveDuplicates()
        .containsExactlyInAnyOrderElementsOf(acked);
    expectedCounts(records).forEach((word, total) -> {
      List<Long> exact = new ArrayList<>();
      for (long n = 1; n <= total; n++) {
        exact.add(n);
      }
      assertThat(counts.get(word)).as("running counts of " + word).isEqualTo(exact);
    });
  }

  private void read() {
    copyReader.poll(Duration.ofMillis(100)).forEach(r -> copies.add(new String(r.value(), StandardCharsets.UTF_8)));
    countsReader.poll(Duration.ofMillis(100)).forEach(r -> counts.computeIfAbsent(new String(r.key(), StandardCharsets.UTF_8),
        k -> new ArrayList<>()).add(new LongDeserializer().deserialize("", r.value())));
  }

  /** The sum of a topic's partitions' end offsets as {@code isolation} sees them. */
  public static long endOffsets(String bootstrap, String topic, int partitions, String isolation) {
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
        ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation), new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      return c.endOffsets(partitions(topic, partitions), Duration.ofSeconds(60)).values().stream().mapToLong(Long::longValue).sum();
    }
  }

  private static List<TopicPartition> partitions(String topic, int partitions) {
    List<TopicPartition> tps = new ArrayList<>();
    for (int i = 0; i < partitions; i++) {
      tps.add(new TopicPartition(topic, i));
    }
    return tps;
  }

  private static KafkaConsumer<byte[], byte[]> reader(String bootstrap, String topic, int partitions) {
    Map<String, Object> p = new HashMap<>();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TimeUnit.MINUTES.toMillis(2));
    KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    consumer.assign(partitions(topic, partitions));
    consumer.seekToBeginning(partitions(topic, partitions));
    return consumer;
  }

  @Override
  public void close() {
    copyReader.close();
    countsReader.close();
  }
}
