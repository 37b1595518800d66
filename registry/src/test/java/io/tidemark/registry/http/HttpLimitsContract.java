package io.tidemark.registry.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The limits every Tidemark HTTP endpoint enforces ({@link HttpGuard}), run against each endpoint
 * (schema registry, Iceberg REST catalog, admin): bodies with and without a length, stalled bodies,
 * header size and count, deep JSON. Each subclass starts its server with a small body limit.
 */
public abstract class HttpLimitsContract {

  private final int maxBodyBytes;
  private final String bodyTarget;

  /**
   * @param maxBodyBytes the body limit the subclass starts its endpoint with (small: a few KiB)
   * @param bodyTarget a POST target that reads a JSON body
   */
  protected HttpLimitsContract(int maxBodyBytes, String bodyTarget) {
    this.maxBodyBytes = maxBodyBytes;
    this.bodyTarget = bodyTarget;
  }

  /** Port of the running endpoint. */
  protected abstract int port();

  private int maxBodyBytes() {
    return maxBodyBytes;
  }

  private String bodyTarget() {
    return bodyTarget;
  }

  /** A JSON body the target accepts (2xx); may differ per call. */
  protected abstract byte[] validBody();

  /** Fails unless {@code body} is the API's JSON error body for {@code status}, free of internals. */
  protected abstract void assertErrorBody(int status, String body) throws Exception;

  /** Fails unless a known-good request is answered correctly. */
  protected abstract void assertServes() throws Exception;

  private Map<String, String> headers(String... extra) {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("Host", "localhost");
    headers.put("Content-Type", "application/json");
    for (int i = 0; i < extra.length; i += 2) {
      headers.put(extra[i], extra[i + 1]);
    }
    return headers;
  }

  @Test
  void chunkedBodyOverTheLimitGets413AndTheConnectionIsClosed() throws Exception {
    // Goal: a chunked body (no length) is refused with 413 once it passes the limit, the rest is never read.
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port()), 5_000);
      socket.setSoTimeout(30_000);
      OutputStream out = socket.getOutputStream();
      out.write(RawHttp.head("POST", bodyTarget(), headers("Transfer-Encoding", "chunked")));
      byte[] piece = new byte[4096];
      Arrays.fill(piece, (byte) ' ');
      piece[0] = '[';
      long cap = 1024L * 1024 * 1024; // about 10 s at localhost speed; the server closes after a second
      AtomicLong sent = new AtomicLong();
      CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
        try {
          while (sent.get() < cap) {
            out.write(RawHttp.chunk(piece));
            sent.addAndGet(piece.length);
            piece[0] = ' ';
          }
        } catch (IOException closed) {
          // the server closed the connection: what this test wants
        }
      });
      RawHttp.Response response = RawHttp.read(socket.getInputStream(), 1 << 20);
      assertThat(response.status()).as("answer to a chunked body over %d bytes: %s", maxBodyBytes(), response)
          .isEqualTo(413);
      assertErrorBody(413, response.text());
      writer.get(60, TimeUnit.SECONDS);
      assertThat(sent.get()).as("the server closed the connection instead of reading the whole body").isLessThan(cap);
    }
    assertServes();
  }

  @Test
  void declaredLengthOverTheLimitGets413BeforeTheBodyIsSent() throws Exception {
    // Goal: a Content-Length over the limit is answered at once, without waiting for (or reading) the body.
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port()), 5_000);
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(RawHttp.head("POST", bodyTarget(),
          headers("Content-Length", Long.toString(1536L * 1024 * 1024))));
      RawHttp.Response response = RawHttp.read(socket.getInputStream(), 1 << 20);
      assertThat(response.status()).isEqualTo(413);
      assertErrorBody(413, response.text());
      assertThat(response.header("Connection")).isEqualToIgnoringCase("close");
    }
    assertServes();
  }

  @Test
  void chunkedBodyWithinTheLimitIsServed() throws Exception {
    // Goal: the bound does not break ordinary chunked uploads.
    byte[] body = validBody();
    byte[] half = Arrays.copyOf(body, body.length / 2);
    byte[] rest = Arrays.copyOfRange(body, body.length / 2, body.length);
    byte[] request = concat(RawHttp.head("POST", bodyTarget(), headers("Transfer-Encoding", "chunked", "Connection", "close")),
        RawHttp.chunk(half), RawHttp.chunk(rest), RawHttp.lastChunk());
    RawHttp.Response response = RawHttp.exchange(port(), request, 10_000, 1 << 20);
    assertThat(response.status()).as("%s", response).isBetween(200, 299);
  }

  @Test
  void stalledBodyDoesNotBlockOtherClients() throws Exception {
    // Goal: a client that sends part of a chunked body and stops holds one connection, nothing else.
    Socket[] stalled = new Socket[4];
    try {
      for (int i = 0; i < stalled.length; i++) {
        stalled[i] = new Socket("127.0.0.1", port());
        stalled[i].getOutputStream().write(concat(RawHttp.head("POST", bodyTarget(), headers("Transfer-Encoding", "chunked")),
            "40\r\n{\"partial\":".getBytes(StandardCharsets.US_ASCII)));
        stalled[i].getOutputStream().flush();
      }
      assertServes();
    } finally {
      for (Socket s : stalled) {
        if (s != null) {
          s.close();
        }
      }
    }
    assertServes();
  }

  @Test
  void oversizedHeadersGet431() throws Exception {
    // Goal: a header section over the size limit is refused by Jetty's parser, in the API's JSON.
    RawHttp.Response response = RawHttp.exchange(port(), RawHttp.head("GET", "/", headers("Connection", "close",
        "X-Big", "x".repeat(HttpGuard.MAX_HEADER_BYTES + 1024))), 10_000, 1 << 20);
    assertThat(response.status()).isEqualTo(431);
    assertErrorBody(431, response.text());
    assertServes();
  }

  @Test
  void tooManyHeaderFieldsGet431() throws Exception {
    // Goal: more header fields than the limit are refused even when they are small.
    Map<String, String> headers = headers("Connection", "close");
    for (int i = 0; i <= HttpGuard.MAX_HEADER_FIELDS; i++) {
      headers.put("X-H" + i, "v");
    }
    RawHttp.Response response = RawHttp.exchange(port(), RawHttp.head("GET", "/", headers), 10_000, 1 << 20);
    assertThat(response.status()).isEqualTo(431);
    assertErrorBody(431, response.text());
  }

  @Test
  void deeplyNestedJsonIsRefusedWithoutInternals() throws Exception {
    // Goal: a JSON body nested deeper than the bound gets a 4xx with a clear message, not a 500 or a stack overflow.
    int depth = Math.min(HttpGuard.MAX_JSON_DEPTH + 10, maxBodyBytes() / 2 - 8);
    String deep = "{\"a\":" + "[".repeat(depth) + "]".repeat(depth) + "}";
    RawHttp.Response response = RawHttp.exchange(port(), concat(RawHttp.head("POST", bodyTarget(),
        headers("Content-Length", Integer.toString(deep.length()), "Connection", "close")),
        deep.getBytes(StandardCharsets.US_ASCII)), 10_000, 1 << 20);
    assertThat(response.status()).as("%s", response).isBetween(400, 499);
    assertErrorBody(response.status(), response.text());
  }

  @Test
  void brokenChunkFramingGets400() throws Exception {
    // Goal: a chunk size that is not hex is a 400 in the API's JSON and the server keeps serving.
    RawHttp.Response response = RawHttp.exchange(port(), concat(RawHttp.head("POST", bodyTarget(),
        headers("Transfer-Encoding", "chunked")), "zz\r\n{}\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII)),
        10_000, 1 << 20);
    assertThat(response.status()).as("%s", response).isEqualTo(400);
    assertErrorBody(400, response.text());
    assertServes();
  }

  @Test
  void brokenPercentEncodingGets400() throws Exception {
    // Goal: a '%' without two hex digits in the path or query is a 400 on every route, never a 500 from decoding.
    for (String target : new String[] {"/config/%", "/v1/namespaces/%zz", "/v1/streams/%4", "/health?x=%G1"}) {
      RawHttp.Response response = RawHttp.exchange(port(), RawHttp.head("GET", target,
          headers("Connection", "close")), 10_000, 1 << 20);
      assertThat(response.status()).as("%s: %s", target, response).isEqualTo(400);
      assertErrorBody(400, response.text());
    }
    assertServes();
  }

  protected static byte[] concat(byte[]... parts) {
    int length = 0;
    for (byte[] p : parts) {
      length += p.length;
    }
    byte[] all = new byte[length];
    int pos = 0;
    for (byte[] p : parts) {
      System.arraycopy(p, 0, all, pos, p.length);
      pos += p.length;
    }
    return all;
  }
}
