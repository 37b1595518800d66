package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import io.tidemark.broker.security.StaticTokenLoginHandler;
import io.tidemark.broker.security.TestCertificates;
import io.tidemark.broker.security.TestJwts;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SaslHandshakeResponse;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: SASL OAUTHBEARER works as against a Kafka broker configured with
 * OAuthBearerValidatorCallbackHandler: Java producers and consumers over SASL_SSL with Kafka's own
 * OAuthBearerLoginCallbackHandler (client credentials against a token endpoint) and with a custom
 * token handler; the JWT is checked against a JSON Web Key Set served over HTTP (a rotated-in key is
 * picked up); wrong signature, expired, wrong audience and wrong issuer tokens are refused with
 * SASL_AUTHENTICATION_FAILED naming the reason; the principal is the sub claim; a session ends
 * with the token's expiry and clients re-authenticate (KIP-368). One broker and one identity
 * provider (a JDK HTTP server) serve the class.
 */
class OAuthBearerTest {

  static final String ISSUER = "https://idp.test";
  static final String AUDIENCE = "tidemark";

  @TempDir
  static Path dir;
  static TestBroker broker;
  static HttpServer idp;
  static final TestJwts jwts = new TestJwts().addKey("k1");
  static final AtomicReference<String> published = new AtomicReference<>();
  static final List<KafkaPrincipal> seenByListGroups = new java.util.concurrent.CopyOnWriteArrayList<>();
  static Path clientTrust;
  static String previousAllowedUrls;

  @BeforeAll
  static void start() throws Exception {
    published.set(jwts.jwks());
    idp = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    idp.createContext("/jwks", ex -> answer(ex, 200, published.get()));
    // an OAuth client-credentials token endpoint, as Kafka's OAuthBearerLoginCallbackHandler calls it
    idp.createContext("/token", ex -> {
      String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      String auth = ex.getRequestHeaders().getFirst("Authorization");
      String expected = "Basic " + java.util.Base64.getEncoder().encodeToString("svc-app:app-secret".getBytes(StandardCharsets.UTF_8));
      if (!body.contains("grant_type=client_credentials") || !expected.equals(auth)) {
        answer(ex, 401, "{\"error\":\"invalid_client\"}");
        return;
      }
      answer(ex, 200, "{\"access_token\":\"" + jwts.token("k1", "svc-app", ISSUER, AUDIENCE, 3_600_000)
          + "\",\"token_type\":\"Bearer\",\"expires_in\":3600}");
    });
    idp.start();
    previousAllowedUrls = System.setProperty("org.apache.kafka.sasl.oauthbearer.allowed.urls", idpUrl("/token"));

    Path serverStore = TestCertificates.keyPair(dir, "server", "CN=localhost,O=Tidemark");
    Path serverPem = TestCertificates.exportPem(serverStore, "server", dir.resolve("server.pem"));
    clientTrust = TestCertificates.trustStore(dir, "client-trust", List.of(serverPem));
    Map<String, String> s = new HashMap<>();
    s.put("listeners", "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0");
    s.put("ssl.keystore.location", serverStore.toString());
    s.put("ssl.keystore.password", TestCertificates.PASSWORD);
    // Kafka's broker settings for OAUTHBEARER, unchanged
    s.put("listener.name.sasl_ssl.sasl.enabled.mechanisms", "OAUTHBEARER");
    s.put("listener.name.sasl_ssl.oauthbearer.sasl.server.callback.handler.class",
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler");
    s.put("listener.name.sasl_ssl.oauthbearer.sasl.jaas.config",
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;");
    s.put("listener.name.sasl_ssl.connections.max.reauth.ms", "1500");
    s.put("listener.name.sasl_plaintext.sasl.enabled.mechanisms", "OAUTHBEARER,PLAIN");
    s.put("listener.name.sasl_plaintext.connections.max.reauth.ms", "600000");
    s.put("plain.sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required user_x=\"y\";");
    s.put("sasl.oauthbearer.jwks.endpoint.url", idpUrl("/jwks"));
    s.put("sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", "200");
    s.put("sasl.oauthbearer.expected.audience", "other," + AUDIENCE);
    s.put("sasl.oauthbearer.expected.issuer", ISSUER);
    s.put("sasl.oauthbearer.clock.skew.seconds", "0");
    broker = new TestBroker(s, TestBroker.recordListGroupsPrincipals(seenByListGroups));
  }

  @AfterAll
  static void stop() {
    if (broker != null) {
      broker.close();
    }
    if (idp != null) {
      idp.stop(0);
    }
    if (previousAllowedUrls == null) {
      System.clearProperty("org.apache.kafka.sasl.oauthbearer.allowed.urls");
    } else {
      System.setProperty("org.apache.kafka.sasl.oauthbearer.allowed.urls", previousAllowedUrls);
    }
  }

  static String idpUrl(String path) {
    return "http://127.0.0.1:" + idp.getAddress().getPort() + path;
  }

  static void answer(com.sun.net.httpserver.HttpExchange ex, int status, String body) throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().add("Content-Type", "application/json");
    ex.sendResponseHeaders(status, b.length);
    ex.getResponseBody().write(b);
    ex.close();
  }

  static Map<String, Object> saslSsl() {
    Map<String, Object> p = new HashMap<>();
    p.put("bootstrap.servers", "127.0.0.1:" + broker.broker.listeners().get("SASL_SSL").port());
    p.put("security.protocol", "SASL_SSL");
    p.put("ssl.truststore.location", clientTrust.toString());
    p.put("ssl.truststore.password", TestCertificates.PASSWORD);
    p.put("ssl.endpoint.identification.algorithm", "");
    p.put("sasl.mechanism", "OAUTHBEARER");
    p.put("default.api.timeout.ms", 30_000);
    p.put("request.timeout.ms", 20_000);
    return p;
  }

  /** A client handing the broker {@code token} through a custom login callback handler. */
  static Map<String, Object> withToken(String token) {
    Map<String, Object> p = saslSsl();
    p.put("sasl.login.callback.handler.class", StaticTokenLoginHandler.class.getName());
    p.put("sasl.jaas.config", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required token=\""
        + token + "\";");
    return p;
  }

  static void roundTrip(Map<String, Object> security, String topic, int count) throws Exception {
    try (KafkaProducer<String, String> producer = broker.producer(security)) {
      for (int i = 0; i < count; i++) {
        producer.send(new ProducerRecord<>(topic, 0, "k" + i, "v" + i)).get(30, TimeUnit.SECONDS);
      }
    }
    List<String> values = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = broker.consumer(security)) {
      TopicPartition tp = new TopicPartition(topic, 0);
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (values.size() < count && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          values.add(r.value());
        }
      }
    }
    assertThat(values).hasSize(count).startsWith("v0").endsWith("v" + (count - 1));
  }

  @Test
  void kafkasOwnLoginHandlerWithClientCredentialsProducesAndConsumesOverSaslSsl() throws Exception {
    Map<String, Object> p = saslSsl();
    p.put("sasl.login.callback.handler.class", OAuthBearerLoginCallbackHandler.class.getName());
    p.put("sasl.oauthbearer.token.endpoint.url", idpUrl("/token"));
    p.put("sasl.jaas.config", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
        + "clientId=\"svc-app\" clientSecret=\"app-secret\";");
    roundTrip(p, "oauth-login-handler", 20);
  }

  @Test
  void aCustomTokenNamesThePrincipalBySubAndTheClientKeepsWorkingAcrossReauthentications() throws Exception {
    String token = jwts.token("k1", "alice", ISSUER, AUDIENCE, 3_600_000);
    try (Admin admin = Admin.create(withToken(token))) {
      admin.listGroups().all().get(30, TimeUnit.SECONDS);
    }
    assertThat(seenByListGroups).contains(new KafkaPrincipal("User", "alice"));
    // connections.max.reauth.ms is 1500 on this listener: producing for 3 s spans re-authentications
    try (KafkaProducer<String, String> producer = broker.producer(withToken(token))) {
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
      int sent = 0;
      while (System.nanoTime() < until) {
        producer.send(new ProducerRecord<>("oauth-reauth", 0, "k", "v" + sent++)).get(30, TimeUnit.SECONDS);
      }
      assertThat(sent).isGreaterThan(1);
    }
    roundTrip(withToken(token), "oauth-custom", 5);
  }

  @Test
  void badTokensAreRefusedWithTheReason() {
    TestJwts impostor = new TestJwts().addKey("k1"); // same key id, another key
    Map<String, String> refused = Map.of(
        impostor.token("k1", "mallory", ISSUER, AUDIENCE, 3_600_000), "invalid signature",
        jwts.token("k1", "alice", ISSUER, AUDIENCE, -120_000), "expired",
        jwts.token("k1", "alice", ISSUER, "someone-else", 3_600_000), "audience",
        jwts.token("k1", "alice", "https://evil.test", AUDIENCE, 3_600_000), "issuer",
        jwts.token("k1", "alice", ISSUER, AUDIENCE, 3_600_000).replaceFirst("\\.[^.]*$", ".AAAA"), "invalid signature");
    refused.forEach((token, reason) -> {
      Map<String, Object> p = withToken(token);
      p.put("default.api.timeout.ms", 10_000);
      p.put("request.timeout.ms", 8_000);
      try (Admin admin = Admin.create(p)) {
        assertThatThrownBy(() -> admin.describeCluster().nodes().get(30, TimeUnit.SECONDS))
            .isInstanceOf(ExecutionException.class).cause().isInstanceOf(SaslAuthenticationException.class)
            .hasMessageContaining(reason);
      }
    });
  }

  @Test
  void aKeyRotatedIntoTheKeySetIsPickedUp() throws Exception {
    jwts.addKey("k2-rotated");
    String token = jwts.token("k2-rotated", "bob", ISSUER, AUDIENCE, 3_600_000);
    published.set(jwts.jwks());
    // the first token with the new kid triggers a refresh of the key set; a later attempt is accepted
    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(300)).ignoreExceptions().untilAsserted(() -> {
      Map<String, Object> p = withToken(token);
      p.put("default.api.timeout.ms", 10_000);
      p.put("request.timeout.ms", 8_000);
      try (Admin admin = Admin.create(p)) {
        assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).hasSize(1);
      }
    });
  }

  @Test
  void aSessionEndsWhenItsTokenExpiresBeforeTheReauthenticationPeriod() throws Exception {
    int port = broker.broker.listeners().get("SASL_PLAINTEXT").port();
    try (RawConnection c = new RawConnection(port)) {
      int id = c.send(new SaslHandshakeRequest.Builder(new SaslHandshakeRequestData().setMechanism("OAUTHBEARER")), (short) 1);
      assertThat(((SaslHandshakeResponse) c.receive(ApiKeys.SASL_HANDSHAKE, (short) 1, id)).error()).isEqualTo(Errors.NONE);
      long startedAt = System.nanoTime();
      String token = jwts.token("k1", "carol", ISSUER, AUDIENCE, 3_000);
      id = c.send(new SaslAuthenticateRequest.Builder(new SaslAuthenticateRequestData()
          .setAuthBytes(TestJwts.clientFirstMessage(token))), (short) 2);
      SaslAuthenticateResponse auth = (SaslAuthenticateResponse) c.receive(ApiKeys.SASL_AUTHENTICATE, (short) 2, id);
      assertThat(auth.error()).isEqualTo(Errors.NONE);
      // exp is whole seconds: the session lasts at most the token's 3 s, far less than the listener's 600 s
      assertThat(auth.data().sessionLifetimeMs()).isBetween(1L, 4_000L);
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() -> {
        int m = c.send(new MetadataRequest.Builder(new MetadataRequestData().setTopics(List.of())), (short) 12);
        try {
          c.receive(ApiKeys.METADATA, (short) 12, m);
          return false;
        } catch (IOException closed) {
          return true;
        }
      });
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedAt)).isGreaterThanOrEqualTo(
          auth.data().sessionLifetimeMs());
    }
  }

  @Test
  void aRefusedTokenGetsTheRfc7628ErrorChallengeThenFailsAndCloses() throws Exception {
    int port = broker.broker.listeners().get("SASL_PLAINTEXT").port();
    try (RawConnection c = new RawConnection(port)) {
      int id = c.send(new SaslHandshakeRequest.Builder(new SaslHandshakeRequestData().setMechanism("OAUTHBEARER")), (short) 1);
      c.receive(ApiKeys.SASL_HANDSHAKE, (short) 1, id);
      id = c.send(new SaslAuthenticateRequest.Builder(new SaslAuthenticateRequestData().setAuthBytes(
          TestJwts.clientFirstMessage(jwts.token("k1", "carol", ISSUER, "nobody", 60_000)))), (short) 2);
      SaslAuthenticateResponse challenge = (SaslAuthenticateResponse) c.receive(ApiKeys.SASL_AUTHENTICATE, (short) 2, id);
      assertThat(challenge.error()).isEqualTo(Errors.NONE);
      assertThat(new String(challenge.data().authBytes(), StandardCharsets.UTF_8)).isEqualTo("{\"status\":\"invalid_token\"}");
      id = c.send(new SaslAuthenticateRequest.Builder(new SaslAuthenticateRequestData().setAuthBytes(new byte[] {1})),
          (short) 2);
      SaslAuthenticateResponse failed = (SaslAuthenticateResponse) c.receive(ApiKeys.SASL_AUTHENTICATE, (short) 2, id);
      assertThat(failed.error()).isEqualTo(Errors.SASL_AUTHENTICATION_FAILED);
      assertThat(failed.data().errorMessage()).contains("audience");
      assertThat(c.closedByBroker()).isTrue();
    }
  }
}
