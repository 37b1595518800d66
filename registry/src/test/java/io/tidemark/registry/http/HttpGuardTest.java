package io.tidemark.registry.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.javalin.Javalin;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The guard's own mechanisms on a bare Javalin app: stalled bodies time out, failures leave no internals. */
class HttpGuardTest {
  private static final long IDLE_MS = 500;
  private final ObjectMapper json = new ObjectMapper();
  private final AtomicInteger bodyReadsEnded = new AtomicInteger();
  private Javalin app;

  @BeforeEach
  void start() {
    HttpGuard guard = new HttpGuard("test.max.request.bytes", 4096, IDLE_MS,
        (status, message) -> json.createObjectNode().put("code", status).put("message", message).toString(),
        LoggerFactory.getLogger(HttpGuardTest.class));
    app = Javalin.create(cfg -> {
      cfg.showJavalinBanner = false;
      guard.configure(cfg);
    });
    guard.install(app);
    app.post("/body", ctx -> {
      try {
        ctx.result("read " + ctx.bodyAsBytes().length);
      } finally {
        bodyReadsEnded.incrementAndGet();
      }
    });
    app.get("/overflow", ctx -> {
      throw new StackOverflowError();
    });
    app.get("/sql", ctx -> {
      throw new IllegalStateException("[SQLITE_ERROR] SQL error: no such table: iceberg_tables (SELECT * FROM x)");
    });
    app.get("/ok", ctx -> ctx.result("ok"));
    app.start("127.0.0.1", 0);
  }

  @AfterEach
  void stop() {
    app.stop();
  }

  @Test
  void stalledChunkedBodyReleasesItsThreadAfterTheIdleTimeout() throws Exception {
    // Goal: a client that sends part of a chunked body and stops is cut off after the idle timeout.
    try (Socket socket = new Socket("127.0.0.1", app.port())) {
      socket.setSoTimeout(20_000);
      socket.getOutputStream().write(RawHttp.head("POST", "/body", Map.of("Host", "x", "Transfer-Encoding", "chunked")));
      socket.getOutputStream().write("100\r\n{\"partial\":".getBytes(StandardCharsets.US_ASCII));
      socket.getOutputStream().flush();
      long startNs = System.nanoTime();
      InputStream in = socket.getInputStream();
      byte[] buffer = new byte[4096];
      while (in.read(buffer) >= 0) {
        // drain whatever the server says (a 400, or nothing) until it closes
      }
      assertThat(Duration.ofNanos(System.nanoTime() - startNs)).isLessThan(Duration.ofSeconds(15));
    }
    await().atMost(Duration.ofSeconds(15)).until(() -> bodyReadsEnded.get() == 1);
    assertThat(RawHttp.exchange(app.port(), RawHttp.head("GET", "/ok", Map.of("Host", "x")), 5_000, 1 << 16).text())
        .isEqualTo("ok");
  }

  @Test
  void stalledHeadersAreCutOffAfterTheIdleTimeout() throws Exception {
    // Goal: a client that never finishes its headers does not keep the connection.
    try (Socket socket = new Socket("127.0.0.1", app.port())) {
      socket.setSoTimeout(20_000);
      socket.getOutputStream().write("GET /ok HTTP/1.1\r\nHost: x\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII));
      long startNs = System.nanoTime();
      while (socket.getInputStream().read() >= 0) {
        // until closed
      }
      assertThat(Duration.ofNanos(System.nanoTime() - startNs)).isLessThan(Duration.ofSeconds(15));
    }
  }

  @Test
  void errorsAnswerJsonWithoutInternals() throws Exception {
    // Goal: a java.lang.Error and an exception whose message carries SQL both answer a plain JSON 500.
    for (String path : new String[] {"/overflow", "/sql"}) {
      RawHttp.Response response = RawHttp.exchange(app.port(), RawHttp.head("GET", path,
          Map.of("Host", "x", "Connection", "close")), 5_000, 1 << 16);
      assertThat(response.status()).isEqualTo(500);
      assertThat(json.readTree(response.text()).path("code").asInt()).isEqualTo(500);
      ErrorBodies.assertFreeOfInternals(response.text());
    }
    RawHttp.Response missing = RawHttp.exchange(app.port(), RawHttp.head("GET", "/nope",
        Map.of("Host", "x", "Connection", "close")), 5_000, 1 << 16);
    assertThat(missing.status()).isEqualTo(404);
    assertThat(json.readTree(missing.text()).path("code").asInt()).isEqualTo(404);
  }

  @Test
  void publicMessageKeepsUsefulTextAndDropsInternals() {
    // Goal: the last check keeps ordinary messages (user namespaces included) and replaces internals.
    assertThat(HttpGuard.publicMessage("Undefined name: com.example.User", "x")).isEqualTo("Undefined name: com.example.User");
    assertThat(HttpGuard.publicMessage("cannot delete a version from a subject", "x"))
        .isEqualTo("cannot delete a version from a subject");
    assertThat(HttpGuard.publicMessage("java.lang.StackOverflowError", "x")).isEqualTo("x");
    assertThat(HttpGuard.publicMessage("failed: NullPointerException", "x")).isEqualTo("x");
    assertThat(HttpGuard.publicMessage("at io.tidemark.X.y(X.java:12)", "x")).isEqualTo("x");
    assertThat(HttpGuard.publicMessage("DELETE FROM iceberg_tables WHERE a = 1", "x")).isEqualTo("x");
    assertThat(HttpGuard.publicMessage("[SQLITE_BUSY] database is locked", "x")).isEqualTo("x");
  }
}
