package io.tidemark.server.admin;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HttpStatus;
import io.javalin.json.JavalinJackson;
import io.micrometer.core.instrument.Counter;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tidemark.registry.http.HttpGuard;
import io.tidemark.registry.http.HttpAccess;
import io.tidemark.server.config.ServerConfig;
import io.tidemark.server.console.Console;
import io.tidemark.server.storage.StorageNode;
import io.tidemark.server.table.TableTopicsService;
import io.tidemark.stream.api.FetchResult;
import io.tidemark.stream.api.OffsetOutOfRangeException;
import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.api.StreamClosedException;
import io.tidemark.stream.api.StreamFencedException;
import io.tidemark.stream.api.StreamNotFoundException;
import io.tidemark.stream.wal.WalFullException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.apache.kafka.common.acl.AclOperation;
import org.eclipse.jetty.util.BlockingArrayQueue;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin/metrics HTTP endpoint (Javalin on Jetty): {@code /health} (liveness), {@code /ready}
 * (readiness), {@code /metrics} (Prometheus text format), the status of the table topics
 * ({@code /v1/tables}, {@code /v1/tables/{topic}}), the read-only web console ({@code /} and
 * {@code /api/console/...}, see {@link Console}) and, only with
 * {@code admin.streams.api.enabled=true}, the stream debugging API ({@code /v1/streams}, see
 * {@link StreamAdmin}: it writes only its own debugging streams and reads others without
 * touching their owner).
 *
 * <p>Exposure: binds {@code admin.host} (loopback by default). Every route but {@code /health} and
 * {@code /ready} is authenticated and authorized by {@link HttpAccess} (Kafka users and ACLs once the
 * broker runs: DESCRIBE on the cluster to read, ALTER to write); with {@code admin.auth.basic.users}
 * or a secured Kafka port credentials are required;
 * {@link ServerConfig} refuses the debugging API on a non-loopback address without users.
 *
 * <p>States: created, started ({@link #start()}), stopped ({@link #close()}). Requests run on a
 * bounded Jetty pool ({@value #MAX_THREADS} threads, {@value #MAX_QUEUED} queued connections
 * beyond which Jetty rejects); storage calls complete asynchronously, so a slow WAL holds no
 * worker thread. Request bodies (chunked ones too) are bounded by {@code admin.max.request.bytes};
 * headers, idle timeouts, JSON depth and the error bodies ({@code {"error","error_code","message"}},
 * never internals) are the shared {@link HttpGuard}'s.
 */
public final class AdminServer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(AdminServer.class);
  static final int MAX_THREADS = 32;
  static final int MAX_QUEUED = 1024;
  static final int DEFAULT_LIST_LIMIT = 1000;
  static final int MAX_LIST_LIMIT = 100_000;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final ServerConfig config;
  private final Health health;
  private final PrometheusMeterRegistry meters;
  private volatile StreamAdmin streams;
  private volatile StreamDirectory directory;
  private volatile TableTopicsService tables;
  private volatile HttpAccess access;
  private final Counter appendedBytes;
  private final HttpGuard guard;
  private final Javalin app;
  private final Console console;

  /**
   * The endpoint answers health and metrics at once; the stream admin API answers 503 until
   * {@link #attach(StorageNode)} hands it the recovered storage.
   */
  public AdminServer(ServerConfig config, Health health, PrometheusMeterRegistry meters) {
    this(config, health, meters, HttpAccess.endpointUsersOnly(config.adminBasicAuthUsers()));
  }

  /**
   * An endpoint that authenticates with {@code access} until {@link #attachAccess} replaces it (the
   * node's Kafka users and ACLs, once its broker runs).
   */
  public AdminServer(ServerConfig config, Health health, PrometheusMeterRegistry meters, HttpAccess access) {
    this.access = access;
    this.config = config;
    this.health = health;
    this.meters = meters;
    this.appendedBytes = Counter.builder("tidemark.admin.appended.bytes")
        .description("Bytes appended through the stream admin API").baseUnit("bytes").register(meters);
    this.guard = new HttpGuard(ServerConfig.ADMIN_MAX_REQUEST_BYTES.name(), config.adminMaxRequestBytes(),
        AdminServer::errorBody, LOG);
    this.app = Javalin.create(c -> {
      c.showJavalinBanner = false;
      c.startupWatcherEnabled = false;
      guard.configure(c);
      c.jsonMapper(new JavalinJackson().updateMapper(m -> HttpGuard.bounded(m, config.adminMaxRequestBytes())));
      c.jetty.threadPool = boundedPool();
      ServerConfig.AdminTls tls = config.adminTls();
      if (tls.enabled()) {
        c.jetty.addConnector((server, httpConfig) -> io.tidemark.registry.http.HttpSecurity.tlsConnector(server,
            httpConfig, config.adminHost(), config.adminPort(), tls.keystorePath(), tls.keystorePassword(),
            tls.keystoreType(), access.clientCertificates()));
      }
    });
    guard.install(app);
    this.console = new Console(config, health, meters);
    routes();
  }

  private static QueuedThreadPool boundedPool() {
    QueuedThreadPool pool = new QueuedThreadPool(MAX_THREADS, 2, 60_000, new BlockingArrayQueue<>(MAX_QUEUED));
    pool.setName("admin-http");
    pool.setDaemon(true);
    return pool;
  }

  /** Binds {@code admin.host:admin.port}; returns the bound port (useful with port 0). */
  public int start() {
    app.start(config.adminHost(), config.adminPort());
    LOG.info("admin endpoint listening on {}://{}:{} (/health /ready /metrics{})",
        config.adminTls().enabled() ? "https" : "http", config.adminHost(), port(),
        config.adminStreamsApiEnabled() ? " /v1/streams" : "");
    return port();
  }

  /** Serves the stream admin API on {@code storage} from now on (once it is recovered). */
  public void attach(StorageNode storage) {
    if (!config.adminStreamsApiEnabled()) {
      return;
    }
    StreamDirectory dir = new StreamDirectory(config.dataDir().resolve("admin"));
    directory = dir;
    streams = new StreamAdmin(storage, dir, config.adminMaxOpenStreams());
  }

  /** Authenticates and authorizes with {@code next} from now on (the broker's users and ACLs). */
  public void attachAccess(HttpAccess next) {
    access = next;
  }

  /** Serves {@code /v1/tables} from now on (the table topics of this node). */
  public void attachTables(TableTopicsService tableTopics) {
    tables = tableTopics;
    console.attachTables(tableTopics);
  }

  /** The web console served at {@code /} (read-only; see {@link Console}). */
  public Console console() {
    return console;
  }

  private TableTopicsService tables() {
    TableTopicsService t = tables;
    if (t == null) {
      throw new NotReady("table topics do not run on this node (no broker role, table.enable=false, or still starting)");
    }
    return t;
  }

  private StreamAdmin streams() {
    StreamAdmin admin = streams;
    if (admin == null) {
      throw new NotReady("the storage engine is still recovering; retry when /ready says READY");
    }
    return admin;
  }

  public int port() {
    return app.port();
  }

  private void routes() {
    app.before(this::authenticate);
    app.get("/health", ctx -> {
      Map<String, Boolean> components = new LinkedHashMap<>(health.components());
      boolean live = health.live() && components.values().stream().allMatch(Boolean::booleanValue);
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("status", live ? "UP" : "DOWN");
      body.put("checks", components);
      ctx.status(live ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE).json(body);
    });
    app.get("/ready", ctx -> {
      Map<String, Boolean> checks = new LinkedHashMap<>(health.readiness());
      boolean ready = !checks.isEmpty() && checks.values().stream().allMatch(Boolean::booleanValue);
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("status", ready ? "READY" : "NOT_READY");
      body.put("checks", checks);
      ctx.status(ready ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE).json(body);
    });
    app.get("/metrics", ctx -> ctx.contentType("text/plain; version=0.0.4; charset=utf-8").result(meters.scrape()));
    app.get("/v1/tables", ctx -> ctx.json(Map.of("tables", tables().statuses())));
    app.get("/v1/tables/{topic}", ctx -> {
      String topic = ctx.pathParam("topic");
      tables().status(topic).ifPresentOrElse(ctx::json, () -> error(ctx, HttpStatus.NOT_FOUND,
          "topic '" + topic + "' is not a table topic running on this node (table.topic.enable=true enables it)"));
    });
    app.post("/v1/tables/{topic}/dead-letters/reprocess", ctx -> {
      String topic = ctx.pathParam("topic");
      int maxRows = maxRowsOf(ctx.queryParam("maxRows"));
      try {
        tables().reprocessDeadLetters(topic, maxRows).ifPresentOrElse(ctx::json, () -> error(ctx, HttpStatus.NOT_FOUND,
            "topic '" + topic + "' is not a table topic running on this node (table.topic.enable=true enables it)"));
      } catch (UnsupportedOperationException e) {
        error(ctx, HttpStatus.NOT_IMPLEMENTED, e.getMessage());
      } catch (IllegalStateException e) {
        error(ctx, HttpStatus.CONFLICT, e.getMessage());
      }
    });
    app.exception(BadRequest.class, (e, ctx) -> error(ctx, HttpStatus.BAD_REQUEST, e.getMessage()));
    app.exception(HttpAccess.Unauthenticated.class, (e, ctx) -> {
      ctx.header("WWW-Authenticate", "Basic realm=\"tidemark-admin\"");
      error(ctx, HttpStatus.UNAUTHORIZED, e.getMessage());
    });
    app.exception(Forbidden.class, (e, ctx) -> error(ctx, HttpStatus.FORBIDDEN, e.getMessage()));
    app.exception(NotReady.class, (e, ctx) -> error(ctx, HttpStatus.SERVICE_UNAVAILABLE, e.getMessage()));
    console.routes(app);
    if (config.adminStreamsApiEnabled()) {
      streamRoutes();
    }
  }

  private void streamRoutes() {
    app.post("/v1/streams", ctx -> {
      Map<String, String> tags = tagsOf(ctx);
      respond(ctx, streams().create(tags), id -> {
        ctx.status(HttpStatus.CREATED);
        return Map.of("streamId", id);
      });
    });
    app.get("/v1/streams", ctx -> {
      int limit = intParam(ctx, "limit", DEFAULT_LIST_LIMIT, 1, MAX_LIST_LIMIT);
      respond(ctx, streams().list(limit), views -> Map.of("streams", views));
    });
    app.post("/v1/streams/{id}/records", ctx -> {
      long id = streamId(ctx);
      int records = intParam(ctx, "records", 1, 1, Integer.MAX_VALUE);
      byte[] body = ctx.bodyAsBytes();
      if (body.length == 0) {
        throw new BadRequest("the request body is the batch to append and must not be empty");
      }
      if (records > body.length) {
        throw new BadRequest("records=" + records + " exceeds the " + body.length + " bytes of the body (a record takes at least one byte)");
      }
      respond(ctx, streams().append(id, records, ByteBuffer.wrap(body)), appended -> {
        appendedBytes.increment(body.length);
        return appended;
      });
    });
    app.get("/v1/streams/{id}/records", ctx -> {
      long id = streamId(ctx);
      long offset = longParam(ctx, "offset", 0);
      int maxBytes = intParam(ctx, "maxBytes", 1024 * 1024, 1, config.adminMaxFetchBytes());
      respond(ctx, streams().read(id, offset, maxBytes), result -> readBody(id, offset, result));
    });
  }

  /**
   * Probes stay open (an orchestrator has no password); everything else is authenticated (required
   * when {@code http.auth.required} says so or admin users are set) and then needs DESCRIBE on the
   * cluster to read (metrics, table status, streams) or ALTER on the cluster to write (streams).
   */
  /** {@code maxRows} of a dead-letter reprocessing run: 1 to 100000, 10000 when absent. */
  private static int maxRowsOf(String value) {
    if (value == null) {
      return 10_000;
    }
    try {
      int n = Integer.parseInt(value);
      if (n >= 1 && n <= 100_000) {
        return n;
      }
    } catch (NumberFormatException ignored) {
      // refused below
    }
    throw new BadRequest("maxRows must be a number from 1 to 100000, got " + value);
  }

  private void authenticate(Context ctx) {
    if (ctx.path().equals("/health") || ctx.path().equals("/ready")) {
      return;
    }
    HttpAccess current = access;
    current.authenticate(ctx);
    boolean read = ctx.method().name().equals("GET") || ctx.method().name().equals("HEAD");
    AclOperation op = read ? AclOperation.DESCRIBE : AclOperation.ALTER;
    if (!current.allowedOnCluster(ctx, op)) {
      throw new Forbidden("User " + HttpAccess.principal(ctx) + " is denied " + op + " on the cluster");
    }
  }

  private static Map<String, Object> readBody(long id, long offset, FetchResult result) {
    List<Map<String, Object>> batches = new ArrayList<>();
    long next = offset;
    for (StreamBatch batch : result.batches()) {
      ByteBuffer payload = batch.payload().duplicate();
      byte[] bytes = new byte[payload.remaining()];
      payload.get(bytes);
      Map<String, Object> b = new LinkedHashMap<>();
      b.put("baseOffset", batch.baseOffset());
      b.put("recordCount", batch.recordCount());
      b.put("payload", bytes); // base64 in JSON
      batches.add(b);
      next = batch.nextOffset();
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("streamId", id);
    body.put("offset", offset);
    body.put("nextOffset", next);
    body.put("cold", result.cold());
    body.put("batches", batches);
    return body;
  }

  /** Answers asynchronously: the storage future's value through {@code render}, or a mapped error. */
  private <T> void respond(Context ctx, CompletableFuture<T> future, Function<T, Object> render) {
    ctx.future(() -> future.handle((value, err) -> {
      if (err != null) {
        mapError(ctx, StreamAdmin.unwrap(err));
      } else {
        ctx.json(render.apply(value));
      }
      return null;
    }));
  }

  private void mapError(Context ctx, Throwable cause) {
    HttpStatus status;
    if (cause instanceof StreamNotFoundException) {
      status = HttpStatus.NOT_FOUND;
    } else if (cause instanceof OffsetOutOfRangeException) {
      status = HttpStatus.RANGE_NOT_SATISFIABLE;
    } else if (cause instanceof StreamFencedException || cause instanceof StreamClosedException) {
      status = HttpStatus.CONFLICT;
    } else if (cause instanceof StreamAdmin.OwnedStreamException) {
      status = HttpStatus.FORBIDDEN;
    } else if (cause instanceof StreamAdmin.StreamNotHeldHereException) {
      status = HttpStatus.CONFLICT;
    } else if (cause instanceof TooManyOpenStreamsException) {
      status = HttpStatus.TOO_MANY_REQUESTS;
    } else if (cause instanceof WalFullException) {
      status = HttpStatus.SERVICE_UNAVAILABLE;
    } else if (cause instanceof IllegalArgumentException) {
      status = HttpStatus.BAD_REQUEST;
    } else {
      error(ctx, HttpStatus.INTERNAL_SERVER_ERROR, guard.internalError(ctx, cause));
      return;
    }
    error(ctx, status, HttpGuard.publicMessage(cause.getMessage(), status.getMessage()));
  }

  private static void error(Context ctx, HttpStatus status, String message) {
    // Every error leaves here, its message checked once more for internals (a path may echo anything).
    ctx.status(status).contentType("application/json")
        .result(errorBody(status.getCode(), HttpGuard.publicMessage(message, status.getMessage())));
  }

  /** The admin API's error body: the reason phrase, the status as error code, and the message. */
  static String errorBody(int status, String message) {
    HttpStatus known = HttpStatus.forStatus(status);
    String phrase = known == HttpStatus.UNKNOWN ? "HTTP " + status : known.getMessage();
    return JSON.createObjectNode().put("error", phrase).put("error_code", status).put("message", message).toString();
  }

  @SuppressWarnings("unchecked")
  private static Map<String, String> tagsOf(Context ctx) {
    if (ctx.bodyAsBytes().length == 0) {
      return Map.of();
    }
    Map<String, Object> body;
    try {
      body = ctx.bodyAsClass(Map.class);
    } catch (Exception e) { // Jackson's checked exceptions pass through Javalin undeclared
      String reason = e instanceof JacksonException j ? HttpGuard.describe(j) : "not a JSON object";
      throw new BadRequest("the body must be a JSON object like {\"tags\": {\"name\": \"value\"}}: " + reason);
    }
    if (body == null) {
      throw new BadRequest("the body must be a JSON object like {\"tags\": {\"name\": \"value\"}}, not null");
    }
    Object tags = body.getOrDefault("tags", Map.of());
    if (!(tags instanceof Map<?, ?> map)) {
      throw new BadRequest("\"tags\" must be an object of string values");
    }
    Map<String, String> result = new LinkedHashMap<>();
    map.forEach((k, v) -> result.put(String.valueOf(k), String.valueOf(v)));
    return result;
  }

  private static long streamId(Context ctx) {
    try {
      return Long.parseLong(ctx.pathParam("id"));
    } catch (NumberFormatException e) {
      throw new BadRequest("stream id '" + ctx.pathParam("id") + "' is not a number");
    }
  }

  private static long longParam(Context ctx, String name, long defaultValue) {
    String raw = ctx.queryParam(name);
    if (raw == null || raw.isBlank()) {
      return defaultValue;
    }
    try {
      long value = Long.parseLong(raw.trim());
      if (value < 0) {
        throw new BadRequest("query parameter " + name + " must not be negative, got " + raw);
      }
      return value;
    } catch (NumberFormatException e) {
      throw new BadRequest("query parameter " + name + " must be a number, got '" + raw + "'");
    }
  }

  private static int intParam(Context ctx, String name, int defaultValue, int min, int max) {
    long value = longParam(ctx, name, defaultValue);
    if (value < min || value > max) {
      throw new BadRequest("query parameter " + name + " must be between " + min + " and " + max + ", got " + value);
    }
    return (int) value;
  }

  /** The request itself is wrong; answered with 400 and the reason. */
  static final class BadRequest extends RuntimeException {
    BadRequest(String message) {
      super(message);
    }
  }

  /** The principal's ACLs do not allow the request; answered with 403. */
  static final class Forbidden extends RuntimeException {
    Forbidden(String message) {
      super(message);
    }
  }

  /** The storage is not serving yet. */
  static final class NotReady extends RuntimeException {
    NotReady(String message) {
      super(message);
    }
  }

  /** Stops accepting requests and waits for the ones in flight. */
  @Override
  public void close() {
    app.stop();
    console.close();
    StreamDirectory dir = directory;
    if (dir != null) {
      dir.close();
    }
  }
}
