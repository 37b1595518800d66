package io.tidemark.bench.kafka;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Transactional produce throughput, Tidemark next to Apache Kafka (durable and default) of the
 * kafka-clients version, measured in the same run with the same client: one transactional Java
 * producer (kafka-clients, transactions V2 where the broker finalizes {@code transaction.version}
 * 2, which both do) writes transactions of 100 and of 1,000 records of 1 KiB (acks=all) into a
 * topic of 4 partitions, one transaction after the other. Reported per contender and transaction
 * size: records/s, MiB/s, transactions/s and the commitTransaction latency (p50, p99). The nodes
 * start once; each runs an unmeasured warm-up first; each repetition measures every contender in
 * an order rotated per repetition (the median of the repetitions is reported). Then each node
 * cleans a compacted partition ({@link CompactionBench}: MiB/s of log cleaned). Writes the section
 * "Transactions and compaction (issue 12)" of {@code docs/benchmarks.md}. Runs on the caller's thread.
 *
 * <pre>
 *   bench/run-transactions.sh [--quick] [--repetitions N] [--records N] [--compaction-mib N] [--compaction-keys N]
 *                             [--output FILE | --no-output]
 * </pre>
 */
public final class TransactionBench {

  static final String SECTION_TITLE = "Transactions and compaction (issue 12)";
  private static final int[] SIZES = {100, 1000};
  private static final int PARTITIONS = 4;

  private TransactionBench() {}

  /** One measurement. */
  record Result(double recordsPerSecond, double mibPerSecond, double transactionsPerSecond, double commitP50Ms,
      double commitP99Ms) {}

  public static void main(String[] args) throws Exception {
    System.exit(run(args));
  }

  static int run(String[] args) throws Exception {
    BenchArgs parsed = BenchArgs.parse(args);
    Map<String, String> o = parsed.options();
    boolean quick = parsed.quick();
    int repetitions = Integer.parseInt(o.getOrDefault("repetitions", quick ? "1" : "2"));
    int records = Integer.parseInt(o.getOrDefault("records", quick ? "3000" : "20000"));
    int compactionMib = Integer.parseInt(o.getOrDefault("compaction-mib", quick ? "8" : "64"));
    int compactionKeys = Integer.parseInt(o.getOrDefault("compaction-keys", "1000"));
    Path workDir = Files.createTempDirectory("tidemark-txn-bench-");
    Path logDir = Path.of("bench", "target", "txn-bench-logs");
    Setup.deleteRecursively(logDir);
    Files.createDirectories(logDir);
    Runtime.getRuntime().addShutdownHook(new Thread(ChildJvm::killAll, "txn-bench-cleanup"));
    Setup setup = new Setup(Path.of(System.getProperty("java.home"), "bin", "java"), List.of("-Xmx2g"), List.of("-Xmx512m"),
        parsed.require("kafka-classpath", "bench/run-transactions.sh"),
        parsed.require("tidemark-classpath", "bench/run-transactions.sh"), workDir, logDir);
    String loadAtStart = Setup.loadAverage();
    String startedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    Map<Contender, Map<Integer, List<Result>>> results = new EnumMap<>(Contender.class);
    Map<Contender, List<CompactionBench.Result>> cleaning = new EnumMap<>(Contender.class);
    Map<Contender, BrokerNode> nodes = new EnumMap<>(Contender.class);
    try {
      for (Contender c : Contender.values()) {
        progress("starting " + c.label());
        BrokerNode node = c.start(setup, CompactionBench.EXTRA);
        nodes.put(c, node);
        node.awaitReady(Duration.ofMinutes(3));
        results.put(c, new LinkedHashMap<>());
      }
      for (Contender c : Contender.values()) {
        progress(c.label() + ": warm-up (not measured)");
        BrokerNode node = nodes.get(c);
        node.createTopic("txn-warm-up", PARTITIONS);
        measure(node, "txn-warm-up", "warm-up-" + c.name(), 100, Math.min(records, 5000));
      }
      for (int r = 1; r <= repetitions; r++) {
        for (int size : SIZES) {
          for (Contender c : KafkaComparison.order(r)) {
            BrokerNode node = nodes.get(c);
            String topic = "txn-s" + size + "-r" + r;
            progress(c.label() + ", transactions of " + size + ", repetition " + r);
            node.createTopic(topic, PARTITIONS);
            Result result = measure(node, topic, "bench-" + c.name() + "-" + size + "-" + r, size, records);
            results.get(c).computeIfAbsent(size, s -> new ArrayList<>()).add(result);
            node.requireAlive();
          }
        }
        for (Contender c : KafkaComparison.order(r)) {
          progress(c.label() + ", compaction of " + compactionMib + " MiB, repetition " + r);
          try {
            cleaning.computeIfAbsent(c, k -> new ArrayList<>())
                .add(CompactionBench.measure(nodes.get(c), "compacted-r" + r, compactionMib, compactionKeys));
          } catch (Exception e) {
            progress(c.label() + ": compaction failed: " + e); // shown as failed in the table
          }
        }
      }
    } finally {
      nodes.values().forEach(n -> {
        try {
          n.close();
        } catch (Exception e) {
          progress("could not stop " + n.label() + ": " + e.getMessage());
        }
      });
      ChildJvm.killAll();
      Setup.deleteRecursively(workDir);
    }
    String loadAtEnd = Setup.loadAverage();
    StringBuilder command = new StringBuilder("bench/run-transactions.sh" + (quick ? " --quick" : ""));
    for (String k : List.of("repetitions", "records", "compaction-mib", "compaction-keys")) {
      if (o.containsKey(k)) {
        command.append(" --").append(k).append(' ').append(o.get(k));
      }
    }
    String section = render(results, records, repetitions, o.getOrDefault("kafka-version", "?"), loadAtStart, startedAt,
        command.toString()) + renderCleaning(cleaning, compactionMib, compactionKeys, repetitions, loadAtEnd, command.toString());
    System.out.println();
    System.out.println(section);
    Optional<Path> output = parsed.output();
    if (output.isPresent()) {
      io.tidemark.bench.BenchmarksPage.writeSection(output.get(), "## " + SECTION_TITLE, section);
    }
    return 0;
  }

  /** {@code records} records of 1 KiB in transactions of {@code size}, one transaction after the other. */
  static Result measure(BrokerNode node, String topic, String transactionalId, int size, int records) {
    Map<String, Object> config = new LinkedHashMap<>();
    config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, node.bootstrap());
    config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    config.put(ProducerConfig.ACKS_CONFIG, KafkaTools.ACKS);
    byte[] value = new byte[KafkaTools.RECORD_BYTES];
    new Random(42).nextBytes(value);
    int transactions = Math.max(1, records / size);
    long[] commitNanos = new long[transactions];
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer())) {
      producer.initTransactions();
      long started = System.nanoTime();
      for (int t = 0; t < transactions; t++) {
        producer.beginTransaction();
        for (int i = 0; i < size; i++) {
          producer.send(new ProducerRecord<>(topic, value));
        }
        long committing = System.nanoTime();
        producer.commitTransaction();
        commitNanos[t] = System.nanoTime() - committing;
      }
      double seconds = (System.nanoTime() - started) / 1e9;
      long written = (long) transactions * size;
      Arrays.sort(commitNanos);
      return new Result(written / seconds, written * (double) KafkaTools.RECORD_BYTES / (1 << 20) / seconds, transactions / seconds,
          commitNanos[(int) Math.min(transactions - 1, Math.floor(transactions * 0.50))] / 1e6,
          commitNanos[(int) Math.min(transactions - 1, Math.floor(transactions * 0.99))] / 1e6);
    }
  }

  private static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    sorted.sort(Double::compare);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  static String render(Map<Contender, Map<Integer, List<Result>>> results, int records, int repetitions, String kafkaVersion,
      String loadAtStart, String startedAt, String command) {
    StringBuilder s = new StringBuilder("## " + SECTION_TITLE + "\n\n");
    s.append("One transactional Java producer (kafka-clients ").append(kafkaVersion).append(", transactions V2 on both brokers) writes ")
        .append(records).append(" records of 1 KiB (acks=all) into a topic of ").append(PARTITIONS)
        .append(" partitions, in transactions of 100 or 1,000 records, one after the other; median of ").append(repetitions)
        .append(" repetition(s), contenders measured one at a time in a rotated order. Commit latency is the time of ")
        .append("`commitTransaction()` (flush of the last batches, EndTxn, and for Kafka and Tidemark alike the markers written ")
        .append("before the next transaction can add partitions). Run ").append(startedAt).append(", ")
        .append(Runtime.getRuntime().availableProcessors()).append(" cores, load average at start ").append(loadAtStart)
        .append(", brokers with -Xmx2g; Tidemark on its default local storage settings.\n\n");
    s.append("| contender | records per transaction | records/s | MiB/s | transactions/s | commit p50 ms | commit p99 ms | vs Kafka durable |\n");
    s.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (int size : SIZES) {
      double kafkaDurable = results.getOrDefault(Contender.KAFKA_DURABLE, Map.of()).containsKey(size)
          ? median(results.get(Contender.KAFKA_DURABLE).get(size).stream().map(Result::recordsPerSecond).toList()) : Double.NaN;
      for (Contender c : Contender.values()) {
        List<Result> rs = results.getOrDefault(c, Map.of()).get(size);
        if (rs == null || rs.isEmpty()) {
          s.append("| ").append(c.label()).append(" | ").append(size).append(" | failed | | | | | |\n");
          continue;
        }
        double rps = median(rs.stream().map(Result::recordsPerSecond).toList());
        s.append(String.format(java.util.Locale.ROOT, "| %s | %d | %.0f | %.1f | %.1f | %.1f | %.1f | %.2f× |%n", c.label(), size, rps,
            median(rs.stream().map(Result::mibPerSecond).toList()), median(rs.stream().map(Result::transactionsPerSecond).toList()),
            median(rs.stream().map(Result::commitP50Ms).toList()), median(rs.stream().map(Result::commitP99Ms).toList()),
            rps / kafkaDurable));
      }
    }
    s.append("\nReproduce with `").append(command).append("`.\n");
    return s.toString();
  }

  static String renderCleaning(Map<Contender, List<CompactionBench.Result>> results, int mib, int keys, int repetitions,
      String loadAtEnd, String command) {
    StringBuilder s = new StringBuilder("\n### Compaction\n\n");
    s.append("The same nodes (cleaner looking for work every ").append(CompactionBench.CLEANER_BACKOFF_MS)
        .append(" ms on both, one cleaner thread, other settings at their defaults): a compacted topic of one partition gets ")
        .append(mib).append(" MiB of 1 KiB records whose keys cycle over ").append(keys)
        .append(" keys, then a filler larger than one 8 MiB segment (Kafka never cleans its active segment). Cleaning is held ")
        .append("back by `min.compaction.lag.ms` while writing; the clock starts when it is set to 0 and stops when a read from ")
        .append("offset 0 first returns one of the last ").append(keys).append(" records (every superseded record gone). ")
        .append("MiB/s is the ").append(mib).append(" MiB over that time, so it includes the broker's wait for its next cleaner ")
        .append("run (at most ").append(CompactionBench.CLEANER_BACKOFF_MS).append(" ms) and, for Tidemark, the upload of the ")
        .append("last written data to object storage. Median of ").append(repetitions).append(" repetition(s); load average at the ")
        .append("end of the run ").append(loadAtEnd).append(".\n\n");
    s.append("| contender | MiB cleaned | seconds | MiB/s | vs Kafka durable |\n| --- | ---: | ---: | ---: | ---: |\n");
    List<CompactionBench.Result> durable = results.getOrDefault(Contender.KAFKA_DURABLE, List.of());
    double kafka = durable.isEmpty() ? Double.NaN : median(durable.stream().map(CompactionBench.Result::mibPerSecond).toList());
    for (Contender c : Contender.values()) {
      List<CompactionBench.Result> rs = results.getOrDefault(c, List.of());
      if (rs.size() < repetitions) {
        s.append("| ").append(c.label()).append(" | ").append(mib).append(" | failed in ").append(repetitions - rs.size())
            .append(" of ").append(repetitions).append(" | | |\n");
        continue;
      }
      double rate = median(rs.stream().map(CompactionBench.Result::mibPerSecond).toList());
      s.append(String.format(java.util.Locale.ROOT, "| %s | %d | %.1f | %.1f | %.2f× |%n", c.label(), mib,
          median(rs.stream().map(CompactionBench.Result::seconds).toList()), rate, rate / kafka));
    }
    s.append("\nReproduce with `").append(command).append("` (the same run as the table above).\n");
    return s.toString();
  }

  static void progress(String message) {
    System.err.println("run-transactions: " + message);
  }
}
