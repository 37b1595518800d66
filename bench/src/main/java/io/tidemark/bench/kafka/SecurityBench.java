package io.tidemark.bench.kafka;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.ToDoubleFunction;

/**
 * The cost of TLS + SASL on produce, Tidemark next to Apache Kafka of the kafka-clients version
 * (durable: {@code log.flush.interval.messages=1}, and default), in the same run with the same
 * tool. Every broker has two client listeners, PLAINTEXT and SASL_SSL (TLS with a self-signed EC
 * P-256 certificate made by keytool, SCRAM-SHA-512 user {@value #USER} created at format/first
 * start), TLS defaults on both sides: Kafka on the JDK's engine, Tidemark on the engine of
 * {@code --tidemark-ssl-provider} (its {@code ssl.provider}: auto, openssl or jdk; default auto).
 * Kafka's ProducerPerformance (1 KiB records, acks=all, topic of {@value #PARTITIONS} partitions)
 * runs once as fast as the broker takes it (records/s, MiB/s, p99) and once at a fixed rate (p50,
 * p99, and the p99 of the records after the first {@value #WARMUP_SECONDS} s, which leaves out the
 * client's start: its connections' TLS handshakes and SASL logins), on each listener.
 * The TLS cost of a contender is its SASL_SSL figure divided by its PLAINTEXT one. The nodes start
 * once; each runs an unmeasured warm-up on both listeners; each repetition measures every
 * contender on both listeners in an order rotated per repetition (medians reported). Writes the
 * section {@value #SECTION_TITLE} of {@code docs/benchmarks.md}. Runs on the caller's thread.
 *
 * <pre>
 *   bench/run-security.sh [--quick] [--repetitions N] [--records N] [--rate N] [--tidemark-ssl-provider auto|openssl|jdk]
 *                         [--output FILE | --no-output]
 * </pre>
 */
public final class SecurityBench {

  static final String SECTION_TITLE = "Security (issue 13)";
  static final String USER = "bench";
  static final String PASSWORD = "bench-secret";
  static final String MECHANISM = "SCRAM-SHA-512";
  static final int PARTITIONS = 4;
  private static final String STORE_PASSWORD = "bench-store-pass";
  private static final Duration TOOL_TIMEOUT = Duration.ofMinutes(10);
  /** The fixed-rate run's steady-state p99 leaves out the records of its first seconds (connection set-up). */
  static final int WARMUP_SECONDS = 3;

  private SecurityBench() {}

  /** The listener a measurement goes through. */
  enum Protocol {
    PLAINTEXT, SASL_SSL
  }

  /** One measurement on one listener: the unlimited run and the fixed-rate run. */
  record Result(double recordsPerSecond, double mibPerSecond, double p99AtMaxMs, double p50FixedMs, double p99FixedMs,
      double p99SteadyFixedMs) {}

  /** A started broker and the bootstrap address of its SASL_SSL listener. */
  private record Node(BrokerNode broker, String saslSslBootstrap) {}

  public static void main(String[] args) throws Exception {
    System.exit(run(args));
  }

  static int run(String[] args) throws Exception {
    BenchArgs parsed = BenchArgs.parse(args);
    Map<String, String> o = parsed.options();
    boolean quick = parsed.quick();
    int repetitions = Integer.parseInt(o.getOrDefault("repetitions", quick ? "1" : "3"));
    int records = Integer.parseInt(o.getOrDefault("records", quick ? "20000" : "100000"));
    int rate = Integer.parseInt(o.getOrDefault("rate", "500"));
    int fixedRecords = rate * (quick ? 5 : 15);
    String tidemarkProvider = o.getOrDefault("tidemark-ssl-provider", "auto");
    if (!List.of("auto", "openssl", "jdk").contains(tidemarkProvider)) {
      throw new IllegalArgumentException("--tidemark-ssl-provider must be auto, openssl or jdk");
    }
    Path workDir = Files.createTempDirectory("tidemark-security-bench-");
    Path logDir = Path.of("bench", "target", "security-bench-logs");
    Setup.deleteRecursively(logDir);
    Files.createDirectories(logDir);
    Runtime.getRuntime().addShutdownHook(new Thread(ChildJvm::killAll, "security-bench-cleanup"));
    Setup setup = new Setup(Path.of(System.getProperty("java.home"), "bin", "java"), List.of("-Xmx2g"), List.of("-Xmx512m"),
        parsed.require("kafka-classpath", "bench/run-security.sh"),
        parsed.require("tidemark-classpath", "bench/run-security.sh"), workDir, logDir);
    KafkaTools tools = new KafkaTools(setup, TOOL_TIMEOUT);
    String loadAtStart = Setup.loadAverage();
    String startedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    Map<Contender, Map<Protocol, List<Result>>> results = new EnumMap<>(Contender.class);
    Map<Contender, Node> nodes = new EnumMap<>(Contender.class);
    String loadAtEnd;
    try {
      Path keystore = keyStore(workDir);
      Path clientConfig = clientConfig(workDir, trustStore(workDir, keystore));
      for (Contender c : Contender.values()) {
        progress("starting " + c.label());
        Node node = start(c, setup, keystore, tidemarkProvider);
        nodes.put(c, node);
        node.broker().awaitReady(Duration.ofMinutes(3));
        results.put(c, new EnumMap<>(Protocol.class));
      }
      for (Contender c : Contender.values()) {
        Node node = nodes.get(c);
        for (Protocol p : Protocol.values()) {
          progress(c.label() + ", " + p + ": warm-up (not measured)");
          String topic = "warm-up-" + p.name().toLowerCase(Locale.ROOT);
          node.broker().createTopic(topic, PARTITIONS);
          produce(tools, node, p, clientConfig, topic, records, -1, 0);
        }
      }
      for (int r = 1; r <= repetitions; r++) {
        for (Contender c : KafkaComparison.order(r)) {
          // the two listeners of one broker back to back, their order swapped every repetition
          List<Protocol> protocols = r % 2 == 1 ? List.of(Protocol.values()) : List.of(Protocol.SASL_SSL, Protocol.PLAINTEXT);
          for (Protocol p : protocols) {
            Node node = nodes.get(c);
            progress(c.label() + ", " + p + ", repetition " + r + " (load " + Setup.loadAverage() + ")");
            String suffix = "-" + p.name().toLowerCase(Locale.ROOT) + "-r" + r;
            node.broker().createTopic("max" + suffix, PARTITIONS);
            ToolOutput.Producer max = produce(tools, node, p, clientConfig, "max" + suffix, records, -1, 0);
            node.broker().createTopic("fixed" + suffix, PARTITIONS);
            ToolOutput.Producer fixed = produce(tools, node, p, clientConfig, "fixed" + suffix, fixedRecords, rate,
                (long) rate * WARMUP_SECONDS);
            results.get(c).computeIfAbsent(p, k -> new ArrayList<>()).add(new Result(max.recordsPerSecond(), max.mibPerSecond(),
                max.p99Ms(), fixed.p50Ms(), fixed.p99Ms(), fixed.steadyP99Ms()));
            node.broker().requireAlive();
          }
        }
      }
      loadAtEnd = Setup.loadAverage();
    } finally {
      for (Node n : nodes.values()) {
        try {
          n.broker().close();
        } catch (Exception e) {
          progress("could not stop " + n.broker().label() + ": " + e.getMessage());
        }
      }
      ChildJvm.killAll();
      Setup.deleteRecursively(workDir);
    }
    String command = "bench/run-security.sh" + (quick ? " --quick" : "")
        + (o.containsKey("repetitions") ? " --repetitions " + repetitions : "")
        + (o.containsKey("records") ? " --records " + records : "") + (o.containsKey("rate") ? " --rate " + rate : "")
        + (o.containsKey("tidemark-ssl-provider") ? " --tidemark-ssl-provider " + tidemarkProvider : "");
    String section = render(results, records, rate, fixedRecords, repetitions, o.getOrDefault("kafka-version", "?"),
        loadAtStart, loadAtEnd, startedAt, command, tidemarkEngine(tidemarkProvider, logDir));
    System.out.println();
    System.out.println(section);
    Optional<Path> output = parsed.output();
    if (output.isPresent()) {
      io.tidemark.bench.BenchmarksPage.writeSection(output.get(), "## " + SECTION_TITLE, section);
    }
    return 0;
  }

  private static ToolOutput.Producer produce(KafkaTools tools, Node node, Protocol p, Path clientConfig, String topic,
      long records, int rate, long warmupRecords) throws Exception {
    return p == Protocol.PLAINTEXT
        ? tools.produce(node.broker(), node.broker().bootstrap(), null, topic, records, rate, warmupRecords)
        : tools.produce(node.broker(), node.saslSslBootstrap(), clientConfig, topic, records, rate, warmupRecords);
  }

  /** The TLS engine Tidemark's SASL_SSL listener logged at start ("TLS engine ..."), or the setting when not found. */
  private static String tidemarkEngine(String provider, Path logDir) {
    try (var files = Files.list(logDir)) {
      for (Path f : files.filter(f -> f.getFileName().toString().startsWith("tidemark")).toList()) {
        for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
          int at = line.indexOf("TLS engine ");
          if (line.contains("Kafka listener SASL_SSL") && at >= 0) {
            return line.substring(at + "TLS engine ".length(), line.lastIndexOf(')'));
          }
        }
      }
    } catch (java.io.IOException | RuntimeException e) {
      progress("could not read Tidemark's TLS engine from its log: " + e.getMessage());
    }
    return "ssl.provider=" + provider;
  }

  private static Node start(Contender c, Setup setup, Path keystore, String tidemarkProvider) throws Exception {
    int saslSslPort = Setup.freePort();
    String tls = """
        ssl.keystore.location=%s
        ssl.keystore.type=PKCS12
        ssl.keystore.password=%s
        sasl.enabled.mechanisms=%s
        """.formatted(keystore, STORE_PASSWORD, MECHANISM);
    String host = Setup.LOOPBACK;
    BrokerNode broker = switch (c) {
      case TIDEMARK -> {
        int port = Setup.freePort();
        yield TidemarkNode.start(setup, c.label(), "tidemark", port, """
            # Two client listeners (bench/run-security.sh); the node's own clients use PLAINTEXT.
            listeners=PLAINTEXT://%1$s:%2$d,SASL_SSL://%1$s:%3$d
            advertised.listeners=PLAINTEXT://%1$s:%2$d,SASL_SSL://%1$s:%3$d
            inter.broker.listener.name=PLAINTEXT
            sasl.scram.bootstrap.credentials=%4$s=[name=%5$s,password=%6$s]
            ssl.provider=%7$s
            """.formatted(host, port, saslSslPort, MECHANISM, USER, PASSWORD, tidemarkProvider) + tls);
      }
      case KAFKA_DURABLE, KAFKA_DEFAULT -> ApacheKafka.start(setup, c.label(),
          c == Contender.KAFKA_DURABLE ? "kafka-durable" : "kafka-default", c == Contender.KAFKA_DURABLE, saslSslPort,
          tls + "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config="
              + "org.apache.kafka.common.security.scram.ScramLoginModule required;\n",
          List.of("--add-scram", MECHANISM + "=[name=" + USER + ",password=" + PASSWORD + "]"));
    };
    return new Node(broker, host + ":" + saslSslPort);
  }

  /** The brokers' key store: a self-signed EC P-256 key pair for CN=localhost, SAN 127.0.0.1. */
  private static Path keyStore(Path dir) throws Exception {
    Path store = dir.resolve("broker.p12");
    keytool("-genkeypair", "-alias", "broker", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "30", "-dname",
        "CN=localhost", "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-storetype", "PKCS12", "-keystore", store.toString(),
        "-storepass", STORE_PASSWORD, "-keypass", STORE_PASSWORD);
    return store;
  }

  /** The clients' trust store: the brokers' certificate. */
  private static Path trustStore(Path dir, Path keystore) throws Exception {
    Path pem = dir.resolve("broker.pem");
    keytool("-exportcert", "-rfc", "-alias", "broker", "-keystore", keystore.toString(), "-storepass", STORE_PASSWORD,
        "-file", pem.toString());
    Path trust = dir.resolve("client-trust.p12");
    keytool("-importcert", "-noprompt", "-alias", "broker", "-file", pem.toString(), "-storetype", "PKCS12", "-keystore",
        trust.toString(), "-storepass", STORE_PASSWORD);
    return trust;
  }

  private static Path clientConfig(Path dir, Path trust) throws Exception {
    Path config = dir.resolve("sasl-ssl-client.properties");
    Files.writeString(config, """
        security.protocol=SASL_SSL
        ssl.truststore.location=%s
        ssl.truststore.type=PKCS12
        ssl.truststore.password=%s
        sasl.mechanism=%s
        sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";
        """.formatted(trust, STORE_PASSWORD, MECHANISM, USER, PASSWORD), StandardCharsets.UTF_8);
    return config;
  }

  private static void keytool(String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    byte[] out = process.getInputStream().readAllBytes();
    if (!process.waitFor(2, java.util.concurrent.TimeUnit.MINUTES) || process.exitValue() != 0) {
      throw new IllegalStateException("keytool failed: " + command + "\n" + new String(out, StandardCharsets.UTF_8));
    }
  }

  static double median(List<Result> results, ToDoubleFunction<Result> figure) {
    double[] sorted = results.stream().mapToDouble(figure).sorted().toArray();
    int n = sorted.length;
    return n == 0 ? Double.NaN : n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  static String render(Map<Contender, Map<Protocol, List<Result>>> results, int records, int rate, int fixedRecords,
      int repetitions, String kafkaVersion, String loadAtStart, String loadAtEnd, String startedAt, String command,
      String tidemarkEngine) {
    StringBuilder s = new StringBuilder("## " + SECTION_TITLE + "\n\n");
    s.append("Produce over SASL_SSL (TLS + SCRAM-SHA-512) next to PLAINTEXT, on the same broker: every broker has both ")
        .append("listeners; Kafka's ProducerPerformance (kafka-tools ").append(kafkaVersion).append(", 1 KiB records, acks=all, ")
        .append("topic of ").append(PARTITIONS).append(" partitions) writes ").append(records)
        .append(" records as fast as the broker takes them, then ").append(fixedRecords).append(" records at ").append(rate)
        .append(" records/s (the last column leaves out the records of its first ").append(WARMUP_SECONDS)
        .append(" s, ProducerPerformance's `--warmup-records`: the client's start, with its connections' TLS handshakes ")
        .append("and SASL logins). TLS engines: Tidemark, Netty's `SslHandler` over ").append(tidemarkEngine)
        .append("; Kafka, its own `SslTransportLayer` over the JDK `SSLEngine`; defaults (TLS 1.3), a ")
        .append("self-signed EC P-256 certificate. Median of ").append(repetitions).append(" repetition(s); brokers measured ")
        .append("one at a time in a rotated order, both listeners of a broker back to back. Run ").append(startedAt)
        .append(", ").append(Runtime.getRuntime().availableProcessors()).append(" cores, load average ").append(loadAtStart)
        .append(" at start and ").append(loadAtEnd).append(" at the end, brokers with -Xmx2g; Tidemark on its default ")
        .append("local storage settings (durable: an acknowledged record is on disk).\n\n");
    s.append("| contender | listener | records/s | MiB/s | p99 ms at max | p50 ms at ").append(rate).append("/s | p99 ms at ")
        .append(rate).append("/s | p99 ms at ").append(rate).append("/s after ").append(WARMUP_SECONDS).append(" s |\n");
    s.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (Contender c : Contender.values()) {
      for (Protocol p : Protocol.values()) {
        List<Result> rs = results.getOrDefault(c, Map.of()).getOrDefault(p, List.of());
        if (rs.isEmpty()) {
          s.append("| ").append(c.label()).append(" | ").append(p).append(" | failed | | | | | |\n");
          continue;
        }
        s.append(String.format(Locale.ROOT, "| %s | %s | %.0f | %.1f | %.0f | %.0f | %.0f | %.0f |%n", c.label(), p,
            median(rs, Result::recordsPerSecond), median(rs, Result::mibPerSecond), median(rs, Result::p99AtMaxMs),
            median(rs, Result::p50FixedMs), median(rs, Result::p99FixedMs), median(rs, Result::p99SteadyFixedMs)));
      }
    }
    s.append("\nTLS cost: SASL_SSL divided by PLAINTEXT on the same broker (throughput below 1 and latency above 1 is a ")
        .append("cost; the target is Tidemark's cost no larger than Kafka's).\n\n");
    s.append("| contender | throughput ratio | p99 at max ratio | p99 at ").append(rate).append("/s ratio | p99 at ")
        .append(rate).append("/s after ").append(WARMUP_SECONDS).append(" s ratio |\n");
    s.append("| --- | ---: | ---: | ---: | ---: |\n");
    for (Contender c : Contender.values()) {
      Map<Protocol, List<Result>> byProtocol = results.getOrDefault(c, Map.of());
      List<Result> plain = byProtocol.getOrDefault(Protocol.PLAINTEXT, List.of());
      List<Result> secured = byProtocol.getOrDefault(Protocol.SASL_SSL, List.of());
      s.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s |%n", c.label(),
          ratio(secured, plain, Result::recordsPerSecond), ratio(secured, plain, Result::p99AtMaxMs),
          ratio(secured, plain, Result::p99FixedMs), ratio(secured, plain, Result::p99SteadyFixedMs)));
    }
    s.append("\nReproduce with `").append(command).append("`; every broker and tool log is kept in ")
        .append("`bench/target/security-bench-logs`.\n");
    return s.toString();
  }

  private static String ratio(List<Result> secured, List<Result> plain, ToDoubleFunction<Result> figure) {
    double a = median(secured, figure);
    double b = median(plain, figure);
    return Double.isNaN(a) || Double.isNaN(b) || b == 0 ? "n/a" : String.format(Locale.ROOT, "%.2f", a / b);
  }

  static void progress(String message) {
    System.err.println("run-security: " + message);
  }
}
