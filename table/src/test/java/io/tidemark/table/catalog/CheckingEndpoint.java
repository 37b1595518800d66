package io.tidemark.table.catalog;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;

/**
 * A local HTTP endpoint that stands where a catalog service would (S3 Tables, Glue, an OAuth2-protected REST
 * catalog): it records every request, checks each one ({@link Check}), refuses a failing one with 403 and keeps the
 * reason, answers its own routes ({@link #route}), and forwards everything else, without the path prefix, to an
 * upstream Iceberg REST catalog (the built-in one). Tests assert on {@link #seen()} and {@link #refusals()}.
 * Threads: the JDK server's small pool; the lists are concurrent.
 */
public final class CheckingEndpoint implements AutoCloseable {

  /** One request as it arrived: the raw (still encoded) path and query, lower-cased header names, the body. */
  public record Seen(String method, String rawPath, String rawQuery, Map<String, List<String>> headers, byte[] body) {
    public String header(String name) {
      List<String> values = headers.get(name);
      return values == null || values.isEmpty() ? null : values.get(0);
    }

    public String bodyText() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  /** A local answer. */
  public record Reply(int status, String contentType, String body) {}

  /** Why a request is refused, or null when it passes. */
  public interface Check {
    String problem(Seen request);
  }

  private final HttpServer server;
  private final ExecutorService pool = Executors.newFixedThreadPool(4);
  private final HttpClient client = HttpClient.newHttpClient();
  private final String upstream;
  private final String stripPrefix;
  private final Check check;
  private final Map<String, Function<Seen, Reply>> routes = new ConcurrentHashMap<>();
  private volatile Function<Seen, Reply> backend;
  private final List<Seen> seen = new CopyOnWriteArrayList<>();
  private final List<String> refusals = new CopyOnWriteArrayList<>();

  /** {@code upstream} may be null (local routes only); {@code stripPrefix} is removed from forwarded paths. */
  public CheckingEndpoint(String upstream, String stripPrefix, Check check) throws IOException {
    this.upstream = upstream;
    this.stripPrefix = stripPrefix;
    this.check = check;
    this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    server.createContext("/", this::handle);
    server.setExecutor(pool);
    server.start();
  }

  /** Answers requests whose path is {@code path} locally, without the check (e.g. an OAuth2 token endpoint). */
  public CheckingEndpoint route(String path, Function<Seen, Reply> handler) {
    routes.put(path, handler);
    return this;
  }

  /** Answers checked requests with {@code backend} instead of forwarding them (a fake service, e.g. Glue). */
  public CheckingEndpoint answerWith(Function<Seen, Reply> backend) {
    this.backend = backend;
    return this;
  }

  public String uri() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  public List<Seen> seen() {
    return List.copyOf(seen);
  }

  public List<String> refusals() {
    return List.copyOf(refusals);
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      URI uri = exchange.getRequestURI();
      Seen request = new Seen(exchange.getRequestMethod(), uri.getRawPath(), uri.getRawQuery(),
          SigV4Verifier.lowerCase(exchange.getRequestHeaders()), exchange.getRequestBody().readAllBytes());
      seen.add(request);
      Function<Seen, Reply> route = routes.get(request.rawPath());
      if (route != null) {
        send(exchange, route.apply(request));
        return;
      }
      String problem = check.problem(request);
      if (problem != null) {
        refusals.add(request.method() + " " + request.rawPath() + ": " + problem);
        send(exchange, new Reply(403, "application/json",
            "{\"error\":{\"message\":" + quoted("refused by the checking endpoint: " + problem)
                + ",\"type\":\"ForbiddenException\",\"code\":403}}"));
        return;
      }
      Function<Seen, Reply> local = backend;
      send(exchange, local != null ? local.apply(request) : forward(request));
    } catch (RuntimeException | InterruptedException e) {
      refusals.add("endpoint failure: " + e);
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static String quoted(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
  }

  private Reply forward(Seen request) throws IOException, InterruptedException {
    if (upstream == null) {
      return new Reply(404, "application/json", "{}");
    }
    String path = request.rawPath().startsWith(stripPrefix) ? request.rawPath().substring(stripPrefix.length())
        : request.rawPath();
    URI target = URI.create(upstream + path + (request.rawQuery() == null ? "" : "?" + request.rawQuery()));
    HttpRequest.Builder b = HttpRequest.newBuilder(target)
        .method(request.method(), request.body().length == 0 ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofByteArray(request.body()));
    String contentType = request.header("content-type");
    if (contentType != null) {
      b.header("Content-Type", contentType);
    }
    HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    return new Reply(r.statusCode(), r.headers().firstValue("content-type").orElse("application/json"), r.body());
  }

  private static void send(HttpExchange exchange, Reply reply) throws IOException {
    byte[] body = reply.body().getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", reply.contentType());
    boolean empty = body.length == 0 || reply.status() == 204;
    exchange.sendResponseHeaders(reply.status(), empty ? -1 : body.length);
    if (!empty) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
    pool.shutdownNow();
    client.close();
  }
}
