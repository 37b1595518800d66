package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.broker.security.Listener;
import io.tidemark.broker.security.TestCertificates;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Goal: real Kafka clients authenticate over TLS and SASL exactly as against Kafka (SCRAM-SHA-256,
 * SCRAM-SHA-512 and PLAIN over SASL_SSL, mutual TLS with a principal mapping rule), a wrong
 * password gets SASL_AUTHENTICATION_FAILED, SCRAM users are created with the Admin API, and each
 * listener advertises its own endpoints, PKCS12 and PEM stores load, and a changed key store is
 * served without a restart. Each TLS case runs on both TLS engines: the listeners named *_OPENSSL
 * use netty-tcnative's OpenSSL ({@code ssl.provider=openssl}), the others the JDK's
 * ({@code ssl.provider=jdk}). One broker with seven listeners serves the whole class.
 */
class SecureListenersTest {

  @TempDir
  static Path dir;
  static TestBroker broker;
  static Path serverStore;
  static Path clientStore;
  static Path clientTrust;
  static Path serverPem;
  static Path reloading;
  static Path reloadingOpenSsl;
  static final List<KafkaPrincipal> seenByListGroups = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    serverStore = TestCertificates.keyPair(dir, "server", "CN=localhost,O=Tidemark");
    clientStore = TestCertificates.keyPair(dir, "client", "CN=Alice,OU=clients,O=Tidemark");
    serverPem = TestCertificates.exportPem(serverStore, "server", dir.resolve("server.pem"));
    Path clientPem = TestCertificates.exportPem(clientStore, "client", dir.resolve("client.pem"));
    clientTrust = TestCertificates.trustStore(dir, "client-trust", List.of(serverPem));
    Map<String, String> s = new HashMap<>();
    s.put("listeners", "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,SSL://127.0.0.1:0,RELOAD://127.0.0.1:0,"
        + "SASL_SSL_OPENSSL://127.0.0.1:0,SSL_OPENSSL://127.0.0.1:0,RELOAD_OPENSSL://127.0.0.1:0");
    s.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL,RELOAD:SSL,"
        + "SASL_SSL_OPENSSL:SASL_SSL,SSL_OPENSSL:SSL,RELOAD_OPENSSL:SSL");
    s.put("ssl.provider", "jdk");
    for (String l : List.of("sasl_ssl_openssl", "ssl_openssl", "reload_openssl")) {
      s.put("listener.name." + l + ".ssl.provider", "openssl");
    }
    reloading = dir.resolve("reloading.p12");
    Files.copy(serverStore, reloading);
    s.put("listener.name.reload.ssl.keystore.location", reloading.toString());
    reloadingOpenSsl = dir.resolve("reloading-openssl.p12");
    Files.copy(serverStore, reloadingOpenSsl);
    s.put("listener.name.reload_openssl.ssl.keystore.location", reloadingOpenSsl.toString());
    s.put("ssl.keystore.reload.check.interval.ms", "100");
    s.put("advertised.listeners", "PLAINTEXT://127.0.0.1:0,SASL_SSL://localhost:0");
    s.put("ssl.keystore.location", serverStore.toString());
    s.put("ssl.keystore.password", TestCertificates.PASSWORD);
    // the mTLS listeners load Kafka's PEM forms: key + chain in one file, trusted client certificates in another
    Path serverKeyPem = TestCertificates.pemKeyStore(serverStore, "server", dir.resolve("server-key.pem"));
    for (String l : List.of("ssl", "ssl_openssl")) {
      s.put("listener.name." + l + ".ssl.client.auth", "required");
      s.put("listener.name." + l + ".ssl.keystore.type", "PEM");
      s.put("listener.name." + l + ".ssl.keystore.location", serverKeyPem.toString());
      s.put("listener.name." + l + ".ssl.truststore.type", "PEM");
      s.put("listener.name." + l + ".ssl.truststore.location", clientPem.toString());
    }
    s.put("ssl.principal.mapping.rules", "RULE:^CN=([^,]+),OU=clients.*$/$1/L,DEFAULT");
    for (String l : List.of("sasl_ssl", "sasl_ssl_openssl")) {
      s.put("listener.name." + l + ".plain.sasl.jaas.config",
          "org.apache.kafka.common.security.plain.PlainLoginModule required user_carol=\"carol-secret\";");
    }
    s.put("sasl.scram.bootstrap.credentials", "SCRAM-SHA-256=[name=admin,password=admin-secret];"
        + "SCRAM-SHA-512=[name=admin,password=admin-secret]");
    broker = new TestBroker(s, TestBroker.recordListGroupsPrincipals(seenByListGroups));
  }

  @AfterAll
  static void stop() {
    if (broker != null) {
      broker.close();
    }
  }

  static String bootstrap(String listener) {
    Listener l = broker.broker.listeners().get(listener);
    return "127.0.0.1:" + l.port();
  }

  static Map<String, Object> saslSsl(String mechanism, String user, String password) {
    return saslSsl("SASL_SSL", mechanism, user, password);
  }

  static Map<String, Object> saslSsl(String listener, String mechanism, String user, String password) {
    Map<String, Object> p = new HashMap<>();
    p.put("bootstrap.servers", bootstrap(listener));
    p.put("security.protocol", "SASL_SSL");
    p.put("ssl.truststore.location", clientTrust.toString());
    p.put("ssl.truststore.password", TestCertificates.PASSWORD);
    p.put("sasl.mechanism", mechanism);
    String module = mechanism.equals("PLAIN") ? "org.apache.kafka.common.security.plain.PlainLoginModule"
        : "org.apache.kafka.common.security.scram.ScramLoginModule";
    p.put("sasl.jaas.config", module + " required username=\"" + user + "\" password=\"" + password + "\";");
    return p;
  }

  static Admin admin(Map<String, Object> config) {
    Map<String, Object> p = new HashMap<>(config);
    p.put("default.api.timeout.ms", 30_000);
    p.put("request.timeout.ms", 20_000);
    return Admin.create(p);
  }

  static void roundTrip(Map<String, Object> security, String topic) throws Exception {
    try (KafkaProducer<String, String> producer = broker.producer(security)) {
      for (int i = 0; i < 20; i++) {
        producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i)).get(30, TimeUnit.SECONDS);
      }
    }
    List<String> values = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = broker.consumer(security)) {
      consumer.assign(List.of(new org.apache.kafka.common.TopicPartition(topic, 0)));
      consumer.seekToBeginning(List.of(new org.apache.kafka.common.TopicPartition(topic, 0)));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (values.size() < 20 && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          values.add(r.value());
        }
      }
    }
    assertThat(values).hasSize(20).startsWith("v0").endsWith("v19");
  }

  @ParameterizedTest
  @ValueSource(strings = {"SASL_SSL", "SASL_SSL_OPENSSL"})
  void scramUsersCreatedThroughAdminProduceAndConsumeOverSaslSsl(String listener) throws Exception {
    String suffix = listener.toLowerCase(java.util.Locale.ROOT);
    try (Admin admin = admin(saslSsl(listener, "SCRAM-SHA-256", "admin", "admin-secret"))) {
      admin.alterUserScramCredentials(List.of(
          new UserScramCredentialUpsertion("alice", new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), "alice-pw"),
          new UserScramCredentialUpsertion("bob", new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), "bob-pw")))
          .all().get(30, TimeUnit.SECONDS);
      Map<String, UserScramCredentialsDescription> described = admin.describeUserScramCredentials(List.of("alice", "bob"))
          .all().get(30, TimeUnit.SECONDS);
      assertThat(described.get("alice").credentialInfos()).extracting(ScramCredentialInfo::mechanism)
          .containsExactly(ScramMechanism.SCRAM_SHA_256);
      assertThat(described.get("bob").credentialInfos()).extracting(ScramCredentialInfo::iterations).containsExactly(8192);
      // Describing every user (users = null on the wire) lists both, as kafka-configs --describe --entity-type users does.
      assertThat(admin.describeUserScramCredentials().all().get(30, TimeUnit.SECONDS)).containsKeys("alice", "bob");
      admin.createTopics(List.of(new NewTopic("scram256-" + suffix, 1, (short) 1), new NewTopic("scram512-" + suffix, 1,
          (short) 1))).all().get(30, TimeUnit.SECONDS);
    }
    roundTrip(saslSsl(listener, "SCRAM-SHA-256", "alice", "alice-pw"), "scram256-" + suffix);
    roundTrip(saslSsl(listener, "SCRAM-SHA-512", "bob", "bob-pw"), "scram512-" + suffix);
  }

  @ParameterizedTest
  @ValueSource(strings = {"SASL_SSL", "SASL_SSL_OPENSSL"})
  void plainUsersFromJaasAndScramUsersByPassword(String listener) throws Exception {
    roundTrip(saslSsl(listener, "PLAIN", "carol", "carol-secret"), "plain-" + listener.toLowerCase(java.util.Locale.ROOT));
    try (Admin admin = admin(saslSsl(listener, "PLAIN", "admin", "admin-secret"))) {
      assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).hasSize(1);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"SASL_SSL", "SASL_SSL_OPENSSL"})
  void wrongPasswordOrUnknownUserIsRefusedWithAnAuthenticationError(String listener) {
    for (Map<String, Object> bad : List.of(saslSsl(listener, "SCRAM-SHA-256", "admin", "wrong"),
        saslSsl(listener, "SCRAM-SHA-512", "nobody", "x"), saslSsl(listener, "PLAIN", "carol", "wrong"))) {
      try (Admin admin = admin(bad)) {
        assertThatThrownBy(() -> admin.describeCluster().nodes().get(30, TimeUnit.SECONDS))
            .isInstanceOf(ExecutionException.class).cause().isInstanceOf(SaslAuthenticationException.class);
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"SSL", "SSL_OPENSSL"})
  void mutualTlsNamesThePrincipalByTheMappingRuleAndRefusesClientsWithoutACertificate(String listener) throws Exception {
    seenByListGroups.clear();
    Map<String, Object> mtls = new HashMap<>();
    mtls.put("bootstrap.servers", bootstrap(listener));
    mtls.put("security.protocol", "SSL");
    mtls.put("ssl.truststore.location", clientTrust.toString());
    mtls.put("ssl.truststore.password", TestCertificates.PASSWORD);
    mtls.put("ssl.keystore.location", clientStore.toString());
    mtls.put("ssl.keystore.password", TestCertificates.PASSWORD);
    mtls.put("ssl.endpoint.identification.algorithm", "");
    try (Admin admin = admin(mtls)) {
      admin.listGroups().all().get(30, TimeUnit.SECONDS);
    }
    assertThat(seenByListGroups).contains(new KafkaPrincipal("User", "alice"));
    Map<String, Object> noCert = new HashMap<>(mtls);
    noCert.remove("ssl.keystore.location");
    noCert.remove("ssl.keystore.password");
    noCert.put("default.api.timeout.ms", 5_000);
    noCert.put("request.timeout.ms", 4_000);
    try (Admin admin = Admin.create(noCert)) {
      assertThatThrownBy(() -> admin.describeCluster().nodes().get(20, TimeUnit.SECONDS)).isInstanceOf(Exception.class);
    }
    try (Admin admin = broker.admin()) {
      admin.listGroups().all().get(30, TimeUnit.SECONDS);
    }
    assertThat(seenByListGroups).contains(KafkaPrincipal.ANONYMOUS).doesNotContain(new KafkaPrincipal("User",
        "CN=Alice,OU=clients,O=Tidemark"));
  }

  @Test
  void eachListenerAdvertisesItsOwnEndpoints() throws Exception {
    try (Admin admin = admin(saslSsl("SCRAM-SHA-256", "admin", "admin-secret"))) {
      var node = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).iterator().next();
      assertThat(node.host()).isEqualTo("localhost");
      assertThat(node.port()).isEqualTo(broker.broker.listeners().get("SASL_SSL").port());
    }
    try (Admin admin = broker.admin()) {
      var node = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).iterator().next();
      assertThat(node.host()).isEqualTo("127.0.0.1");
      assertThat(node.port()).isEqualTo(broker.broker.listeners().get("PLAINTEXT").port());
    }
  }

  @Test
  void pkcs12AndPemKeyStoresServeTheSameCertificateOnBothEngines() throws Exception {
    X509Certificate fromPkcs12 = peerCertificate(broker.broker.listeners().get("SASL_SSL").port());
    assertThat(fromPkcs12.getSubjectX500Principal().getName()).isEqualTo("CN=localhost,O=Tidemark");
    for (String other : List.of("SSL", "SASL_SSL_OPENSSL", "SSL_OPENSSL")) {
      assertThat(peerCertificate(broker.broker.listeners().get(other).port())).as(other).isEqualTo(fromPkcs12);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"RELOAD", "RELOAD_OPENSSL"})
  void aChangedKeyStoreFileIsServedToNewConnectionsWithoutARestart(String listener) throws Exception {
    int port = broker.broker.listeners().get(listener).port();
    Path file = listener.equals("RELOAD") ? reloading : reloadingOpenSsl;
    assertThat(peerCertificate(port).getSubjectX500Principal().getName()).isEqualTo("CN=localhost,O=Tidemark");
    Path rotated = TestCertificates.keyPair(Files.createDirectories(dir.resolve("rotated-" + listener)), "server",
        "CN=rotated,O=Tidemark");
    Files.move(rotated, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() ->
        peerCertificate(port).getSubjectX500Principal().getName().equals("CN=rotated,O=Tidemark"));
  }

  /** The certificate a TLS listener presents to a client that trusts anything (and presents the client key pair). */
  static X509Certificate peerCertificate(int port) throws Exception {
    return TestCertificates.peerCertificate(port, clientStore);
  }
}
