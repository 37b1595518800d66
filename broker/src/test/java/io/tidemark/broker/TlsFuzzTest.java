package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.broker.security.TestCertificates;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: hostile TLS traffic on the SSL and SASL_SSL listeners (mutated and truncated ClientHellos,
 * records with oversized or bogus lengths, non-TLS bytes, oversized application records, tampered encrypted records after a good
 * handshake, an oversized Kafka frame inside TLS before SASL) never gets a Kafka answer and ends
 * with the connection closed by the broker, on the JDK's and on OpenSSL's engine alike, while real clients keep being served. A control
 * conversation (good handshake, ApiVersions inside TLS) shows the harness reads answers when there
 * are some. Seeded; the seed is printed. Size from {@code tidemark.test.scale}: 32 hostile
 * connections, 2000 with {@code full}.
 */
class TlsFuzzTest {

  /** ApiVersions v0, correlation id 7, null client id, framed. */
  private static final byte[] API_VERSIONS = {0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 7, -1, -1};
  private static final int READ_TIMEOUT_MS = 30_000;
  private static final List<String> LISTENERS = List.of("SSL", "SASL_SSL", "SSL_OPENSSL", "SASL_SSL_OPENSSL");

  @TempDir
  static Path dir;
  static TestBroker broker;
  static Path trust;
  static SSLContext trustAll;

  @BeforeAll
  static void start() throws Exception {
    Path store = TestCertificates.keyPair(dir, "server", "CN=localhost");
    trust = TestCertificates.trustStore(dir, "trust", List.of(TestCertificates.exportPem(store, "server",
        dir.resolve("server.pem"))));
    Map<String, String> s = new HashMap<>();
    // each protocol on both TLS engines: the *_OPENSSL listeners use netty-tcnative's OpenSSL, the others the JDK's
    s.put("listeners", "SSL://127.0.0.1:0,SASL_SSL://127.0.0.1:0,SSL_OPENSSL://127.0.0.1:0,SASL_SSL_OPENSSL://127.0.0.1:0");
    s.put("listener.security.protocol.map", "SSL:SSL,SASL_SSL:SASL_SSL,SSL_OPENSSL:SSL,SASL_SSL_OPENSSL:SASL_SSL");
    s.put("ssl.provider", "jdk");
    s.put("listener.name.ssl_openssl.ssl.provider", "openssl");
    s.put("listener.name.sasl_ssl_openssl.ssl.provider", "openssl");
    s.put("ssl.keystore.location", store.toString());
    s.put("ssl.keystore.password", TestCertificates.PASSWORD);
    s.put("sasl.enabled.mechanisms", "SCRAM-SHA-256");
    s.put("sasl.scram.bootstrap.credentials", "SCRAM-SHA-256=[name=admin,password=admin-secret]");
    broker = new TestBroker(s);
    trustAll = SSLContext.getInstance("TLS");
    trustAll.init(null, new TrustManager[] {new X509TrustManager() {
      @Override
      public void checkClientTrusted(X509Certificate[] chain, String authType) {}

      @Override
      public void checkServerTrusted(X509Certificate[] chain, String authType) {}

      @Override
      public X509Certificate[] getAcceptedIssuers() {
        return new X509Certificate[0];
      }
    }}, null);
  }

  @AfterAll
  static void stop() {
    if (broker != null) {
      broker.close();
    }
  }

  static int port(String listener) {
    return broker.broker.listeners().get(listener).port();
  }

  @Test
  void hostileTlsTrafficIsNeverAnsweredAndClosedWhileOthersKeepBeingServed() throws Exception {
    // control: a good handshake and ApiVersions inside TLS get an answer, so a missing answer below means something
    for (String listener : LISTENERS) {
      try (Peer p = new Peer(port(listener))) {
        p.handshake();
        p.sendApplication(API_VERSIONS, false);
        byte[] answer = p.readApplication(8);
        assertThat(ByteBuffer.wrap(answer, 4, 4).getInt()).as("correlation id of the answer on " + listener).isEqualTo(7);
      }
    }
    long seed = System.nanoTime();
    System.out.println("TlsFuzzTest seed " + seed);
    SplittableRandom random = new SplittableRandom(seed);
    // a tampered record after the handshake on every listener: OpenSSL's engine only reports it when more bytes come
    for (String listener : LISTENERS) {
      try (Peer p = new Peer(port(listener))) {
        assertThat(hostile(p, 4, random)).as("tampered record on " + listener).isNull();
      }
    }
    int rounds = "full".equals(System.getProperty("tidemark.test.scale")) ? 2000 : 32;
    List<String> failures = new ArrayList<>();
    for (int i = 0; i < rounds && failures.size() < 5; i++) {
      String listener = LISTENERS.get(random.nextInt(LISTENERS.size()));
      int kind = random.nextInt(7);
      try (Peer p = new Peer(port(listener))) {
        String outcome = hostile(p, kind, random);
        if (outcome != null) {
          failures.add("round " + i + " (" + listener + ", kind " + kind + "): " + outcome);
        }
      }
    }
    assertThat(failures).as("seed " + seed).isEmpty();
    for (String listener : List.of("SASL_SSL", "SASL_SSL_OPENSSL")) {
      assertServed(listener);
    }
  }

  /** A real SCRAM client over {@code listener} gets the cluster described. */
  private static void assertServed(String listener) throws Exception {
    Map<String, Object> client = new HashMap<>();
    client.put("bootstrap.servers", "127.0.0.1:" + port(listener));
    client.put("security.protocol", "SASL_SSL");
    client.put("ssl.truststore.location", trust.toString());
    client.put("ssl.truststore.password", TestCertificates.PASSWORD);
    client.put("sasl.mechanism", "SCRAM-SHA-256");
    client.put("sasl.jaas.config",
        "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"admin\" password=\"admin-secret\";");
    client.put("default.api.timeout.ms", 30_000);
    try (Admin admin = Admin.create(client)) {
      assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).hasSize(1);
    }
  }

  /** One hostile conversation; null when the broker closed it without a Kafka answer, else what went wrong. */
  private static String hostile(Peer p, int kind, SplittableRandom random) throws Exception {
    switch (kind) {
      case 0 -> { // a ClientHello with random bytes flipped (a flip in its random field still makes a good hello)
        byte[] hello = p.clientHello();
        for (int n = 1 + random.nextInt(4); n > 0; n--) {
          hello[random.nextInt(hello.length)] ^= (byte) (1 + random.nextInt(255));
        }
        p.sendRaw(hello);
      }
      case 1 -> { // a truncated ClientHello
        byte[] hello = p.clientHello();
        p.sendRaw(Arrays.copyOf(hello, random.nextInt(hello.length)));
      }
      case 2 -> { // a handshake record announcing a length far over TLS's maximum, then bytes
        byte[] record = new byte[5 + random.nextInt(64)];
        random.nextBytes(record);
        record[0] = 22;
        record[1] = 3;
        record[2] = 3;
        record[3] = (byte) 0xff;
        record[4] = (byte) 0xff;
        p.sendRaw(record);
      }
      case 3 -> { // no TLS at all: a plain Kafka request, or random bytes
        if (random.nextBoolean()) {
          p.sendRaw(API_VERSIONS);
        } else {
          byte[] garbage = new byte[1 + random.nextInt(512)];
          random.nextBytes(garbage);
          p.sendRaw(garbage);
        }
      }
      case 4 -> { // after a good handshake, an encrypted record with a byte of its ciphertext changed
        p.handshake();
        p.sendApplication(API_VERSIONS, true);
      }
      case 5 -> { // after a good handshake, an application record longer than TLS allows (16,384 + 256), sent whole
        p.handshake();
        int length = 18_432 + random.nextInt(65_535 - 18_432 + 1);
        byte[] record = new byte[5 + length];
        random.nextBytes(record);
        record[0] = 23;
        record[1] = 3;
        record[2] = 3;
        record[3] = (byte) (length >>> 8);
        record[4] = (byte) length;
        p.sendRaw(record);
      }
      default -> { // after a good handshake, a Kafka frame of 2 GiB announced before authenticating (or on SSL)
        p.handshake();
        byte[] frame = new byte[8];
        ByteBuffer.wrap(frame).putInt(Integer.MAX_VALUE).putInt(random.nextInt());
        p.sendApplication(frame, false);
      }
    }
    if (kind == 0 || kind == 1 || kind == 3) {
      p.shutdownOutput(); // what was sent may be a valid start the broker waits to see completed
    }
    return p.closedWithoutAnswer();
  }

  /** A socket with a JDK client SSLEngine driven by hand, so the test can send exactly the bytes it wants. */
  private static final class Peer implements AutoCloseable {
    private final Socket socket;
    private final InputStream in;
    private final SSLEngine engine;
    private final ByteBuffer netIn;
    private final ByteArrayOutputStream received = new ByteArrayOutputStream();
    private boolean handshaken;

    Peer(int port) throws IOException {
      socket = new Socket("127.0.0.1", port);
      socket.setSoTimeout(READ_TIMEOUT_MS);
      in = socket.getInputStream();
      engine = trustAll.createSSLEngine("localhost", port);
      engine.setUseClientMode(true);
      netIn = ByteBuffer.allocate(engine.getSession().getPacketBufferSize() * 4);
    }

    /** The engine's first flight (the ClientHello record), not sent. */
    byte[] clientHello() throws SSLException {
      ByteBuffer out = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
      engine.wrap(ByteBuffer.allocate(0), out);
      out.flip();
      byte[] hello = new byte[out.remaining()];
      out.get(hello);
      return hello;
    }

    void sendRaw(byte[] bytes) throws IOException {
      socket.getOutputStream().write(bytes);
      socket.getOutputStream().flush();
    }

    void handshake() throws IOException {
      engine.beginHandshake();
      ByteBuffer app = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize());
      ByteBuffer out = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
      while (true) {
        SSLEngineResult.HandshakeStatus status = engine.getHandshakeStatus();
        switch (status) {
          case NEED_WRAP -> {
            out.clear();
            engine.wrap(ByteBuffer.allocate(0), out);
            out.flip();
            byte[] bytes = new byte[out.remaining()];
            out.get(bytes);
            sendRaw(bytes);
          }
          case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
            netIn.flip();
            SSLEngineResult r = engine.unwrap(netIn, app);
            netIn.compact();
            if (r.getStatus() == SSLEngineResult.Status.BUFFER_UNDERFLOW && !fill()) {
              throw new IOException("the broker closed the connection during a good handshake");
            }
          }
          case NEED_TASK -> {
            Runnable task;
            while ((task = engine.getDelegatedTask()) != null) {
              task.run();
            }
          }
          default -> {
            handshaken = true;
            // from here on 'received' holds only what the engine has not read yet (e.g. a session ticket)
            received.reset();
            netIn.flip();
            received.write(netIn.array(), netIn.position(), netIn.remaining());
            netIn.compact();
            return;
          }
        }
      }
    }

    /** Reads more bytes into netIn; false at end of stream. */
    private boolean fill() throws IOException {
      byte[] chunk = new byte[8192];
      int n = in.read(chunk, 0, Math.min(chunk.length, netIn.remaining()));
      if (n < 0) {
        return false;
      }
      netIn.put(chunk, 0, n);
      received.write(chunk, 0, n);
      return true;
    }

    /** Encrypts {@code plain} into TLS records and sends them, with one ciphertext byte changed when {@code tamper}. */
    void sendApplication(byte[] plain, boolean tamper) throws IOException {
      ByteBuffer out = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
      engine.wrap(ByteBuffer.wrap(plain), out);
      out.flip();
      byte[] record = new byte[out.remaining()];
      out.get(record);
      if (tamper) {
        record[5 + (record.length - 5) / 2] ^= 0x5a;
      }
      sendRaw(record);
    }

    /** Reads and decrypts until at least {@code min} application bytes arrived. */
    byte[] readApplication(int min) throws IOException {
      ByteArrayOutputStream plain = new ByteArrayOutputStream();
      ByteBuffer app = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize());
      while (plain.size() < min) {
        netIn.flip();
        SSLEngineResult r = engine.unwrap(netIn, app);
        netIn.compact();
        app.flip();
        while (app.hasRemaining()) {
          plain.write(app.get());
        }
        app.clear();
        if (r.getStatus() == SSLEngineResult.Status.BUFFER_UNDERFLOW && !fill()) {
          throw new IOException("end of stream after " + plain.size() + " application bytes");
        }
        if (r.getStatus() == SSLEngineResult.Status.CLOSED) {
          throw new IOException("TLS closed after " + plain.size() + " application bytes");
        }
      }
      return plain.toByteArray();
    }

    void shutdownOutput() throws IOException {
      socket.shutdownOutput();
    }

    /**
     * Reads until the broker closes the connection; null when it did within the read timeout and nothing it sent
     * after a good handshake decrypts to application bytes (a Kafka answer), else what went wrong.
     */
    String closedWithoutAnswer() throws IOException {
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READ_TIMEOUT_MS);
      try {
        while (true) {
          if (netIn.remaining() == 0) {
            netIn.clear(); // the bytes are kept in 'received' for the decryption check below
          }
          if (!fill()) {
            break;
          }
          if (System.nanoTime() > deadline) {
            return "the broker kept the connection open past " + READ_TIMEOUT_MS + " ms";
          }
        }
      } catch (SocketTimeoutException e) {
        return "the broker neither answered nor closed the connection within " + READ_TIMEOUT_MS + " ms";
      } catch (IOException reset) {
        // a reset is a close too
      }
      if (!handshaken) {
        return null; // nothing sent before a completed handshake can be a Kafka answer
      }
      ByteBuffer all = ByteBuffer.wrap(received.toByteArray());
      ByteBuffer app = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize());
      int plain = 0;
      try {
        while (all.hasRemaining()) {
          SSLEngineResult r = engine.unwrap(all, app);
          plain += r.bytesProduced();
          app.clear();
          if (r.getStatus() != SSLEngineResult.Status.OK) {
            break;
          }
        }
      } catch (SSLException alert) {
        // the broker's alert (bad_record_mac, record_overflow, ...): expected
      }
      return plain == 0 ? null : "the broker answered " + plain + " application bytes";
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }
}
