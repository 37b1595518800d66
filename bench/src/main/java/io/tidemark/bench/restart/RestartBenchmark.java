package io.tidemark.bench.restart;

import io.tidemark.bench.kafka.ChildJvm;
import io.tidemark.bench.kafka.Setup;
import io.tidemark.bench.kafka.TidemarkNode;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Restart after {@code kill -9} of one Tidemark node (controller and broker, embedded defaults: block
 * WAL, local object storage) holding {@code topics × partitionsPerTopic} partitions with data.
 *
 * <p>Setup: start the node, create the topics, produce {@code recordsPerPartition} 1 KiB records to
 * every partition (acks=all). Each restart: produce a few more records to every partition (so the
 * WAL holds acknowledged data not yet uploaded), {@code kill -9} the JVM, start it again on the same
 * data directory and measure from the moment the new JVM is spawned to (a) the Kafka port accepting
 * TCP connections and (b) the first produce acknowledged with acks=all, on a partition that changes
 * with every restart (a producer created at spawn time, retrying every 10-50 ms). Afterwards every
 * partition's end offset is checked against what was acknowledged (nothing acknowledged lost), and
 * the node's own log gives the time of its start-up phases. Runs on the caller's thread; every child
 * is killed on exit.
 */
public final class RestartBenchmark {

  static final String LOOPBACK = "127.0.0.1";
  private static final Duration RESTART_TIMEOUT = Duration.ofMinutes(3);
  private static final byte[] VALUE = new byte[1024];

  /** The node's start-up phases as its log states them, each with the line that marks its end. */
  static final Map<String, Pattern> PHASES = phases();

  /**
   * What one run measures.
   *
   * @param topics topics created ({@code t0}, {@code t1}, ...)
   * @param partitionsPerTopic partitions of each topic
   * @param recordsPerPartition 1 KiB records produced to each partition before the first kill
   * @param restarts kill -9 and restart cycles measured
   */
  public record Plan(int topics, int partitionsPerTopic, int recordsPerPartition, int restarts) {
    int partitions() {
      return topics * partitionsPerTopic;
    }
  }

  /**
   * One measured restart; times in ms from the spawn of the new JVM.
   *
   * @param cpuMs CPU time the node's JVM used (all threads) until the first acknowledgement, -1 when unknown
   * @param jitCpuMs the part of it used by the JIT compiler threads (C1 and C2), -1 when unknown
   * @param phasesMs end of each of {@link #PHASES} by the node's log clock, for the phases found
   */
  public record Restart(int number, long listeningMs, long firstAckMs, long cpuMs, long jitCpuMs, String ackedPartition,
                        Map<String, Long> phasesMs) {}

  /** Names of the JVM's JIT compiler threads ({@code C1 CompilerThread0}, {@code C2 CompilerThread0}, ...). */
  static final List<String> JIT_THREADS = List.of("C1 CompilerThre", "C2 CompilerThre");

  private final Plan plan;
  private final Path java;
  private final List<String> jvmOptions;
  private final String classpath;
  private final Path workDir;
  private final Path logDir;

  public RestartBenchmark(Plan plan, Path java, List<String> jvmOptions, String classpath, Path workDir, Path logDir) {
    this.plan = plan;
    this.java = java;
    this.jvmOptions = jvmOptions;
    this.classpath = classpath;
    this.workDir = workDir;
    this.logDir = logDir;
  }

  public List<Restart> run() throws Exception {
    Files.createDirectories(workDir);
    int kafkaPort = Setup.freePort();
    Path config = workDir.resolve("tidemark.properties");
    Files.writeString(config, properties(workDir.resolve("data"), kafkaPort), StandardCharsets.UTF_8);
    String bootstrap = LOOPBACK + ":" + kafkaPort;
    Map<TopicPartition, Long> acked = new HashMap<>();
    List<Restart> restarts = new ArrayList<>();
    ChildJvm node = start(config, 0);
    try {
      awaitRunning(node);
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        List<NewTopic> topics = new ArrayList<>();
        for (int t = 0; t < plan.topics(); t++) {
          topics.add(new NewTopic("t" + t, plan.partitionsPerTopic(), (short) 1));
        }
        admin.createTopics(topics).all().get(2, TimeUnit.MINUTES);
      }
      produceToEvery(bootstrap, plan.recordsPerPartition(), acked);
      for (int r = 1; r <= plan.restarts(); r++) {
        produceToEvery(bootstrap, 5, acked);
        node.killNine();
        long spawnedAtMs = System.currentTimeMillis();
        long spawned = System.nanoTime();
        node = start(config, r);
        TopicPartition target = new TopicPartition("t" + (r % plan.topics()), (r * 7) % plan.partitionsPerTopic());
        Restart measured = measure(node, r, spawned, bootstrap, kafkaPort, target);
        acked.merge(target, 1L, Long::sum);
        awaitRunning(node);
        Restart restart = withPhases(measured, node, spawnedAtMs);
        restarts.add(restart);
        checkNothingLost(bootstrap, acked, r);
        System.out.printf("restart %d: listening after %d ms, first acknowledged produce (%s) after %d ms%n", r,
            restart.listeningMs(), restart.ackedPartition(), restart.firstAckMs());
      }
    } finally {
      node.killNine();
    }
    return restarts;
  }

  private Restart measure(ChildJvm node, int number, long spawned, String bootstrap, int kafkaPort,
      TopicPartition target) throws Exception {
    long deadline = spawned + RESTART_TIMEOUT.toNanos();
    try (KafkaProducer<byte[], byte[]> producer = restartProducer(bootstrap)) {
      Future<RecordMetadata> ack = producer.send(new ProducerRecord<>(target.topic(), target.partition(), null, VALUE));
      long listening = -1;
      while (listening < 0) {
        requireAlive(node, deadline, "listening");
        if (accepts(kafkaPort)) {
          listening = System.nanoTime();
        } else {
          Thread.sleep(5);
        }
      }
      ack.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      long acked = System.nanoTime();
      long cpuMs = node.cpuTime().map(Duration::toMillis).orElse(-1L);
      long jitCpuMs = node.cpuTimeOfThreads(JIT_THREADS).map(Duration::toMillis).orElse(-1L);
      return new Restart(number, TimeUnit.NANOSECONDS.toMillis(listening - spawned),
          TimeUnit.NANOSECONDS.toMillis(acked - spawned), cpuMs, jitCpuMs, target.toString(), Map.of());
    }
  }

  /** Reads the phases of a restart from the node's log (call once it runs). */
  static Map<String, Long> phases(String log, long spawnedAtMs) {
    Map<String, Long> out = new LinkedHashMap<>();
    for (String line : log.lines().toList()) {
      for (Map.Entry<String, Pattern> phase : PHASES.entrySet()) {
        if (!out.containsKey(phase.getKey()) && phase.getValue().matcher(line).find()) {
          Matcher time = LOG_TIME.matcher(line);
          if (time.lookingAt()) {
            out.put(phase.getKey(), Instant.parse(time.group(1)).toEpochMilli() - spawnedAtMs);
          }
        }
      }
    }
    return out;
  }

  private static final Pattern LOG_TIME = Pattern.compile("(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d+Z) ");

  private static Map<String, Pattern> phases() {
    Map<String, Pattern> m = new LinkedHashMap<>();
    m.put("JVM started, first log line", Pattern.compile("TidemarkServer - starting node"));
    m.put("registered with the controller", Pattern.compile("registered with the controller quorum"));
    m.put("WAL read", Pattern.compile("StreamEngine - node \\d+ recovered"));
    m.put("storage recovered", Pattern.compile("EmbeddedStorage - storage recovered"));
    m.put("Kafka listener bound", Pattern.compile("KafkaServer - Kafka listener on"));
    m.put("partitions open, groups loaded", Pattern.compile("KafkaBroker - broker \\d+ of cluster"));
    m.put("node running (registry, table topics)", Pattern.compile("TidemarkServer - node \\d+ is running"));
    return m;
  }

  private static Restart withPhases(Restart r, ChildJvm node, long spawnedAtMs) throws IOException {
    return new Restart(r.number(), r.listeningMs(), r.firstAckMs(), r.cpuMs(), r.jitCpuMs(), r.ackedPartition(),
        phases(node.output(), spawnedAtMs));
  }

  private void produceToEvery(String bootstrap, int recordsPerPartition, Map<TopicPartition, Long> acked)
      throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      Map<TopicPartition, List<Future<RecordMetadata>>> sent = new HashMap<>();
      for (int t = 0; t < plan.topics(); t++) {
        for (int part = 0; part < plan.partitionsPerTopic(); part++) {
          TopicPartition tp = new TopicPartition("t" + t, part);
          for (int i = 0; i < recordsPerPartition; i++) {
            sent.computeIfAbsent(tp, k -> new ArrayList<>())
                .add(producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), null, VALUE)));
          }
        }
      }
      for (Map.Entry<TopicPartition, List<Future<RecordMetadata>>> e : sent.entrySet()) {
        for (Future<RecordMetadata> f : e.getValue()) {
          f.get(2, TimeUnit.MINUTES);
          acked.merge(e.getKey(), 1L, Long::sum);
        }
      }
    }
  }

  /** Every partition's end offset covers what was acknowledged (each produce here is one record). */
  private static void checkNothingLost(String bootstrap, Map<TopicPartition, Long> acked, int restart) throws Exception {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      acked.keySet().forEach(tp -> latest.put(tp, OffsetSpec.latest()));
      var ends = admin.listOffsets(latest).all().get(2, TimeUnit.MINUTES);
      for (Map.Entry<TopicPartition, Long> e : acked.entrySet()) {
        long end = ends.get(e.getKey()).offset();
        if (end < e.getValue()) {
          throw new IllegalStateException("after restart " + restart + ", " + e.getKey() + " ends at offset " + end
              + " but " + e.getValue() + " records were acknowledged: acknowledged data was lost");
        }
      }
    }
  }

  private static KafkaProducer<byte[], byte[]> restartProducer(String bootstrap) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.RECONNECT_BACKOFF_MS_CONFIG, 10);
    p.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 50);
    p.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 10);
    p.put(ProducerConfig.RETRY_BACKOFF_MAX_MS_CONFIG, 50);
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) RESTART_TIMEOUT.toMillis());
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, RESTART_TIMEOUT.toMillis());
    return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
  }

  private ChildJvm start(Path config, int number) throws IOException {
    return ChildJvm.start("restart-" + number, java, jvmOptions, classpath, "io.tidemark.server.Main",
        List.of("start", "--config", config.toString()), logDir.resolve("restart-" + number + ".log"));
  }

  private static void awaitRunning(ChildJvm node) throws Exception {
    long deadline = System.nanoTime() + RESTART_TIMEOUT.toNanos();
    while (!node.output().contains("TidemarkServer - node 0 is running")) {
      requireAlive(node, deadline, "running");
      Thread.sleep(50);
    }
  }

  private static void requireAlive(ChildJvm node, long deadline, String what) {
    if (!node.isAlive()) {
      throw new IllegalStateException("the node exited before " + what + "; its log " + node.log() + " ends with:\n"
          + node.tail(30));
    }
    if (System.nanoTime() > deadline) {
      throw new IllegalStateException("the node was not " + what + " within " + RESTART_TIMEOUT + "; its log "
          + node.log() + " ends with:\n" + node.tail(30));
    }
  }

  private static boolean accepts(int port) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(LOOPBACK, port), 100);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** One node, controller and broker, every port on loopback, everything else at the embedded defaults. */
  static String properties(Path dataDir, int kafkaPort) {
    return TidemarkNode.properties(dataDir, kafkaPort, Setup.freePort(), Setup.freePort());
  }
}
