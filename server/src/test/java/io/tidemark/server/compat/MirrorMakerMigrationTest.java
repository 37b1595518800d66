package io.tidemark.server.compat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.server.TidemarkServer;
import io.tidemark.server.docs.DocCommands;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: docs/migration.md works: Apache Kafka's MirrorMaker 2, run as the page says
 * ({@code org.apache.kafka.connect.mirror.MirrorMaker}, what {@code bin/connect-mirror-maker.sh} runs,
 * with the page's {@code mm2.properties}, only the two bootstrap addresses replaced), copies a topic
 * of Apache Kafka 4.4 ({@link KafkaReference}) into a Tidemark node, records written before and while
 * it runs, and a consumer group moved to Tidemark resumes from its translated offsets.
 *
 * <p>Checked: every partition in Tidemark holds exactly the Kafka partition's records, in order, at
 * the same offsets, with the same keys, values, headers and timestamps; MirrorMaker commits the
 * group's translated offsets in Tidemark, never past the offsets the group committed in Kafka
 * (MirrorMaker 2 translates to the newest offset mapping it kept at or below the committed offset,
 * so a moved group may read some records again, never skip one); a consumer of that group on
 * Tidemark reads from exactly those offsets to the end. MirrorMaker runs in its own JVM on the class
 * path of {@code server/mirror-maker} (connect-mirror 4.3.1 with its declared dependencies; 4.4.0 is
 * not served here).
 *
 * <p>Sizes: 40 records per partition in the default suite, which pays only the fixed cost (a Kafka
 * JVM, a MirrorMaker JVM and MirrorMaker's 5 s sync intervals); 20,000 per partition with
 * {@code -Dtidemark.test.scale=full}.
 */
class MirrorMakerMigrationTest {

  private static final Path CLASSPATH = Path.of("mirror-maker", "target", "mirror-maker.classpath");
  private static final String TOPIC = "orders";
  private static final String GROUP = "billing";
  private static final String WARM_UP = "warm-up";
  private static final int PARTITIONS = 3;
  private static final Duration COPY_TIMEOUT = Duration.ofMinutes(3);
  private static final boolean FULL = "full".equals(System.getProperty("tidemark.test.scale"));

  @TempDir
  Path dir;

  @Test
  void mirrorMakerCopiesRecordsAndGroupOffsetsFromKafkaIntoTidemark() throws Exception {
    int perPartition = FULL ? 20_000 : 40;
    int later = perPartition / 4;
    assertThat(CLASSPATH).as("the MirrorMaker class path is resolved by the server/mirror-maker module").exists();
    String mm2Properties = documentedProperties();

    long begun = System.nanoTime();
    CompletableFuture<KafkaReference> kafkaStarting = KafkaReference.startInBackground(dir.resolve("kafka"),
        Map.of("group.initial.rebalance.delay.ms", "0"));
    Process mirror = null;
    try (TidemarkServer tidemark = TidemarkPeer.start(dir.resolve("tidemark"));
        KafkaReference kafka = kafkaStarting.join();
        Admin source = admin(kafka.bootstrap());
        Admin target = admin("127.0.0.1:" + tidemark.kafkaPort().orElseThrow())) {
      String targetBootstrap = "127.0.0.1:" + tidemark.kafkaPort().orElseThrow();
      source.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1), new NewTopic(WARM_UP, 1, (short) 1)))
          .all().get(30, TimeUnit.SECONDS);
      long started = System.nanoTime();
      System.out.printf("MirrorMaker test: Kafka and Tidemark ready after %d ms%n", (started - begun) / 1_000_000);
      produce(kafka.bootstrap(), 0, perPartition);
      // A group that read the one record of another topic: once MirrorMaker commits its offset in Tidemark, its
      // checkpoint task has read the offset syncs written so far and adds new ones as they come.
      try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
          kafka.bootstrap()), new ByteArraySerializer(), new ByteArraySerializer())) {
        producer.send(new ProducerRecord<>(WARM_UP, 0, null, new byte[] {1})).get(30, TimeUnit.SECONDS);
      }
      TopicPartition warmUp = new TopicPartition(WARM_UP, 0);
      source.alterConsumerGroupOffsets(WARM_UP, Map.of(warmUp, new OffsetAndMetadata(1))).all().get(30, TimeUnit.SECONDS);

      Path config = dir.resolve("mm2.properties");
      Files.writeString(config, mm2Properties.replace("kafka-1:9092", kafka.bootstrap()).replace("tidemark:9092", targetBootstrap));
      mirror = startMirrorMaker(config);
      Process running = mirror;
      await().atMost(COPY_TIMEOUT).pollInterval(Duration.ofMillis(500)).ignoreExceptions().untilAsserted(() -> {
        assertThat(running.isAlive()).as("MirrorMaker runs; see " + dir.resolve("mirror-maker.log")).isTrue();
        assertThat(target.listConsumerGroupOffsets(WARM_UP).partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS))
            .as("the warm-up group's offset, translated by MirrorMaker").containsKey(warmUp);
      });

      // Producers still write to Kafka while MirrorMaker runs. MirrorMaker 2 translates a committed offset only with an
      // offset sync at or below it that its checkpoint task still holds, and a checkpoint task keeps only the newest sync
      // of each partition from those written before it started (KAFKA-15905): the offsets the group commits lie among
      // the records written after the warm-up, so translating them never depends on when MirrorMaker's tasks started.
      produce(kafka.bootstrap(), perPartition, later);
      // The group read partition 0 to the end, partition 1 to 3 records before it, partition 2 barely past the first batch.
      Map<TopicPartition, Long> committed = Map.of(new TopicPartition(TOPIC, 0), (long) perPartition + later,
          new TopicPartition(TOPIC, 1), (long) perPartition + later - 3, new TopicPartition(TOPIC, 2), (long) perPartition + 2);
      Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
      committed.forEach((tp, offset) -> commit.put(tp, new OffsetAndMetadata(offset)));
      source.alterConsumerGroupOffsets(GROUP, commit).all().get(30, TimeUnit.SECONDS);
      Map<TopicPartition, List<Copy>> expected = readAll(kafka.bootstrap());
      assertThat(expected.values()).allSatisfy(records -> assertThat(records).hasSize(perPartition + later));
      await().atMost(COPY_TIMEOUT).pollInterval(Duration.ofMillis(500)).ignoreExceptions().untilAsserted(() -> {
        assertThat(running.isAlive()).as("MirrorMaker runs; see " + dir.resolve("mirror-maker.log")).isTrue();
        assertThat(endOffsets(target)).isEqualTo(endOffsets(source));
      });
      long copied = System.nanoTime();
      assertThat(readAll(targetBootstrap)).as("every record, in order, at its offset, with key, value, headers and timestamp")
          .isEqualTo(expected);

      await().atMost(COPY_TIMEOUT).pollInterval(Duration.ofMillis(500)).ignoreExceptions().untilAsserted(() -> {
        assertThat(running.isAlive()).as("MirrorMaker runs; see " + dir.resolve("mirror-maker.log")).isTrue();
        Map<TopicPartition, OffsetAndMetadata> offsets = target.listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata()
            .get(10, TimeUnit.SECONDS);
        Map<TopicPartition, Long> translated = new HashMap<>();
        offsets.forEach((tp, o) -> translated.put(tp, o.offset()));
        assertThat(translated).as("the group's offsets in Tidemark, translated by MirrorMaker")
            .containsOnlyKeys(committed.keySet());
        assertThat(translated.values()).allSatisfy(offset -> assertThat(offset).isPositive());
      });
      long synced = System.nanoTime();
      // MirrorMaker may still move the offsets forward until it stops: the group resumes from the last ones.
      stop(mirror);
      mirror = null;
      Map<TopicPartition, Long> translated = new HashMap<>();
      target.listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS)
          .forEach((tp, o) -> translated.put(tp, o.offset()));
      System.out.printf("MirrorMaker: %d records copied %d ms after the start; group offsets in Tidemark %s (committed in Kafka: %s)"
          + " %d ms after the start%n", PARTITIONS * (perPartition + later), (copied - started) / 1_000_000, new TreeMap<>(
              translated.entrySet().stream().collect(java.util.stream.Collectors.toMap(e -> e.getKey().toString(), Map.Entry::getValue))),
          committed, (synced - started) / 1_000_000);
      translated.forEach((tp, offset) -> assertThat(offset).as("never past what the group committed in Kafka, " + tp)
          .isLessThanOrEqualTo(committed.get(tp)).isNotNegative());

      // The moved consumers: same group id, auto.offset.reset=earliest as docs/migration.md says (a partition without a
      // translated offset starts at its beginning). They read from the translated offsets: at least once, nothing skipped.
      Map<TopicPartition, List<Copy>> resumed = consumeGroup(targetBootstrap, expected, translated);
      for (TopicPartition tp : expected.keySet()) {
        List<Copy> all = expected.get(tp);
        int from = translated.getOrDefault(tp, 0L).intValue();
        assertThat(resumed.get(tp)).as("the group resumes on Tidemark from %d on %s", from, tp)
            .isEqualTo(all.subList(from, all.size()));
      }
    } finally {
      if (mirror != null) {
        stop(mirror);
      }
      if (kafkaStarting.isDone() && !kafkaStarting.isCompletedExceptionally()) {
        kafkaStarting.join().close();
      } else {
        kafkaStarting.thenAccept(k -> {
          try {
            k.close();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
      }
    }
  }

  /** A record as a consumer sees it, minus what may differ between clusters (nothing: offsets too). */
  record Copy(long offset, String key, String value, long timestamp, List<String> headers) {}

  /** The page's mm2.properties block, checked to name the two addresses the test replaces. */
  private static String documentedProperties() throws Exception {
    String page = Files.readString(DocCommands.repositoryRoot().resolve("docs/migration.md"));
    Matcher block = Pattern.compile("## 1\\. Write mm2\\.properties.*?```properties\\n(.*?)```", Pattern.DOTALL).matcher(page);
    assertThat(block.find()).as("docs/migration.md has the mm2.properties block").isTrue();
    String properties = block.group(1);
    assertThat(properties).contains("kafka.bootstrap.servers = kafka-1:9092", "tidemark.bootstrap.servers = tidemark:9092",
        "sync.group.offsets.enabled = true");
    assertThat(page).as("the page runs what this test runs").contains("bin/connect-mirror-maker.sh mm2.properties");
    return properties;
  }

  private Process startMirrorMaker(Path config) throws Exception {
    String classPath = Files.readString(CLASSPATH).strip();
    List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx512m",
        "-XX:+UseSerialGC", "-cp", classPath, "org.apache.kafka.connect.mirror.MirrorMaker", config.toString());
    return new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
        .redirectOutput(dir.resolve("mirror-maker.log").toFile()).start();
  }

  private static void stop(Process process) throws InterruptedException {
    process.destroy();
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
  }

  private static Admin admin(String bootstrap) {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
        AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000));
  }

  /** Records {@code from} .. {@code from + count - 1} of every partition, with keys, headers and set timestamps. */
  private static void produce(String bootstrap, int from, int count) throws Exception {
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
        ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.LINGER_MS_CONFIG, 5), new ByteArraySerializer(), new ByteArraySerializer())) {
      long base = System.currentTimeMillis() - 60_000;
      for (int i = from; i < from + count; i++) {
        for (int p = 0; p < PARTITIONS; p++) {
          List<Header> headers = List.of(new RecordHeader("seq", Integer.toString(i).getBytes(StandardCharsets.UTF_8)),
              new RecordHeader("origin", ("kafka-" + p).getBytes(StandardCharsets.UTF_8)));
          byte[] key = i % 10 == 9 ? null : ("order-" + p + "-" + i).getBytes(StandardCharsets.UTF_8);
          byte[] value = ("{\"order\":" + i + ",\"partition\":" + p + ",\"pad\":\"" + "x".repeat(i % 97) + "\"}")
              .getBytes(StandardCharsets.UTF_8);
          // Timestamps set by the producer (within Kafka's default retention and timestamp bounds).
          producer.send(new ProducerRecord<>(TOPIC, p, base + i, key, value, headers));
        }
      }
      producer.flush();
    }
  }

  private static Map<TopicPartition, Long> endOffsets(Admin admin) throws Exception {
    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
    for (int p = 0; p < PARTITIONS; p++) {
      latest.put(new TopicPartition(TOPIC, p), OffsetSpec.latest());
    }
    Map<TopicPartition, Long> out = new HashMap<>();
    admin.listOffsets(latest).all().get(10, TimeUnit.SECONDS).forEach((tp, info) -> out.put(tp, info.offset()));
    return out;
  }

  /** Every record of every partition, read with assign and seek. */
  private static Map<TopicPartition, List<Copy>> readAll(String bootstrap) {
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> partitions = new ArrayList<>();
      for (int p = 0; p < PARTITIONS; p++) {
        partitions.add(new TopicPartition(TOPIC, p));
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
      return drain(consumer, end);
    }
  }

  /** Consumes as the group, from its committed offsets (no reset policy), until the end of every partition. */
  private static Map<TopicPartition, List<Copy>> consumeGroup(String bootstrap, Map<TopicPartition, List<Copy>> expected,
      Map<TopicPartition, Long> translated) {
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
        ConsumerConfig.GROUP_ID_CONFIG, GROUP, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      consumer.subscribe(Set.of(TOPIC));
      Map<TopicPartition, Long> end = new HashMap<>();
      expected.forEach((tp, records) -> end.put(tp, (long) records.size()));
      return drain(consumer, end);
    }
  }

  private static Map<TopicPartition, List<Copy>> drain(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, Long> end) {
    Map<TopicPartition, List<Copy>> out = new HashMap<>();
    end.keySet().forEach(tp -> out.put(tp, new ArrayList<>()));
    await().atMost(COPY_TIMEOUT).until(() -> {
      for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
        TopicPartition tp = new TopicPartition(r.topic(), r.partition());
        List<String> headers = new ArrayList<>();
        for (Header h : r.headers()) {
          headers.add(h.key() + "=" + new String(h.value(), StandardCharsets.UTF_8));
        }
        out.get(tp).add(new Copy(r.offset(), r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8),
            new String(r.value(), StandardCharsets.UTF_8), r.timestamp(), headers));
      }
      // By position, not by the records seen: a partition the group had read to its end yields none.
      return consumer.assignment().containsAll(end.keySet())
          && end.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue());
    });
    return out;
  }
}
