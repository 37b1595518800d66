package io.tidemark.server.console;

import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HttpStatus;
import io.micrometer.core.instrument.MeterRegistry;
import io.tidemark.broker.KafkaBroker;
import io.tidemark.registry.SchemaRegistry;
import io.tidemark.registry.http.HttpGuard;
import io.tidemark.server.admin.Health;
import io.tidemark.server.cluster.ControllerLink;
import io.tidemark.server.config.ServerConfig;
import io.tidemark.server.table.TableTopicsService;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The web console: a read-only view of the cluster served by the admin endpoint at {@code /}
 * (static HTML, JavaScript modules and CSS from the jar, {@link StaticAssets}) and the JSON it polls
 * under {@code /api/console/...}: cluster (nodes, roles, health, this node's load, controller quorum),
 * topics (partitions, leaders, sizes in object storage, end offsets and rates), consumer groups
 * (members, assignments, lag per partition), table topics (last commit, freshness, rows, errors,
 * dead letters), schema registry (subjects, versions, a diff of two versions) and moves and failovers
 * in progress.
 *
 * <p>Sources: this node's metadata image and quorum (through the {@link ControllerLink}), its broker's
 * topics and the cluster's groups and offsets (through a Kafka {@code Admin} client on this broker,
 * {@link KafkaReads}, so groups coordinated by other brokers are seen too), its table topics and its
 * schema registry. They are attached as the node starts; a page whose source is not there (yet, or on
 * a node without that role) answers 503 naming what is missing.
 *
 * <p>Read-only: every route is a GET and nothing here changes state. Admission: the admin endpoint's
 * authentication applies (with {@code admin.auth.basic.users} set, the console needs a user like every
 * admin route). Bounds: every list is paged with a capped {@code limit}, and every answer comes from
 * {@link Snapshots}, so any number of browsers polling costs the node one computation per page and
 * window, and too many distinct computations at once are refused with 503 instead of queuing.
 *
 * <p>Threading: routes run on the admin HTTP threads; sources are volatile fields set once by the
 * server's start thread; {@link Snapshots} and {@link Rates} are the only shared mutable state.
 */
public final class Console implements AutoCloseable {

  /** How long an answer is reused: the browser polls every few seconds. */
  static final long FRESH_MS = 2_000;
  static final int DEFAULT_LIMIT = 50;
  static final int MAX_LIMIT = 500;

  private final ServerConfig config;
  private final Health health;
  private final MeterRegistry meters;
  private final Snapshots snapshots = new Snapshots(System::currentTimeMillis, 256, 4, 20_000);
  private final Rates rates = new Rates(20_000, 10 * 60_000L);
  private final StaticAssets assets = StaticAssets.load();
  private final LocalLoad localLoad;
  private final RecentMoves recentMoves = new RecentMoves(System::currentTimeMillis);
  private final long startedAtMs = System.currentTimeMillis();
  private volatile KafkaBroker broker;
  private volatile ControllerLink controller;
  private volatile SchemaRegistry registry;
  private volatile TableTopicsService tables;
  private volatile Integer tableRestPort;
  private volatile KafkaReads kafka;

  public Console(ServerConfig config, Health health, MeterRegistry meters) {
    this.config = config;
    this.health = health;
    this.meters = meters;
    this.localLoad = new LocalLoad(meters, System::currentTimeMillis);
  }

  /** This node's load, measured now (what the cluster page shows and the node reports to the controller leader). */
  public LocalLoad localLoad() {
    return localLoad;
  }

  /** The node's broker, registry and controller link once started (each null when the node has not that role). */
  public void attach(KafkaBroker broker, SchemaRegistry registry, ControllerLink controller, Integer tableRestPort) {
    this.controller = controller;
    if (controller != null) {
      controller.replica().addListener(recentMoves); // every move that finishes from now on, however short
    }
    this.registry = registry;
    this.tableRestPort = tableRestPort;
    if (broker != null) {
      this.kafka = new KafkaReads(broker.bootstrapServers(), broker.internalClientConfigs(), broker.nodeId());
      this.broker = broker;
    }
  }

  /** The node's table topics, once they run. */
  public void attachTables(TableTopicsService tableTopics) {
    this.tables = tableTopics;
  }

  /** Installs the console's GET routes on the admin endpoint. */
  public void routes(Javalin app) {
    app.get("/", ctx -> assets.serve(ctx, "index.html"));
    app.get("/console/{file}", ctx -> assets.serve(ctx, ctx.pathParam("file")));
    json(app, "/api/console/cluster", (ctx, key) -> snapshot(key, () -> new ClusterPage(sources()).render()));
    json(app, "/api/console/topics", (ctx, key) -> {
      Paging paging = Paging.of(ctx);
      boolean internal = "true".equals(ctx.queryParam("internal"));
      return snapshot(key + "?" + paging + internal, () -> new TopicsPage(sources()).list(paging, internal));
    });
    json(app, "/api/console/topics/{topic}", (ctx, key) -> snapshot(key, () -> new TopicsPage(sources())
        .detail(ctx.pathParam("topic"))));
    json(app, "/api/console/groups", (ctx, key) -> {
      Paging paging = Paging.of(ctx);
      return snapshot(key + "?" + paging, () -> new GroupsPage(sources()).list(paging));
    });
    json(app, "/api/console/groups/{group}", (ctx, key) -> snapshot(key, () -> new GroupsPage(sources())
        .detail(ctx.pathParam("group"))));
    json(app, "/api/console/tables", (ctx, key) -> snapshot(key, () -> new TablesPage(sources()).render()));
    json(app, "/api/console/schemas", (ctx, key) -> {
      Paging paging = Paging.of(ctx);
      return snapshot(key + "?" + paging, () -> new SchemasPage(sources()).subjects(paging));
    });
    json(app, "/api/console/schemas/{subject}", (ctx, key) -> snapshot(key, () -> new SchemasPage(sources())
        .subject(ctx.pathParam("subject"))));
    json(app, "/api/console/schemas/{subject}/diff", (ctx, key) -> {
      int from = Paging.intParam(ctx, "from", 1, 1, Integer.MAX_VALUE);
      int to = Paging.intParam(ctx, "to", 1, 1, Integer.MAX_VALUE);
      return snapshot(key + "?" + from + ":" + to, () -> new SchemasPage(sources()).diff(ctx.pathParam("subject"), from, to));
    });
    json(app, "/api/console/moves", (ctx, key) -> snapshot(key, () -> new MovesPage(sources()).render()));
    app.exception(Snapshots.BusyException.class, (e, ctx) -> fail(ctx, HttpStatus.SERVICE_UNAVAILABLE, e.getMessage()));
    app.exception(Missing.class, (e, ctx) -> fail(ctx, HttpStatus.SERVICE_UNAVAILABLE, e.getMessage()));
    app.exception(NotFound.class, (e, ctx) -> fail(ctx, HttpStatus.NOT_FOUND, e.getMessage()));
    app.exception(Paging.BadParameter.class, (e, ctx) -> fail(ctx, HttpStatus.BAD_REQUEST, e.getMessage()));
  }

  /** The error body of the admin endpoint: {@code {"error","error_code","message"}}. */
  private static void fail(Context ctx, HttpStatus status, String message) {
    ctx.status(status).json(Map.of("error", status.getMessage(), "error_code", status.getCode(),
        "message", HttpGuard.publicMessage(message, status.getMessage())));
  }

  private void json(Javalin app, String path, Handler handler) {
    app.get(path, ctx -> {
      Object body = handler.apply(ctx, ctx.path());
      ctx.header("Cache-Control", "no-store").json(body);
    });
  }

  @FunctionalInterface
  private interface Handler {
    Object apply(Context ctx, String key) throws Exception;
  }

  private Object snapshot(String key, Supplier<Object> compute) {
    return snapshots.get(key, FRESH_MS, compute);
  }

  private Sources sources() {
    return new Sources(config, health, meters, broker, controller, registry, tables, tableRestPort, kafka, rates,
        localLoad, recentMoves, startedAtMs, System.currentTimeMillis());
  }

  /** Stops the Kafka client of the console. */
  @Override
  public void close() {
    ControllerLink c = controller;
    if (c != null) {
      c.replica().removeListener(recentMoves);
    }
    KafkaReads k = kafka;
    if (k != null) {
      k.close();
    }
  }

  /** A source a page needs is not on this node (or not started yet); answered 503 with the reason. */
  static final class Missing extends RuntimeException {
    Missing(String message) {
      super(message);
    }
  }

  /** What the request names does not exist; answered 404. */
  static final class NotFound extends RuntimeException {
    NotFound(String message) {
      super(message);
    }
  }
}
