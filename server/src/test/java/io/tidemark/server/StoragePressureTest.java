package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.server.storage.EmbeddedStorage;
import io.tidemark.stream.objectstore.FaultInjectingObjectStorage;
import io.tidemark.stream.objectstore.FaultInjectingObjectStorage.Fault;
import io.tidemark.stream.objectstore.FaultInjectingObjectStorage.Rule;
import io.tidemark.stream.wal.BreakableWriteAheadLog;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: storage pressure and storage failure never leave a partition unable to serve while the
 * process lives, and never lose an acknowledged record. With real kafka-clients producers on several
 * partitions of one node: (1) a full WAL (its capacity, then its queue) and a filling log cache are
 * backpressure that the producers ride through with transparent retries, and every partition serves
 * once the pressure ends; (2) a WAL I/O error fails the storage engine, the node's supervisor starts
 * it again in-process, and every partition serves again without a process restart. Every
 * acknowledged record is read back at its acknowledged offset, once. Small by default;
 * {@code -Dtidemark.test.scale=full} runs more partitions, producers and pressure cycles.
 */
class StoragePressureTest {

  private static final boolean FULL = "full".equals(System.getProperty("tidemark.test.scale"));
  private static final String PADDING = "x".repeat(1000);
  private static final Pattern METRIC = Pattern.compile("^(\\w+)(\\{[^}]*})? ([0-9.eE+-]+)$");

  private final HttpClient http = HttpClient.newHttpClient();
  private final ScheduledExecutorService faultTimer = Executors.newSingleThreadScheduledExecutor();
  private final List<AutoCloseable> toClose = new ArrayList<>();
  @TempDir Path dataDir;

  @AfterEach
  void stop() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
    faultTimer.shutdownNow();
  }

  @Test
  void aFullWalAndCacheAreBackpressureAndAWalIoErrorRestartsTheNodeInProcessWithNothingAcknowledgedLost()
      throws Exception {
    int partitions = FULL ? 16 : 6;
    int producers = FULL ? 6 : 3;
    int cycles = FULL ? 3 : 1;
    long seed = System.nanoTime();
    System.out.println("StoragePressureTest seed " + seed);
    int kafkaPort = FreePorts.pick(); // the node comes back on the same port after its in-process restart
    List<String> args = baseArgs();
    args.addAll(List.of("--set", "kafka.listener.port=" + kafkaPort,
        // during an upload outage the WAL fills (its capacity, then its queue of 1 MiB) while the cache fills to about
        // as much; a cache smaller than the WAL (it then binds first) is StorageOutageTest's case
        "--set", "wal.capacity.bytes=" + (16L << 20), "--set", "wal.max.pending.bytes=" + (1L << 20),
        "--set", "stream.cache.size.bytes=" + (24L << 20), "--set", "stream.upload.threshold.bytes=" + (2L << 20),
        "--set", "stream.append.waiting.max.bytes=" + (2L << 20), "--set", "stream.append.stall.ms=1000",
        "--set", "stream.upload.retry.max=2", "--set", "stream.upload.retry.backoff.max.ms=200"));
    AtomicReference<FaultInjectingObjectStorage> store = new AtomicReference<>();
    AtomicReference<BreakableWriteAheadLog> firstWal = new AtomicReference<>();
    Supplier<TidemarkServer> starter = () -> Main.start(args, Map.of(), new EmbeddedStorage(objects -> {
      store.set(new FaultInjectingObjectStorage(objects, new Random(seed), faultTimer));
      return store.get();
    }, wal -> {
      if (firstWal.get() != null) {
        return wal; // the restarted node writes to the same WAL file, without faults
      }
      firstWal.set(new BreakableWriteAheadLog(wal));
      return firstWal.get();
    }));
    TidemarkServer first = starter.get();
    NodeSupervisor supervisor = new NodeSupervisor(first, starter);
    Thread supervising = Thread.ofPlatform().name("supervisor").start(supervisor::run);
    toClose.add(() -> {
      supervisor.stop();
      supervising.join(TimeUnit.SECONDS.toMillis(60));
    });
    String bootstrap = "127.0.0.1:" + kafkaPort;
    String topic = "pressure";
    createTopic(bootstrap, topic, partitions);

    Acks acks = new Acks();
    AtomicBoolean sending = new AtomicBoolean(true);
    List<KafkaProducer<String, String>> clients = new ArrayList<>();
    List<Thread> senders = new ArrayList<>();
    for (int p = 0; p < producers; p++) {
      KafkaProducer<String, String> producer = new KafkaProducer<>(producerConfig(bootstrap));
      clients.add(producer);
      String prefix = "p" + p + "-";
      Thread sender = Thread.ofPlatform().name("pressure-sender-" + p).start(() -> {
        for (int i = 0; sending.get(); i++) {
          acks.send(producer, topic, i % partitions, prefix + i);
        }
      });
      senders.add(sender);
    }
    try {
      await().atMost(Duration.ofSeconds(60)).until(() -> acks.acked.size() >= 200);
      // 1. Pressure: nothing uploads, so the WAL and the cache fill up under load; the producers ride it through.
      for (int cycle = 0; cycle < cycles; cycle++) {
        double refusalsBefore = metric(first, "tidemark_wal_append_refusals_total");
        double retriesBefore = retries(clients);
        int ackedBefore = acks.acked.size();
        store.get().setRules(Rule.of(null, Fault.FAIL, 1.0));
        double[] cachePeak = {0};
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() -> {
          cachePeak[0] = Math.max(cachePeak[0], metric(first, "tidemark_stream_cache_used_bytes"));
          return status(first, "/ready") == 503 // acknowledgements stopped: storage is full
              && metric(first, "tidemark_wal_append_refusals_total") > refusalsBefore // the WAL's queue was full
              && retries(clients) > retriesBefore; // requests held past their timeout were answered and retried
        });
        assertThat(cachePeak[0]).as("the log cache filled up as far as the WAL lets it").isGreaterThan(12 << 20);
        assertThat(status(first, "/health")).as("pressure is not a failure").isEqualTo(200);
        store.get().clearRules();
        await().atMost(Duration.ofSeconds(90)).until(() -> status(first, "/ready") == 200
            && acks.acked.size() > ackedBefore + 500);
      }
      assertThat(supervisor.rejoins()).as("pressure never failed the node").isZero();

      // 2. Failure: the WAL fails under load; the supervisor restarts the node in-process and the producers carry on.
      firstWal.get().breakNow();
      await().atMost(Duration.ofSeconds(120)).until(() -> supervisor.rejoins() == 1);
      int ackedAtRestart = acks.acked.size();
      await().atMost(Duration.ofSeconds(120)).until(() -> acks.acked.size() > ackedAtRestart + 500);
    } finally {
      sending.set(false);
      for (Thread t : senders) {
        t.join(TimeUnit.SECONDS.toMillis(150));
      }
      for (KafkaProducer<String, String> producer : clients) {
        producer.close(Duration.ofSeconds(150)); // waits for every outstanding send
      }
    }
    assertThat(acks.failed).as("producers retried every refusal and failure themselves").hasValue(0);
    TidemarkServer current = supervisor.current();
    assertThat(current).isNotSameAs(first);
    assertThat(status(current, "/health")).isEqualTo(200);
    assertEveryPartitionServes(bootstrap, topic, partitions, acks);
    acks.assertAllReadBack(bootstrap, topic, partitions);
  }

  // ---------------------------------------------------------------------------------------------

  private List<String> baseArgs() {
    List<String> args = new ArrayList<>(List.of("--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1", "--set", "process.roles=controller,broker", "--set", "table.enable=false",
        "--set", "table.rest.enable=false", "--set", "kafka.listener.host=127.0.0.1", "--set", "registry.host=127.0.0.1",
        "--set", "registry.port=0", "--set", "table.rest.host=127.0.0.1", "--set", "table.rest.port=0",
        "--set", "controller.voters=" + FreePorts.singleVoter()));
    return args;
  }

  private static void createTopic(String bootstrap, String topic, int partitions) throws Exception {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(60, TimeUnit.SECONDS);
    }
  }

  /** Each partition takes a new record, acknowledged, after the pressure or failure ended. */
  private static void assertEveryPartitionServes(String bootstrap, String topic, int partitions, Acks acks) {
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerConfig(bootstrap))) {
      for (int p = 0; p < partitions; p++) {
        acks.send(producer, topic, p, "check-" + p);
      }
      producer.flush();
    }
    assertThat(acks.failed).hasValue(0);
    for (int p = 0; p < partitions; p++) {
      assertThat(acks.acked).containsKey("check-" + p);
    }
  }

  /** Records the producers sent again after a retriable error or a request timeout (kafka-clients' own count). */
  private static double retries(List<KafkaProducer<String, String>> producers) {
    double sum = 0;
    for (KafkaProducer<String, String> producer : producers) {
      for (var e : producer.metrics().entrySet()) {
        if (e.getKey().name().equals("record-retry-total") && e.getKey().group().equals("producer-metrics")) {
          sum += ((Number) e.getValue().metricValue()).doubleValue();
        }
      }
    }
    return sum;
  }

  private static Properties producerConfig(String bootstrap) {
    Properties p = StorageOutageTest.producerConfig(bootstrap);
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 300_000); // senders wait for buffer space while storage is full
    p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, 4L << 20);
    return p;
  }

  /** What the producers were told: key to partition and offset; failures; retries seen by the clients. */
  private static final class Acks {
    final Map<String, TopicPartitionOffset> acked = new ConcurrentHashMap<>();
    final AtomicInteger failed = new AtomicInteger();

    void send(KafkaProducer<String, String> producer, String topic, int partition, String key) {
      producer.send(new ProducerRecord<>(topic, partition, key, key + "|" + PADDING), (metadata, error) -> {
        if (error == null) {
          acked.put(key, new TopicPartitionOffset(metadata.partition(), metadata.offset()));
        } else {
          failed.incrementAndGet();
          System.out.println("send of " + key + " failed: " + error);
        }
      });
    }

    /** Every acknowledged record is read back once, at its acknowledged partition and offset. */
    void assertAllReadBack(String bootstrap, String topic, int partitions) {
      Properties c = new Properties();
      c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
      c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
      c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
      c.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 1 << 20);
      Map<String, TopicPartitionOffset> read = new ConcurrentHashMap<>();
      List<TopicPartition> tps = new ArrayList<>();
      for (int p = 0; p < partitions; p++) {
        tps.add(new TopicPartition(topic, p));
      }
      try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
        consumer.assign(tps);
        consumer.seekToBeginning(tps);
        Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (tps.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp)) && System.nanoTime() < deadline) {
          for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
            TopicPartitionOffset previous = read.put(r.key(), new TopicPartitionOffset(r.partition(), r.offset()));
            assertThat(previous).as("record %s read twice", r.key()).isNull();
            assertThat(r.value()).isEqualTo(r.key() + "|" + PADDING);
          }
        }
      }
      acked.forEach((key, at) -> assertThat(read.get(key)).as("acknowledged record %s", key).isEqualTo(at));
    }
  }

  private record TopicPartitionOffset(int partition, long offset) {}

  private int status(TidemarkServer server, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.adminPort() + path)).build(),
        HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  /** The sum of a metric's samples on the node's Prometheus endpoint (0 when absent). */
  private double metric(TidemarkServer server, String name) throws Exception {
    String body = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.adminPort() + "/metrics"))
        .build(), HttpResponse.BodyHandlers.ofString()).body();
    double sum = 0;
    for (String line : body.split("\n")) {
      Matcher m = METRIC.matcher(line);
      if (m.matches() && m.group(1).equals(name)) {
        sum += Double.parseDouble(m.group(3));
      }
    }
    return sum;
  }
}
