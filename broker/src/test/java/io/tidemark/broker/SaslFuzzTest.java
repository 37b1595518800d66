package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SaslHandshakeResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Goal: hostile SASL traffic (mutated, truncated and oversized tokens of SCRAM, PLAIN and
 * OAUTHBEARER (a signed JWT), requests out of turn,
 * garbage frames) gets a clean error or a closed connection and never authenticates, while the
 * broker keeps serving real clients; sessions end at {@code connections.max.reauth.ms} and the
 * Java client re-authenticates on the same connection (KIP-368). Seeded; the seed is printed.
 * Size from {@code tidemark.test.scale}: 80 hostile connections, 3000 with {@code full}.
 */
class SaslFuzzTest {

  static TestBroker broker;
  static int port;

  static final io.tidemark.broker.security.TestJwts jwts = new io.tidemark.broker.security.TestJwts().addKey("fuzz");
  static String validJwt;

  @BeforeAll
  static void start() throws IOException {
    java.nio.file.Path jwks = java.nio.file.Files.createTempFile("fuzz-jwks", ".json");
    jwks.toFile().deleteOnExit();
    java.nio.file.Files.writeString(jwks, jwts.jwks());
    validJwt = jwts.token("fuzz", "dave", "https://idp.test", "tidemark", 3_600_000);
    Map<String, String> s = new HashMap<>();
    s.put("sasl.enabled.mechanisms", "SCRAM-SHA-256,PLAIN,OAUTHBEARER");
    s.put("sasl.oauthbearer.jwks.endpoint.url", jwks.toUri().toString());
    s.put("listeners", "SASL_PLAINTEXT://127.0.0.1:0");
    s.put("sasl.scram.bootstrap.credentials", "SCRAM-SHA-256=[name=admin,password=admin-secret]");
    s.put("plain.sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required user_dave=\"dave-pw\";");
    s.put("connections.max.reauth.ms", "1500");
    broker = new TestBroker(s);
    port = broker.broker.port();
  }

  @AfterAll
  static void stop() {
    if (broker != null) {
      broker.close();
    }
  }

  static Map<String, Object> scram() {
    Map<String, Object> p = new HashMap<>();
    p.put("bootstrap.servers", "127.0.0.1:" + port);
    p.put("security.protocol", "SASL_PLAINTEXT");
    p.put("sasl.mechanism", "SCRAM-SHA-256");
    p.put("sasl.jaas.config",
        "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"admin\" password=\"admin-secret\";");
    p.put("default.api.timeout.ms", 30_000);
    return p;
  }

  private static final byte[] CLIENT_FIRST = "n,,n=admin,r=fyko+d2lbbFgONRv9qkxdawL".getBytes(StandardCharsets.US_ASCII);

  @Test
  void hostileSaslFramesNeverAuthenticateAndOthersKeepBeingServed() throws Exception {
    long seed = System.nanoTime();
    System.out.println("SaslFuzzTest seed " + seed);
    SplittableRandom random = new SplittableRandom(seed);
    int rounds = "full".equals(System.getProperty("tidemark.test.scale")) ? 3000 : 80;
    for (int i = 0; i < rounds; i++) {
      try (RawConnection c = new RawConnection(port)) {
        hostile(c, random);
      } catch (IOException expected) {
        // the broker closed the connection mid-way: a clean outcome
      }
    }
    try (Admin admin = Admin.create(scram())) {
      assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).hasSize(1);
    }
  }

  /** One hostile conversation; every answer must be an error or a challenge, never a completed authentication. */
  private static void hostile(RawConnection c, SplittableRandom random) throws IOException {
    int kind = random.nextInt(6);
    if (kind == 0) { // a request other than ApiVersions/SASL before authentication: closed without an answer
      c.send(new MetadataRequest.Builder(new MetadataRequestData().setTopics(null)), (short) 12);
      assertThat(c.closedByBroker()).isTrue();
      return;
    }
    if (kind == 1) { // garbage or truncated frames
      byte[] junk = new byte[random.nextInt(64)];
      random.nextBytes(junk);
      if (random.nextBoolean()) {
        c.sendFrame(ByteBuffer.wrap(junk));
        assertThat(c.closedByBroker()).isTrue();
      } else {
        c.sendRaw(new byte[] {0, 0, 1, 0}); // promises 256 bytes, sends none, hangs up
      }
      return;
    }
    if (kind == 2) { // over sasl.server.max.receive.size before authentication
      c.sendRaw(ByteBuffer.allocate(4).putInt(600_000).array());
      assertThat(c.closedByBroker()).isTrue();
      return;
    }
    String mechanism = switch (random.nextInt(4)) {
      case 0 -> "GSSAPI";
      case 1 -> "SCRAM-SHA-256";
      case 2 -> "PLAIN";
      default -> "OAUTHBEARER";
    };
    int id = c.send(new SaslHandshakeRequest.Builder(new SaslHandshakeRequestData().setMechanism(mechanism)), (short) 1);
    SaslHandshakeResponse hs = (SaslHandshakeResponse) c.receive(ApiKeys.SASL_HANDSHAKE, (short) 1, id);
    if (mechanism.equals("GSSAPI")) {
      assertThat(hs.error()).isEqualTo(Errors.UNSUPPORTED_SASL_MECHANISM);
      assertThat(c.closedByBroker()).isTrue();
      return;
    }
    assertThat(hs.error()).isEqualTo(Errors.NONE);
    byte[] base = switch (mechanism) {
      case "PLAIN" -> "\0dave\0dave-pw".getBytes(StandardCharsets.US_ASCII);
      case "OAUTHBEARER" -> io.tidemark.broker.security.TestJwts.clientFirstMessage(validJwt);
      default -> CLIENT_FIRST;
    };
    byte[] token = mutate(base, random);
    id = c.send(new SaslAuthenticateRequest.Builder(new SaslAuthenticateRequestData().setAuthBytes(token)), (short) 2);
    AbstractResponse r;
    try {
      r = c.receive(ApiKeys.SASL_AUTHENTICATE, (short) 2, id);
    } catch (IOException closed) {
      return; // an oversized token: the frame bound closed the connection
    }
    SaslAuthenticateResponse auth = (SaslAuthenticateResponse) r;
    if (auth.error() == Errors.NONE && mechanism.equals("OAUTHBEARER")) {
      String sent = new String(token, StandardCharsets.ISO_8859_1);
      if (auth.data().authBytes().length > 0) { // RFC 7628's error challenge: acknowledged, then refused and closed
        assertThat(new String(auth.data().authBytes(), StandardCharsets.UTF_8)).isEqualTo("{\"status\":\"invalid_token\"}");
        id = c.send(new SaslAuthenticateRequest.Builder(new SaslAuthenticateRequestData().setAuthBytes(new byte[] {1})),
            (short) 2);
        assertThat(((SaslAuthenticateResponse) c.receive(ApiKeys.SASL_AUTHENTICATE, (short) 2, id)).error())
            .isEqualTo(Errors.SASL_AUTHENTICATION_FAILED);
        assertThat(c.closedByBroker()).isTrue();
        return;
      }
      // authenticated: only with the signed header and claims intact (a framing byte may differ harmlessly)
      assertThat(sent).contains(validJwt.substring(0, validJwt.lastIndexOf('.')));
      return;
    }
    if (auth.error() == Errors.NONE) {
      // a mutation that kept the token valid: PLAIN with the right password, or a SCRAM first message; never
      // authentication by a wrong token
      assertThat(mechanism.equals("PLAIN") ? new String(token, StandardCharsets.US_ASCII) : "scram")
          .isIn("\0dave\0dave-pw", "dave\0dave\0dave-pw", "scram");
      return;
    }
    assertThat(auth.error()).isEqualTo(Errors.SASL_AUTHENTICATION_FAILED);
    assertThat(c.closedByBroker()).isTrue();
  }

  private static byte[] mutate(byte[] base, SplittableRandom random) {
    return switch (random.nextInt(5)) {
      case 0 -> java.util.Arrays.copyOf(base, random.nextInt(base.length)); // truncated
      case 1 -> { // flipped bytes
        byte[] t = base.clone();
        for (int i = 0; i < 1 + random.nextInt(3); i++) {
          t[random.nextInt(t.length)] = (byte) random.nextInt(256);
        }
        yield t;
      }
      case 2 -> new byte[700_000]; // oversized: over the pre-authentication frame bound
      case 3 -> { // random bytes
        byte[] t = new byte[random.nextInt(200)];
        random.nextBytes(t);
        yield t;
      }
      default -> base.clone();
    };
  }

  @Test
  void aSessionEndsAtTheReauthenticationPeriodAndTheJavaClientReauthenticates() throws Exception {
    try (RawConnection c = new RawConnection(port)) {
      int id = c.send(new ApiVersionsRequest.Builder(), (short) 3);
      c.receive(ApiKeys.API_VERSIONS, (short) 3, id);
      id = c.send(new SaslHandshakeRequest.Builder(new SaslHandshakeRequestData().setMechanism("PLAIN")), (short) 1);
      assertThat(((SaslHandshakeResponse) c.receive(ApiKeys.SASL_HANDSHAKE, (short) 1, id)).error()).isEqualTo(Errors.NONE);
      long authenticatedAt = System.nanoTime(); // no later than the broker's start of the session
      id = c.send(new SaslAuthenticateRequest.Builder(new SaslAuthenticateRequestData()
          .setAuthBytes("\0dave\0dave-pw".getBytes(StandardCharsets.US_ASCII))), (short) 2);
      SaslAuthenticateResponse auth = (SaslAuthenticateResponse) c.receive(ApiKeys.SASL_AUTHENTICATE, (short) 2, id);
      assertThat(auth.error()).isEqualTo(Errors.NONE);
      assertThat(auth.data().sessionLifetimeMs()).isEqualTo(1500);
      List<Long> servedAfterMs = new ArrayList<>();
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() -> {
        int m = c.send(new MetadataRequest.Builder(new MetadataRequestData().setTopics(List.of())), (short) 12);
        try {
          c.receive(ApiKeys.METADATA, (short) 12, m);
          servedAfterMs.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - authenticatedAt));
          return false;
        } catch (IOException closed) {
          return true;
        }
      });
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - authenticatedAt)).isGreaterThanOrEqualTo(1500);
      assertThat(servedAfterMs).isNotEmpty(); // served while the session lasted
    }
    // the Java client re-authenticates on its connection when the session nears its end, and keeps producing
    try (KafkaProducer<String, String> producer = broker.producer(scram())) {
      long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(4000);
      int sent = 0;
      while (System.nanoTime() < until) {
        producer.send(new ProducerRecord<>("reauth", "k", "v" + sent++)).get(30, TimeUnit.SECONDS);
      }
      assertThat(sent).isPositive();
    }
  }
}
