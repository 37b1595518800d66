package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Losing a broker of a three-node cluster (child JVMs, one shared cluster for the class) while an
 * idempotent acks=all producer runs: a broker paused with SIGSTOP fails over and, resumed, cannot
 * write or acknowledge anything under its old epoch, then rejoins in-process with a new epoch and
 * serves a partition moved back to it; a broker killed with kill -9 fails over while it stays dead. Each
 * time, every partition of the lost broker acknowledges again within a bound (the measured time is
 * printed), and afterwards every acknowledged record is read back exactly once at its acknowledged
 * offset, with dense offsets.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FailoverTest {

  private static final int PARTITIONS = 6;
  /** Generous for a loaded machine; the benchmark measures the real distribution (docs/benchmarks.md). */
  private static final Duration FAILOVER_BOUND = Duration.ofSeconds(120);
  @TempDir static Path root;
  private static ChildCluster cluster;

  @BeforeAll
  static void startCluster() throws Exception {
    cluster = new ChildCluster(root, List.of()); // assigned first: a failed start still kills its children
    cluster.start();
  }

  @AfterAll
  static void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.close();
      cluster.keepLogs(Path.of("target", "failover-logs"));
    }
  }

  @Test
  @Order(1)
  void aPausedBrokerFailsOverAndResumedRejoinsWithoutRestart() throws Exception {
    // Goal: SIGSTOP'd past the session timeout, a broker's partitions are served by others; resumed, it answers
    // produce with errors only and writes nothing under its old epoch; without a restart of the process it rejoins
    // with a new epoch, leads nothing, gets a partition back by a reassignment and serves it; nothing acknowledged
    // is lost and offsets stay dense.
    String topic = "paused";
    int victim = createTopic(topic);
    List<Integer> led = ledBy(topic, victim);
    long pid = cluster.pid(victim);
    try (Load load = new Load(cluster.bootstrapAll(), topic)) {
      load.awaitAcks(300);
      cluster.pause(victim);
      long mark = load.mark();
      awaitServedAgain(load, topic, victim, led, mark);

      cluster.resume(victim);
      Map<Integer, Errors> answers = new HashMap<>();
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      int attempt = 0;
      while (System.nanoTime() < until) {
        for (int p : led) {
          Errors e = produceDirect(cluster.kafkaPort(victim), topic, p, "zombie-" + attempt++);
          assertThat(e).as("a resumed zombie's answer for partition %d", p).isNotEqualTo(Errors.NONE);
          answers.put(p, e);
        }
      }
      System.out.println("FailoverTest: the resumed zombie answered " + answers);
      await().atMost(Duration.ofSeconds(60)).until(() -> cluster.logText(victim).contains("failed over to other brokers"));

      // the same process rejoins: registered and unfenced again, leading nothing
      await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(200))
          .until(() -> cluster.logText(victim).contains("rejoined the cluster in-process"));
      cluster.awaitBrokers(3);
      assertThat(cluster.alive(victim)).isTrue();
      assertThat(cluster.pid(victim)).as("the rejoined node's process").isEqualTo(pid);
      try (Admin admin = cluster.admin()) {
        assertThat(leaders(admin, topic)).as("leaders after the rejoin").doesNotContainValue(victim);
        // a move brings one of its partitions back; it serves it
        int back = led.get(0);
        TopicPartition tp = new TopicPartition(topic, back);
        admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(victim)))))
            .all().get(2, TimeUnit.MINUTES);
        await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
            .until(() -> leaders(admin, topic).get(back), leader -> leader == victim);
        long moved = load.mark();
        await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(50))
            .until(() -> load.againAt.containsKey(back));
        System.out.println("FailoverTest: partition " + back + " acknowledged on the rejoined node " + victim + " "
            + TimeUnit.NANOSECONDS.toMillis(load.againAt.get(back) - moved) + " ms after the move was seen");
        await().atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofMillis(200))
            .until(() -> produceDirect(cluster.kafkaPort(victim), topic, back, "direct-" + System.nanoTime()),
                e -> e == Errors.NONE);
      }
      load.awaitAcks(load.acked.size() + 100);
      load.close();
      verify(topic, load.acked, "zombie-");
    }
  }

  @Test
  @Order(2)
  void aKilledBrokerFailsOverWhileItStaysDead() throws Exception {
    // Goal: kill -9 of a broker leading partitions: a survivor recovers its WAL, its partitions acknowledge again
    // on live brokers within the bound while it stays dead, and nothing acknowledged is lost or duplicated. With
    // -Dtidemark.test.scale=full (or -Dtidemark.failover.kills=N) the busiest broker is killed again and again
    // (restarted between kills) and the failover times are summarised: the failover benchmark.
    int kills = Integer.getInteger("tidemark.failover.kills",
        "full".equals(System.getProperty("tidemark.test.scale")) ? 20 : 1);
    String topic = "killed";
    createTopic(topic);
    List<Long> millis = new ArrayList<>();
    try (Load load = new Load(cluster.bootstrapAll(), topic)) {
      load.awaitAcks(300);
      for (int k = 0; k < kills; k++) {
        int victim = busiest(topic);
        List<Integer> led = ledBy(topic, victim);
        cluster.kill(victim);
        long mark = load.mark();
        millis.add(awaitServedAgain(load, topic, victim, led, mark));
        assertThat(cluster.alive(victim)).isFalse();
        load.awaitAcks(load.acked.size() + 100);
        if (k + 1 < kills) {
          cluster.startNode(victim);
          cluster.awaitStarted(victim); // a majority of voters must stay up for the next kill
          cluster.awaitBrokers(3);
        }
      }
      load.close();
      verify(topic, load.acked, null);
    }
    List<Long> sorted = millis.stream().sorted().toList();
    System.out.println("FailoverTest: failover times over " + kills + " kills (ms): " + millis + "; p50 "
        + sorted.get((sorted.size() - 1) / 2) + ", p99 " + sorted.get((int) Math.ceil(0.99 * sorted.size()) - 1)
        + ", max " + sorted.get(sorted.size() - 1) + "; load average " + loadAverage());
  }

  private static String loadAverage() {
    try {
      return java.nio.file.Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (java.io.IOException e) {
      return "unknown";
    }
  }

  /** The live broker leading the most partitions of {@code topic}. */
  private static int busiest(String topic) throws Exception {
    try (Admin admin = cluster.admin()) {
      return leaders(admin, topic).values().stream().collect(Collectors.groupingBy(id -> id, Collectors.counting()))
          .entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
    }
  }

  /** Creates the topic; returns the live broker that leads the most of its partitions. */
  private static int createTopic(String topic) throws Exception {
    try (Admin admin = cluster.admin()) {
      admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get(2, TimeUnit.MINUTES);
      Map<Integer, Long> perLeader = await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(300))
          .ignoreExceptions().until(() -> leaders(admin, topic), m -> m.size() == PARTITIONS).values().stream()
          .collect(Collectors.groupingBy(id -> id, Collectors.counting()));
      return perLeader.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
    }
  }

  private static Map<Integer, Integer> leaders(Admin admin, String topic) throws Exception {
    Map<Integer, Integer> out = new HashMap<>();
    for (TopicPartitionInfo p : admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS)
        .get(topic).partitions()) {
      if (p.leader() != null) {
        out.put(p.partition(), p.leader().id());
      }
    }
    return out;
  }

  private static List<Integer> ledBy(String topic, int node) throws Exception {
    try (Admin admin = cluster.admin()) {
      return leaders(admin, topic).entrySet().stream().filter(e -> e.getValue() == node).map(Map.Entry::getKey)
          .sorted().toList();
    }
  }

  /** Waits until each partition {@code victim} led acknowledges a record sent after {@code mark}, on another broker. */
  private static long awaitServedAgain(Load load, String topic, int victim, List<Integer> led, long mark)
      throws Exception {
    await().atMost(FAILOVER_BOUND).pollInterval(Duration.ofMillis(50))
        .until(() -> led.stream().allMatch(load.againAt::containsKey));
    long worst = led.stream().mapToLong(load.againAt::get).max().orElseThrow() - mark;
    System.out.println("FailoverTest: the " + led.size() + " partitions of node " + victim + " acknowledged again "
        + TimeUnit.NANOSECONDS.toMillis(worst) + " ms after it was lost");
    try (Admin admin = cluster.admin()) {
      Map<Integer, Integer> now = await().atMost(Duration.ofMinutes(1)).ignoreExceptions()
          .until(() -> leaders(admin, topic), m -> led.stream().allMatch(m::containsKey));
      led.forEach(p -> assertThat(now.get(p)).as("leader of partition %d", p).isNotEqualTo(victim));
    }
    return TimeUnit.NANOSECONDS.toMillis(worst);
  }

  /** Reads the whole topic: offsets dense from 0, each acknowledged record exactly once at its offset, no stray value. */
  private static void verify(String topic, Map<String, long[]> acked, String forbiddenPrefix) {
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapAll());
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000);
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
        new StringDeserializer())) {
      List<TopicPartition> tps = new ArrayList<>();
      for (int p = 0; p < PARTITIONS; p++) {
        tps.add(new TopicPartition(topic, p));
      }
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      Map<TopicPartition, Long> end = consumer.endOffsets(tps, Duration.ofMinutes(1));
      Map<String, long[]> seen = new HashMap<>();
      Map<Integer, Long> next = new HashMap<>();
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
      while (tps.stream().anyMatch(tp -> consumer.position(tp, Duration.ofMinutes(1)) < end.get(tp))) {
        assertThat(System.nanoTime()).as("read the topic to its end %s", end).isLessThan(deadline);
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
          long expected = next.getOrDefault(r.partition(), 0L);
          assertThat(r.offset()).as("offsets of partition %d are dense", r.partition()).isEqualTo(expected);
          next.put(r.partition(), expected + 1);
          assertThat(seen.put(r.value(), new long[] {r.partition(), r.offset()})).as("%s read twice", r.value()).isNull();
          if (forbiddenPrefix != null) {
            assertThat(r.value()).as("a zombie's write").doesNotStartWith(forbiddenPrefix);
          }
        }
      }
      assertThat(acked).isNotEmpty();
      acked.forEach((value, at) -> assertThat(seen.get(value)).as("acknowledged %s at %d-%d", value, at[0], at[1])
          .containsExactly(at));
      System.out.println("FailoverTest: " + acked.size() + " acknowledged records of " + topic + " read back exactly once, "
          + seen.size() + " records in all");
    }
  }

  /** One Produce v11 of one record straight to {@code port}: the partition's error code. */
  private static Errors produceDirect(int port, String topic, int partition, String value) throws Exception {
    ProduceRequestData data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(5_000);
    data.topicData().add(new ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(List.of(
        new ProduceRequestData.PartitionProduceData().setIndex(partition).setRecords(MemoryRecords.withRecords(
            Compression.NONE, new SimpleRecord(value.getBytes(StandardCharsets.UTF_8)))))));
    short v = 11;
    var request = ProduceRequest.builder(data, true).build(v);
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(30_000);
      ByteBuffer body = request.serializeWithHeader(new RequestHeader(ApiKeys.PRODUCE, v, "zombie-probe", 1));
      OutputStream out = socket.getOutputStream();
      byte[] frame = new byte[4 + body.remaining()];
      ByteBuffer.wrap(frame).putInt(body.remaining()).put(body);
      out.write(frame);
      out.flush();
      DataInputStream in = new DataInputStream(socket.getInputStream());
      byte[] payload = new byte[in.readInt()];
      in.readFully(payload);
      ByteBuffer response = ByteBuffer.wrap(payload);
      ResponseHeader.parse(response, ApiKeys.PRODUCE.responseHeaderVersion(v));
      ProduceResponse parsed = (ProduceResponse) AbstractResponse.parseResponse(ApiKeys.PRODUCE,
          new ByteBufferAccessor(response), v);
      return Errors.forCode(parsed.data().responses().iterator().next().partitionResponses().get(0).errorCode());
    } catch (java.io.IOException e) {
      return Errors.NETWORK_EXCEPTION; // not an acknowledgement either
    }
  }

  /** An idempotent acks=all producer over every partition; remembers each acknowledged value's partition and offset. */
  static final class Load implements AutoCloseable {
    final Map<String, long[]> acked = new ConcurrentHashMap<>();
    /** Per partition: when a record sent after {@link #mark} was first acknowledged. */
    final Map<Integer, Long> againAt = new ConcurrentHashMap<>();
    private final KafkaProducer<String, String> producer;
    private final String topic;
    private final Semaphore inFlight = new Semaphore(200);
    private final AtomicLong errors = new AtomicLong();
    private volatile long markNanos = Long.MAX_VALUE;
    private volatile boolean stop;
    private final Thread thread;
    private boolean closed;

    Load(String bootstrap, String topic) {
      this.topic = topic;
      Properties p = new Properties();
      p.put(org.apache.kafka.clients.producer.ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
      p.put(org.apache.kafka.clients.producer.ProducerConfig.ACKS_CONFIG, "all");
      p.put(org.apache.kafka.clients.producer.ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
      p.put(org.apache.kafka.clients.producer.ProducerConfig.LINGER_MS_CONFIG, 2);
      p.put(org.apache.kafka.clients.producer.ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000);
      // a request to a paused broker is abandoned after this (the connection stays open, nothing answers)
      p.put(org.apache.kafka.clients.producer.ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 8_000);
      this.producer = new KafkaProducer<>(p, new org.apache.kafka.common.serialization.StringSerializer(),
          new org.apache.kafka.common.serialization.StringSerializer());
      this.thread = Thread.ofPlatform().daemon().name("failover-load").start(this::run);
    }

    private void run() {
      try {
        for (long i = 0; !stop; i++) {
          inFlight.acquire();
          int partition = (int) (i % PARTITIONS);
          String value = topic + "-" + i;
          long sent = System.nanoTime();
          producer.send(new ProducerRecord<>(topic, partition, null, value), (md, e) -> {
            inFlight.release();
            if (e == null) {
              acked.put(value, new long[] {md.partition(), md.offset()});
              if (sent >= markNanos) {
                againAt.putIfAbsent(md.partition(), System.nanoTime());
              }
            } else {
              errors.incrementAndGet();
            }
          });
          Thread.sleep(2);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    /** From now on, acknowledgements of newly sent records count as "acknowledging again". */
    long mark() {
      againAt.clear();
      markNanos = System.nanoTime();
      return markNanos;
    }

    void awaitAcks(int count) {
      await().atMost(Duration.ofMinutes(2)).until(() -> acked.size() >= count);
    }

    @Override
    public void close() throws InterruptedException {
      if (closed) {
        return;
      }
      closed = true;
      stop = true;
      thread.join(60_000);
      producer.flush();
      producer.close(Duration.ofMinutes(1));
      System.out.println("FailoverTest: " + topic + " load: " + acked.size() + " acknowledged, " + errors.get()
          + " failed sends");
    }
  }
}
