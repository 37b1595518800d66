package io.tidemark.registry.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * A seeded HTTP fuzzer for one API: random and mutated requests (methods, paths, queries, headers,
 * JSON bodies, chunked and broken framing, oversized parts) sent over raw sockets. Every answer must
 * be a well-formed status; no answer may be a 5xx other than 501/503; every error body must be the
 * API's JSON without internals; after each batch a known-good request must still be answered
 * correctly. The seed is printed; {@code -Dtidemark.fuzz.seed=N} replays a run and
 * {@code -Dtidemark.fuzz.inputs=N} sizes it (default {@value #DEFAULT_INPUTS}, {@value #FULL_INPUTS}
 * with {@code -Dtidemark.test.scale=full}). Test helper; single-threaded.
 */
public final class HttpFuzzer {

  public static final int DEFAULT_INPUTS = 2_000;
  public static final int FULL_INPUTS = 100_000;
  private static final int BATCH = 250;
  private static final int TIMEOUT_MS = 20_000;

  /** One valid request of the API, the material mutations start from. */
  public record Seed(String method, String path, String body) {
    public static Seed get(String path) {
      return new Seed("GET", path, null);
    }
  }

  /** The API under test. */
  public interface Api {
    String name();

    int port();

    int maxBodyBytes();

    List<Seed> seeds();

    /** Fails unless {@code body} is the API's error body for {@code status} without internals. */
    void checkError(int status, String body) throws Exception;

    /** Fails unless a known-good request is answered correctly. */
    void checkServes() throws Exception;
  }

  /** What a run did. */
  public record Result(long seed, int inputs, double seconds, Map<Integer, Integer> statuses) {}

  private static final String[] METHODS = {"GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "TRACE",
      "CONNECT", "get", "PROPFIND", "X", ""};
  private static final String[] TOKENS = {"", "..", ".", "%2e%2e", "%00", "%1F", "%1f%1f", "%ZZ", "%", "%e2%82",
      "%F0%9F%92%A9", "é", "\u001f", "a b", "null", "-1", "0", "2147483648", "99999999999999999999999",
      "1e309", "NaN", "latest", "-2", "x".repeat(300), "A".repeat(5000), "{}", "[]", "'", "\"", "\\", ";", "*",
      "?", "#", "..%2f..%2f", "%2F", "v1", "namespaces", "subjects", "versions", "schemas", "ids", "config",
      "mode", "streams", "records", "tables", "java.lang.String"};
  private static final String[] QUERIES = {"deleted=true", "permanent=true", "normalize=true", "verbose=true",
      "limit=-1", "limit=abc", "limit=99999999999", "offset=-5", "offset=18446744073709551616", "pageSize=0",
      "pageSize=-1", "pageSize=abc", "pageToken=%00", "pageToken=zzz", "snapshots=bogus", "snapshots=refs",
      "records=0", "records=-1", "maxBytes=0", "maxBytes=999999999999", "purgeRequested=true", "force=true",
      "subjectPrefix=" + "p".repeat(200), "latestOnly=true", "defaultToGlobal=true", "parent=a%1Fb", "x=%ZZ",
      "=", "&&&", "a=" + "b".repeat(3000)};
  private static final String[] CONTENT_TYPES = {"application/json", "application/vnd.schemaregistry.v1+json",
      "text/plain", "application/octet-stream", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded",
      "", ";;;", "application/json; charset=utf-16", "application/json; charset=bogus"};
  private static final String[] HEADER_NAMES = {"Accept", "Accept-Encoding", "Authorization", "Cookie", "Expect",
      "Range", "If-None-Match", "Origin", "X-Forwarded-For", "X-Tidemark-Forwarded", "Upgrade", "Connection",
      "Content-Encoding", "Transfer-Encoding", "Content-Length", "Host", "TE", "Trailer", "X-" + "h".repeat(100)};
  private static final String[] HEADER_VALUES = {"", "*/*", "gzip", "Basic !!!", "Basic Zm9vOmJhcg==",
      "Bearer " + "t".repeat(2000), "100-continue", "bytes=0-1", "bytes=-5", "close", "keep-alive", "websocket",
      "chunked", "identity", "gzip, chunked", "-1", "99999999999999999999", "\t", "a\u0001b", "é"};

  private final Api api;
  private final Random random;
  private final long seed;
  private final ObjectMapper json = new ObjectMapper();
  private final Map<Integer, Integer> statuses = new TreeMap<>();

  private HttpFuzzer(Api api, long seed) {
    this.api = api;
    this.seed = seed;
    this.random = new Random(seed);
  }

  /** How many inputs this run sends: the property, else the scale's default. */
  public static int inputs() {
    Integer explicit = Integer.getInteger("tidemark.fuzz.inputs");
    if (explicit != null) {
      return explicit;
    }
    return "full".equals(System.getProperty("tidemark.test.scale")) ? FULL_INPUTS : DEFAULT_INPUTS;
  }

  /** Runs the fuzzer against {@code api}; fails the test on the first broken rule, naming the input. */
  public static Result run(Api api) throws Exception {
    Long fixed = Long.getLong("tidemark.fuzz.seed");
    long seed = fixed != null ? fixed : System.nanoTime();
    int inputs = inputs();
    System.out.printf("HttpFuzzer[%s] seed=%d inputs=%d (replay: -Dtidemark.fuzz.seed=%d -Dtidemark.fuzz.inputs=%d)%n",
        api.name(), seed, inputs, seed, inputs);
    HttpFuzzer fuzzer = new HttpFuzzer(api, seed);
    long startNs = System.nanoTime();
    api.checkServes();
    for (int i = 0; i < inputs; i++) {
      fuzzer.one(i);
      if ((i + 1) % BATCH == 0) {
        fuzzer.checkServes(i);
      }
    }
    fuzzer.checkServes(inputs);
    double seconds = (System.nanoTime() - startNs) / 1e9;
    System.out.printf("HttpFuzzer[%s] seed=%d inputs=%d seconds=%.1f statuses=%s%n", api.name(), seed, inputs, seconds,
        fuzzer.statuses);
    return new Result(seed, inputs, seconds, fuzzer.statuses);
  }

  private void checkServes(int index) {
    try {
      api.checkServes();
    } catch (Throwable e) {
      throw new AssertionError("[" + api.name() + "] seed=" + seed + ": the known-good request failed after input "
          + index + ": " + e, e);
    }
  }

  private void one(int index) throws Exception {
    byte[] request = request();
    long startNs = System.nanoTime();
    RawHttp.Response response;
    try {
      response = RawHttp.exchange(api.port(), request, TIMEOUT_MS, 4 << 20);
    } catch (IOException e) {
      response = new RawHttp.Response(-1, Map.of(), new byte[0]);
    }
    long ms = (System.nanoTime() - startNs) / 1_000_000;
    statuses.merge(response.status(), 1, Integer::sum);
    String input = printable(request);
    if (response.status() < 0 && ms >= TIMEOUT_MS - 500) {
      fail("[%s] seed=%d input %d: no answer within %d ms to %s", api.name(), seed, index, TIMEOUT_MS, input);
    }
    if (response.status() < 0) {
      return; // the server closed a broken request without an answer; allowed
    }
    if (response.status() < 100 || response.status() > 599) {
      fail("[%s] seed=%d input %d: status %d to %s", api.name(), seed, index, response.status(), input);
    }
    if (response.status() >= 500 && response.status() != 501 && response.status() != 503) {
      fail("[%s] seed=%d input %d: %s to %s", api.name(), seed, index, response, input);
    }
    if (response.status() >= 400 && response.body().length > 0) {
      try {
        api.checkError(response.status(), response.text());
      } catch (Throwable e) {
        throw new AssertionError("[" + api.name() + "] seed=" + seed + " input " + index + ": bad error body "
            + response + " to " + input + ": " + e.getMessage(), e);
      }
    }
  }

  private static String printable(byte[] request) {
    String text = new String(request, 0, Math.min(request.length, 1500), StandardCharsets.ISO_8859_1);
    StringBuilder out = new StringBuilder();
    for (char c : text.toCharArray()) {
      if (c == '\r') {
        out.append("\\r");
      } else if (c == '\n') {
        out.append("\\n");
      } else if (c < 0x20 || c > 0x7e) {
        out.append(String.format("\\x%02x", (int) c));
      } else {
        out.append(c);
      }
    }
    return out + (request.length > 1500 ? "... (" + request.length + " bytes)" : "");
  }

  // ---------------------------------------------------------------- generation

  private <T> T pick(List<T> list) {
    return list.get(random.nextInt(list.size()));
  }

  private String pick(String[] values) {
    return values[random.nextInt(values.length)];
  }

  private byte[] request() {
    int kind = random.nextInt(20);
    if (kind < 13) {
      return mutated();
    } else if (kind < 15) {
      return randomRequest();
    } else if (kind < 17) {
      return brokenFraming();
    } else if (kind < 18) {
      return garbage();
    }
    return oversized();
  }

  private byte[] mutated() {
    Seed s = pick(api.seeds());
    String method = s.method();
    String path = s.path();
    String body = s.body();
    Map<String, String> headers = baseHeaders(body != null);
    int mutations = 1 + random.nextInt(3);
    for (int i = 0; i < mutations; i++) {
      switch (random.nextInt(6)) {
        case 0 -> method = pick(METHODS);
        case 1 -> path = mutatePath(path);
        case 2 -> path = path + (path.contains("?") ? "&" : "?") + pick(QUERIES);
        case 3 -> headers.put(pick(HEADER_NAMES), pick(HEADER_VALUES));
        case 4 -> headers.put("Content-Type", pick(CONTENT_TYPES));
        default -> body = mutateBody(body);
      }
    }
    byte[] bytes = body == null ? null : body.getBytes(StandardCharsets.UTF_8);
    if (bytes != null && random.nextInt(8) == 0) {
      bytes = mutateBytes(bytes);
    }
    return frame(method, path, headers, bytes, random.nextInt(5) == 0);
  }

  private Map<String, String> baseHeaders(boolean body) {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("Host", "localhost");
    if (body) {
      headers.put("Content-Type", "application/json");
    }
    headers.put("Accept", "application/json");
    return headers;
  }

  private String mutatePath(String path) {
    String query = "";
    int q = path.indexOf('?');
    if (q >= 0) {
      query = path.substring(q);
      path = path.substring(0, q);
    }
    List<String> segments = new ArrayList<>(List.of(path.substring(1).split("/", -1)));
    switch (random.nextInt(5)) {
      case 0 -> segments.set(random.nextInt(segments.size()), pick(TOKENS));
      case 1 -> segments.add(pick(TOKENS));
      case 2 -> segments.remove(segments.size() - 1);
      case 3 -> segments.add(random.nextInt(segments.size() + 1), pick(TOKENS));
      default -> segments.set(random.nextInt(segments.size()), randomToken(1 + random.nextInt(20)));
    }
    String joined = "/" + String.join(random.nextInt(10) == 0 ? "//" : "/", segments);
    return encodeForRequestLine(joined) + query;
  }

  /** Characters a request line cannot carry raw are percent-encoded most of the time, sent raw sometimes. */
  private String encodeForRequestLine(String path) {
    if (random.nextInt(10) == 0) {
      return path;
    }
    StringBuilder out = new StringBuilder();
    for (byte b : path.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '{' || c == '}' || c == '#') {
        out.append(String.format("%%%02X", c));
      } else {
        out.append((char) c);
      }
    }
    return out.toString();
  }

  private String randomToken(int length) {
    StringBuilder token = new StringBuilder();
    for (int i = 0; i < length; i++) {
      token.append((char) (random.nextInt(5) == 0 ? 0x20 + random.nextInt(0x5f) : 'a' + random.nextInt(26)));
    }
    return token.toString();
  }

  private String mutateBody(String body) {
    if (body == null) {
      return randomJson(3).toString();
    }
    JsonNode tree;
    try {
      tree = json.readTree(body);
    } catch (IOException e) {
      return new String(mutateBytes(body.getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8);
    }
    if (tree == null || !tree.isContainerNode() || tree.isEmpty()) {
      return randomJson(3).toString();
    }
    mutateNode(tree);
    return tree.toString();
  }

  /** Replaces, removes or adds one value somewhere in the tree. */
  private void mutateNode(JsonNode node) {
    while (true) {
      List<String> names = new ArrayList<>();
      if (node.isObject()) {
        node.fieldNames().forEachRemaining(names::add);
      }
      int size = node.isObject() ? names.size() : node.size();
      if (size == 0 || random.nextInt(4) == 0) {
        if (node.isObject()) {
          ((ObjectNode) node).set(random.nextBoolean() && !names.isEmpty() ? pick(names) : randomToken(5), hostileValue());
        } else {
          ((ArrayNode) node).add(hostileValue());
        }
        return;
      }
      int i = random.nextInt(size);
      JsonNode child = node.isObject() ? node.get(names.get(i)) : node.get(i);
      if (child.isContainerNode() && !child.isEmpty() && random.nextInt(3) != 0) {
        node = child;
        continue;
      }
      if (random.nextInt(5) == 0) {
        if (node.isObject()) {
          ((ObjectNode) node).remove(names.get(i));
        } else {
          ((ArrayNode) node).remove(i);
        }
      } else if (node.isObject()) {
        ((ObjectNode) node).set(names.get(i), hostileValue());
      } else {
        ((ArrayNode) node).set(i, hostileValue());
      }
      return;
    }
  }

  private JsonNode hostileValue() {
    JsonNodeFactory f = JsonNodeFactory.instance;
    return switch (random.nextInt(16)) {
      case 0 -> f.nullNode();
      case 1 -> f.booleanNode(random.nextBoolean());
      case 2 -> f.numberNode(random.nextLong());
      case 3 -> f.numberNode(new java.math.BigInteger("9".repeat(1 + random.nextInt(60))));
      case 4 -> f.numberNode(random.nextDouble() * 1e300);
      case 5 -> f.numberNode(-1);
      case 6 -> f.textNode(pick(TOKENS));
      case 7 -> f.textNode("x".repeat(random.nextInt(2000)));
      case 8 -> deep(1 + random.nextInt(300));
      case 9 -> f.objectNode();
      case 10 -> f.arrayNode();
      case 11 -> f.textNode("{\"type\":\"record\",\"name\":\"" + randomToken(4) + "\",\"fields\":[]}");
      case 12 -> f.textNode("syntax = \"proto3\"; message " + randomToken(3).replaceAll("[^a-z]", "") + "M { int32 a = 1; }");
      case 13 -> f.textNode("{\"type\":\"" + pick(new String[] {"string", "object", "wat", "record"}) + "\"}");
      case 14 -> randomJson(3);
      default -> f.textNode(randomToken(random.nextInt(40)));
    };
  }

  private JsonNode deep(int depth) {
    ArrayNode root = JsonNodeFactory.instance.arrayNode();
    ArrayNode current = root;
    for (int i = 1; i < depth; i++) {
      current = current.addArray();
    }
    return root;
  }

  private JsonNode randomJson(int depth) {
    JsonNodeFactory f = JsonNodeFactory.instance;
    if (depth == 0 || random.nextInt(3) == 0) {
      return hostileLeaf();
    }
    if (random.nextBoolean()) {
      ObjectNode o = f.objectNode();
      for (int i = random.nextInt(4); i > 0; i--) {
        o.set(pick(new String[] {"schema", "schemaType", "references", "namespace", "properties", "name", "tags",
            "compatibility", "mode", "identifier", "updates", "requirements", "type", "fields", randomToken(4)}),
            randomJson(depth - 1));
      }
      return o;
    }
    ArrayNode a = f.arrayNode();
    for (int i = random.nextInt(4); i > 0; i--) {
      a.add(randomJson(depth - 1));
    }
    return a;
  }

  private JsonNode hostileLeaf() {
    JsonNodeFactory f = JsonNodeFactory.instance;
    return switch (random.nextInt(5)) {
      case 0 -> f.textNode(randomToken(random.nextInt(12)));
      case 1 -> f.numberNode(random.nextInt());
      case 2 -> f.booleanNode(random.nextBoolean());
      case 3 -> f.nullNode();
      default -> f.textNode(pick(TOKENS));
    };
  }

  private byte[] mutateBytes(byte[] bytes) {
    byte[] out = bytes.clone();
    if (out.length == 0) {
      return new byte[] {(byte) random.nextInt(256)};
    }
    switch (random.nextInt(4)) {
      case 0 -> {
        for (int i = 0; i < 1 + random.nextInt(4); i++) {
          out[random.nextInt(out.length)] = (byte) random.nextInt(256);
        }
      }
      case 1 -> out = java.util.Arrays.copyOf(out, random.nextInt(out.length));
      case 2 -> {
        int at = random.nextInt(out.length);
        byte[] insert = new byte[1 + random.nextInt(16)];
        random.nextBytes(insert);
        byte[] grown = new byte[out.length + insert.length];
        System.arraycopy(out, 0, grown, 0, at);
        System.arraycopy(insert, 0, grown, at, insert.length);
        System.arraycopy(out, at, grown, at + insert.length, out.length - at);
        out = grown;
      }
      default -> {
        int from = random.nextInt(out.length);
        int to = from + random.nextInt(out.length - from);
        byte[] grown = new byte[out.length + (to - from)];
        System.arraycopy(out, 0, grown, 0, to);
        System.arraycopy(out, from, grown, to, out.length - from);
        out = grown;
      }
    }
    return out;
  }

  private byte[] randomRequest() {
    Map<String, String> headers = baseHeaders(random.nextBoolean());
    for (int i = random.nextInt(4); i > 0; i--) {
      headers.put(random.nextBoolean() ? pick(HEADER_NAMES) : "X-" + randomToken(6).replaceAll("[^a-z]", "q"),
          pick(HEADER_VALUES));
    }
    StringBuilder path = new StringBuilder();
    for (int i = 1 + random.nextInt(5); i > 0; i--) {
      path.append('/').append(random.nextBoolean() ? pick(TOKENS) : randomToken(1 + random.nextInt(10)));
    }
    if (random.nextBoolean()) {
      path.append('?').append(pick(QUERIES));
    }
    byte[] body = random.nextBoolean() ? null : randomJson(4).toString().getBytes(StandardCharsets.UTF_8);
    return frame(pick(METHODS), encodeForRequestLine(path.toString()), headers, body, random.nextInt(4) == 0);
  }

  /** A seed request with its framing broken: lengths that lie, bad chunk sizes, both framings, unterminated. */
  private byte[] brokenFraming() {
    Seed s = pick(api.seeds());
    byte[] body = (s.body() == null ? "{\"a\":1}" : s.body()).getBytes(StandardCharsets.UTF_8);
    Map<String, String> headers = baseHeaders(true);
    String method = s.body() == null ? "POST" : s.method();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    switch (random.nextInt(9)) {
      case 0 -> headers.put("Content-Length", Integer.toString(body.length + 1 + random.nextInt(1000))); // body short
      case 1 -> headers.put("Content-Length", Integer.toString(Math.max(0, body.length - 1 - random.nextInt(5))));
      case 2 -> headers.put("Content-Length", pick(new String[] {"-1", "abc", "1e3", "99999999999999999999", " 5", "0x10"}));
      case 3 -> {
        headers.put("Content-Length", Integer.toString(body.length));
        headers.put("Transfer-Encoding", "chunked");
      }
      case 4 -> headers.put("Transfer-Encoding", pick(new String[] {"gzip", "chunked, gzip", "identity", "xchunked", "chunked;x"}));
      default -> headers.put("Transfer-Encoding", "chunked");
    }
    out.writeBytes(RawHttp.head(method, s.path(), headers));
    if (headers.containsKey("Transfer-Encoding") && !headers.containsKey("Content-Length")) {
      switch (random.nextInt(6)) {
        case 0 -> out.writeBytes(("zz\r\n").getBytes(StandardCharsets.US_ASCII)); // not hex
        case 1 -> out.writeBytes(RawHttp.chunk(body)); // no last chunk: unterminated
        case 2 -> out.writeBytes((Integer.toHexString(body.length + 50) + "\r\n").getBytes(StandardCharsets.US_ASCII));
        case 3 -> out.writeBytes(("FFFFFFFFFFFFFFFF\r\n").getBytes(StandardCharsets.US_ASCII));
        case 4 -> {
          out.writeBytes((Integer.toHexString(body.length) + ";ext=" + "e".repeat(random.nextInt(3000)) + "\r\n")
              .getBytes(StandardCharsets.US_ASCII));
          out.writeBytes(body);
          out.writeBytes("\r\n0\r\nX-Trailer: t\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
          return out.toByteArray();
        }
        default -> {
          out.writeBytes(RawHttp.chunk(body));
          out.writeBytes(RawHttp.lastChunk());
          return out.toByteArray();
        }
      }
    }
    out.writeBytes(body);
    return out.toByteArray();
  }

  private byte[] garbage() {
    byte[] bytes = new byte[random.nextInt(600)];
    random.nextBytes(bytes);
    if (random.nextBoolean()) {
      byte[] prefix = (pick(METHODS) + " /" + randomToken(3) + " HTTP/1.1\r\n").getBytes(StandardCharsets.ISO_8859_1);
      byte[] all = new byte[prefix.length + bytes.length];
      System.arraycopy(prefix, 0, all, 0, prefix.length);
      System.arraycopy(bytes, 0, all, prefix.length, bytes.length);
      return all;
    }
    return bytes;
  }

  private byte[] oversized() {
    Seed s = pick(api.seeds());
    Map<String, String> headers = baseHeaders(true);
    switch (random.nextInt(4)) {
      case 0 -> headers.put("X-Big", "b".repeat(HttpGuard.MAX_HEADER_BYTES + random.nextInt(4096)));
      case 1 -> {
        for (int i = 0; i <= HttpGuard.MAX_HEADER_FIELDS + random.nextInt(50); i++) {
          headers.put("X-" + i, "v");
        }
      }
      default -> { }
    }
    String body = s.body() == null ? "{}" : s.body();
    StringBuilder big = new StringBuilder(body.substring(0, body.length() - 1));
    big.append(body.length() > 2 ? "," : "").append("\"pad\":\"");
    big.append("p".repeat(api.maxBodyBytes() + random.nextInt(api.maxBodyBytes())));
    big.append("\"}");
    return frame(s.body() == null ? "POST" : s.method(), s.path(), headers,
        big.toString().getBytes(StandardCharsets.UTF_8), random.nextBoolean());
  }

  private byte[] frame(String method, String path, Map<String, String> headers, byte[] body, boolean chunked) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    if (body != null && !headers.containsKey("Content-Length") && !headers.containsKey("Transfer-Encoding")) {
      if (chunked) {
        headers.put("Transfer-Encoding", "chunked");
      } else {
        headers.put("Content-Length", Integer.toString(body.length));
      }
    }
    out.writeBytes(RawHttp.head(method, path, headers));
    if (body != null) {
      if ("chunked".equals(headers.get("Transfer-Encoding"))) {
        int pos = 0;
        while (pos < body.length) {
          int n = Math.min(body.length - pos, 1 + random.nextInt(2048));
          byte[] piece = new byte[n];
          System.arraycopy(body, pos, piece, 0, n);
          out.writeBytes(RawHttp.chunk(piece));
          pos += n;
        }
        out.writeBytes(RawHttp.lastChunk());
      } else {
        out.writeBytes(body);
      }
    }
    return out.toByteArray();
  }

  /** Asserts the common part of every check: a JSON object. */
  public static JsonNode jsonObject(String body) throws IOException {
    JsonNode node = new ObjectMapper().readTree(body);
    assertThat(node != null && node.isObject()).as("a JSON object: %s", body).isTrue();
    return node;
  }
}
