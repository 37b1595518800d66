package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.broker.security.TestCertificates;
import io.tidemark.server.storage.EmbeddedStorage;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: the broker configs Kafka applies at run time that mean something here, altered with Kafka's
 * own {@code kafka-configs} tool class (in this JVM), apply without a restart, as Kafka applies them:
 * {@code num.network.threads} resizes the event loops new connections are spread over (gauge and
 * thread names), {@code log.cleaner.threads} the cleaner's pool (thread names), and
 * {@code listener.name.ssl.ssl.keystore.*} rotates the SSL listener's certificate: a new TLS
 * connection gets the new one while a producer connected before keeps producing on its connection.
 * Bad values, a per-broker key at the cluster default and a certificate with another subject are
 * refused with Kafka's messages and change nothing; DescribeConfigs reports Kafka's sources; after a
 * restart (the last test) every value is in force again. One node serves the class.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DynamicRuntimeConfigTest {

  @TempDir static Path dir;
  static TidemarkServer server;
  static Path keystoreA;
  static Path keystoreB;
  static X509Certificate certA;
  static X509Certificate certB;
  static Path trustA;

  @BeforeAll
  static void start() throws Exception {
    keystoreA = TestCertificates.keyPair(Files.createDirectories(dir.resolve("a")), "server", "CN=localhost,O=Tidemark");
    keystoreB = TestCertificates.keyPair(Files.createDirectories(dir.resolve("b")), "server", "CN=localhost,O=Tidemark");
    certA = certificate(keystoreA);
    certB = certificate(keystoreB);
    trustA = dir.resolve("trust-a.p12"); // built here rather than with keytool: one JVM start less
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("a", certA);
    try (var out = Files.newOutputStream(trustA)) {
      trust.store(out, TestCertificates.PASSWORD.toCharArray());
    }
    startServer();
  }

  static void startServer() {
    server = Main.start(List.of("--set", "data.dir=" + dir.resolve("data"), "--set", "admin.port=0", "--set", "admin.host=127.0.0.1",
        "--set", "wal.capacity.bytes=" + (32L << 20), "--set", "registry.host=127.0.0.1", "--set", "registry.port=0",
        "--set", "table.rest.host=127.0.0.1", "--set", "table.rest.port=0", "--set", "controller.voters=" + FreePorts.singleVoter(),
        "--set", "listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
        "--set", "advertised.listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
        "--set", "ssl.keystore.location=" + keystoreA, "--set", "ssl.keystore.password=" + TestCertificates.PASSWORD,
        "--set", "kafka.network.threads=2"), Map.of(), new EmbeddedStorage());
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  static String bootstrap() {
    return "127.0.0.1:" + server.kafkaPort().orElseThrow();
  }

  static int sslPort() {
    return server.broker().orElseThrow().listeners().get("SSL").port();
  }

  static String configs(int expectedExit, String... args) {
    List<String> all = new ArrayList<>(List.of("--bootstrap-server", bootstrap()));
    all.addAll(List.of(args));
    return KafkaConfigsTool.run(expectedExit, all.toArray(String[]::new));
  }

  static Config broker() throws Exception {
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap(), "default.api.timeout.ms", 30_000))) {
      ConfigResource r = new ConfigResource(ConfigResource.Type.BROKER, "0");
      return admin.describeConfigs(List.of(r), new org.apache.kafka.clients.admin.DescribeConfigsOptions().includeSynonyms(true))
          .all().get(30, TimeUnit.SECONDS).get(r);
    }
  }

  static double networkThreadsGauge() {
    return server.meters().find("tidemark.kafka.network.threads").gauge().value();
  }

  static io.tidemark.broker.network.NetworkThreads networkThreads() {
    return server.broker().orElseThrow().networkThreads();
  }

  static long threadsNamed(String prefix) {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).count();
  }

  /** Opens {@code n} plain connections at once (each lands on an event loop), then closes them. */
  static void connect(int n) throws Exception {
    List<Socket> sockets = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        sockets.add(new Socket("127.0.0.1", server.kafkaPort().orElseThrow()));
      }
    } finally {
      for (Socket s : sockets) {
        s.close();
      }
    }
  }

  @Test
  @Order(1)
  void networkThreadsResizeAtRunTimeWithinKafkasBounds() throws Exception {
    assertThat(networkThreadsGauge()).isEqualTo(2.0);
    assertThat(broker().get("num.network.threads").value()).isEqualTo("2");
    connect(8);
    Awaitility.await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(10)).until(() -> networkThreads().started() <= 2);

    assertThat(configs(1, "--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config", "num.network.threads=9"))
        .contains("Dynamic thread count update validation failed for num.network.threads=9, value should not be greater than "
            + "double the current value 2");
    assertThat(configs(1, "--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config", "num.network.threads=abc"))
        .contains("Not a number of type INT");
    assertThat(networkThreadsGauge()).isEqualTo(2.0);

    configs(0, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config", "num.network.threads=3");
    assertThat(networkThreadsGauge()).isEqualTo(3.0);
    configs(0, "--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config", "num.network.threads=4");
    assertThat(networkThreadsGauge()).isEqualTo(4.0);
    ConfigEntry entry = broker().get("num.network.threads");
    assertThat(entry.value()).isEqualTo("4");
    assertThat(entry.source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG);
    assertThat(entry.synonyms()).extracting(ConfigEntry.ConfigSynonym::source).containsExactly(
        ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG, ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
        ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG);
    connect(8);
    Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> networkThreads().started() == 4);
    assertThat(threadsNamed("kafka-network-thread-0-")).isGreaterThanOrEqualTo(4);
    assertThat(configs(1, "--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config", "num.network.threads=5"))
        .contains("value should be at most 4");

    configs(0, "--alter", "--entity-type", "brokers", "--entity-name", "0", "--delete-config", "num.network.threads");
    assertThat(networkThreadsGauge()).isEqualTo(3.0);
    assertThat(broker().get("num.network.threads").source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
  }

  @Test
  @Order(2)
  void logCleanerThreadsResizeAtRunTime() throws Exception {
    var cleaner = server.broker().orElseThrow().logCleaner().orElseThrow();
    assertThat(cleaner.threads()).isEqualTo(1);
    assertThat(configs(1, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config", "log.cleaner.threads=3"))
        .contains("Log cleaner threads cannot be increased to more than double the current value 1");
    assertThat(configs(1, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config", "log.cleaner.threads=0"))
        .contains("Log cleaner threads should be at least 1");
    configs(0, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config", "log.cleaner.threads=2");
    assertThat(cleaner.threads()).isEqualTo(2);
    ConfigEntry entry = broker().get("log.cleaner.threads");
    assertThat(entry.value()).isEqualTo("2");
    assertThat(entry.source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);

    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap(), "default.api.timeout.ms", 30_000))) {
      admin.createTopics(List.of(new NewTopic("compacted-1", 1, (short) 1).configs(Map.of("cleanup.policy", "compact")),
          new NewTopic("compacted-2", 1, (short) 1).configs(Map.of("cleanup.policy", "compact")))).all().get(30, TimeUnit.SECONDS);
    }
    cleaner.runOnce(); // __consumer_offsets and the two topics: more compacted partitions than threads
    assertThat(Thread.getAllStackTraces().keySet()).extracting(Thread::getName)
        .contains("kafka-log-cleaner-thread-0", "kafka-log-cleaner-thread-1").doesNotContain("kafka-log-cleaner-thread-2");
  }

  @Test
  @Order(3)
  void listenerKeyStoreRotatesForNewConnectionsWhileOpenOnesKeepWorking() throws Exception {
    assertThat(peerCertificate(sslPort())).isEqualTo(certA);
    Map<String, Object> ssl = new HashMap<>(Map.of("bootstrap.servers", "127.0.0.1:" + sslPort(), "security.protocol", "SSL",
        "ssl.truststore.location", trustA.toString(), "ssl.truststore.password", TestCertificates.PASSWORD,
        "ssl.truststore.type", "PKCS12", "retries", 0, "delivery.timeout.ms", 30_000, "request.timeout.ms", 20_000));
    try (KafkaProducer<String, String> before = new KafkaProducer<>(ssl, new StringSerializer(), new StringSerializer())) {
      before.send(new ProducerRecord<>("rotation", "k", "before")).get(30, TimeUnit.SECONDS);

      Path other = TestCertificates.keyPair(Files.createDirectories(dir.resolve("c")), "server", "CN=other,O=Tidemark");
      String prefix = "listener.name.ssl.ssl.keystore.";
      assertThat(configs(1, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config",
          prefix + "location=" + keystoreB)).contains("Cannot update these configs at default cluster level, broker id must be specified: "
          + prefix + "location");
      assertThat(configs(1, "--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config",
          prefix + "location=" + other)).contains("Keystore DistinguishedName or SubjectAltNames do not match");
      assertThat(configs(1, "--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config",
          prefix + "location=" + keystoreB + "," + prefix + "password=wrong")).contains("Validation of dynamic config update of SSLFactory failed");
      assertThat(peerCertificate(sslPort())).isEqualTo(certA);

      configs(0, "--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config",
          prefix + "location=" + keystoreB + "," + prefix + "password=" + TestCertificates.PASSWORD);
      assertThat(peerCertificate(sslPort())).isEqualTo(certB);
      // the producer trusts only the old certificate: it succeeds only on the connection it opened before
      before.send(new ProducerRecord<>("rotation", "k", "after")).get(30, TimeUnit.SECONDS);
    }
    Config described = broker();
    assertThat(described.get("listener.name.ssl.ssl.keystore.location").value()).isEqualTo(keystoreB.toString());
    assertThat(described.get("listener.name.ssl.ssl.keystore.location").source())
        .isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG);
    assertThat(described.get("listener.name.ssl.ssl.keystore.password").isSensitive()).isTrue();
    assertThat(described.get("listener.name.ssl.ssl.keystore.password").value()).isNull();
  }

  @Test
  @Order(4)
  void everyValueIsInForceAgainAfterARestart() throws Exception {
    server.close();
    server = null;
    startServer();
    assertThat(networkThreadsGauge()).isEqualTo(3.0);
    assertThat(server.broker().orElseThrow().logCleaner().orElseThrow().threads()).isEqualTo(2);
    assertThat(peerCertificate(sslPort())).isEqualTo(certB);
    assertThat(broker().get("listener.name.ssl.ssl.keystore.location").source())
        .isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG);
  }

  static X509Certificate certificate(Path keystore) throws Exception {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (var in = Files.newInputStream(keystore)) {
      ks.load(in, TestCertificates.PASSWORD.toCharArray());
    }
    return (X509Certificate) ks.getCertificate("server");
  }

  /** The certificate the listener presents to a new connection of a client that trusts anything. */
  static X509Certificate peerCertificate(int port) throws Exception {
    return TestCertificates.peerCertificate(port, null);
  }
}
