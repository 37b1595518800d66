package io.tidemark.server;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tidemark.broker.BrokerConfig;
import io.tidemark.broker.KafkaBroker;
import io.tidemark.broker.cluster.ClusterMetadata;
import io.tidemark.server.cluster.ControllerClusterMetadata;
import io.tidemark.server.cluster.ControllerLink;
import io.tidemark.registry.RegistryConfig;
import io.tidemark.registry.SchemaRegistry;
import io.tidemark.registry.cluster.WriteLeader;
import io.tidemark.registry.http.ClientCertificates;
import io.tidemark.registry.http.HttpAccess;
import io.tidemark.registry.http.HttpSecurity;
import io.tidemark.registry.http.RegistryHttpServer;
import io.tidemark.broker.acl.Authorizer;
import io.tidemark.broker.acl.AuthorizerConfig;
import io.tidemark.broker.security.SecurityConfig;
import io.tidemark.table.rest.CatalogAccess;
import io.tidemark.table.rest.RestCatalogConfig;
import io.tidemark.server.admin.AdminServer;
import io.tidemark.server.admin.Health;
import io.tidemark.server.config.ServerConfig;
import io.tidemark.server.metrics.NodeMeters;
import io.tidemark.server.table.TableTopicsService;
import io.tidemark.table.config.TableServiceConfig;
import io.tidemark.registry.store.PartitionSchemaStore;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import io.tidemark.registry.store.SchemaStore;
import io.tidemark.server.schema.ClusterSchemaLog;
import io.tidemark.server.schema.StreamSchemaStore;
import io.tidemark.server.storage.StorageFactory;
import io.tidemark.server.storage.StorageNode;
import io.tidemark.server.table.TableRestEndpoint;
import io.tidemark.stream.config.ConfigException;
import io.tidemark.stream.config.Settings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Tidemark process: owns the metrics registry, the admin endpoint, the storage engine (with
 * its link to the controller quorum, a local voter with the controller role), the Kafka broker
 * (topics and partition leaders from the controller's image) and the schema registry (by
 * {@code process.roles}), starts them in dependency order and stops them
 * in reverse (the admin endpoint first, so that in-flight requests finish on a live engine).
 *
 * <p>States: STARTING → RUNNING → STOPPING → STOPPED, or STARTING → FAILED when a component does
 * not start (what did start is closed again). {@link #close()} is idempotent and may be called
 * from any thread (the SIGTERM hook); the state is published through a volatile field.
 */
public final class TidemarkServer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(TidemarkServer.class);
  /** How long one registry append or read may wait for the partition log. */
  private static final long SCHEMA_LOG_TIMEOUT_MS = 30_000;
  /** Opening an internal topic another node may be creating at the same moment: attempts, and the wait between them. */
  static final int INTERNAL_TOPIC_ATTEMPTS = 60;
  static final long INTERNAL_TOPIC_RETRY_MS = 500;

  public enum State {
    STARTING,
    RUNNING,
    STOPPING,
    STOPPED,
    FAILED
  }

  private final ServerConfig config;
  private final PrometheusMeterRegistry meters;
  private final Deque<AutoCloseable> started = new ArrayDeque<>();
  private volatile State state = State.STARTING;
  private volatile StorageNode storage;
  private volatile AdminServer admin;
  private volatile KafkaBroker broker;
  private volatile RegistryHttpServer registryHttp;
  private volatile SchemaRegistry schemaRegistry;
  private volatile TableRestEndpoint tableRest;
  /** This node's bearer tokens (the REST catalog's /v1/oauth/tokens), set before any HTTP endpoint starts. */
  private volatile io.tidemark.broker.security.TokenIssuer tokenIssuer;
  /** http.ssl.client.auth and its trust store, read at start. */
  private volatile ClientCertificates httpClientCertificates = ClientCertificates.NONE;

  private TidemarkServer(ServerConfig config) {
    this.config = config;
    this.meters = NodeMeters.registry();
  }

  /** Starts every component; on failure closes what started and rethrows. */
  public static TidemarkServer start(ServerConfig config, Settings settings, StorageFactory storageFactory) {
    TidemarkServer server = new TidemarkServer(config);
    try {
      server.startComponents(settings, storageFactory);
    } catch (RuntimeException | Error e) {
      server.stopComponents();
      server.state = State.FAILED;
      throw e;
    }
    return server;
  }

  private void startComponents(Settings settings, StorageFactory storageFactory) {
    LOG.info("starting node {} with data in {} (roles {})", config.nodeId(), config.dataDir(), config.roles());
    try {
      Files.createDirectories(config.dataDir());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create data.dir " + config.dataDir(), e);
    }
    bindJvmMetrics();
    boolean httpAuthRequired = httpAuthRequired(settings);
    httpClientCertificates = ClientCertificates.from(settings);
    tokenIssuer = new io.tidemark.broker.security.TokenIssuer(System::currentTimeMillis,
        settings.get(HttpSecurity.TOKEN_LIFETIME_MS));
    // The admin endpoint starts beside the storage (its HTTP server takes a while to load), so that /health and
    // /ready answer during a long WAL recovery without delaying it.
    CompletableFuture<AdminServer> adminStarting = new CompletableFuture<>();
    Thread.ofPlatform().name("admin-start").daemon().start(() -> {
      try {
        AdminServer endpoint = new AdminServer(config, health(), meters,
            httpAccess(httpAuthRequired, config.adminBasicAuthUsers()));
        try {
          endpoint.start();
        } catch (RuntimeException e) {
          closeQuietly(endpoint);
          throw e;
        }
        adminStarting.complete(endpoint);
      } catch (RuntimeException | Error e) {
        adminStarting.completeExceptionally(e);
      }
    });
    try {
      storage = storageFactory.open(config, settings, meters);
      started.push(storage);
    } catch (RuntimeException | Error e) {
      // the storage's failure is the one to report; the endpoint is closed before start-up fails, leaving no port bound
      adminStarting.handle((endpoint, error) -> endpoint).join();
      adminStarting.thenAccept(TidemarkServer::closeQuietly);
      throw e;
    }
    admin = awaitStart(adminStarting);
    started.push(admin);
    if (config.has(ServerConfig.Role.BROKER)) {
      long assembling = System.nanoTime();
      BrokerConfig brokerConfig = new BrokerConfig(brokerSettings(settings));
      broker = storage.controller().isEmpty()
          ? new KafkaBroker(brokerConfig, storage.streamStore(), Time.SYSTEM, meters)
          : new KafkaBroker(brokerConfig, storage.streamStore(), Time.SYSTEM, clusterMetadata(storage.controller().get(),
              brokerConfig), meters);
      started.push(broker);
      LOG.info("broker assembled in {} ms", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - assembling));
      broker.start();
      KafkaBroker served = broker;
      Gauge.builder("tidemark.partition.damaged.ranges", served::damagedRanges)
          .description("Damaged ranges (stored batches that are not valid record batches) found in the partitions led here; "
              + "fetches of them get CORRUPT_MESSAGE, the log names topic, partition and offsets")
          .register(meters);
      KafkaBroker owner = broker;
      admin.attachAccess(httpAccess(httpAuthRequired, config.adminBasicAuthUsers()));
      tableRest = TableRestEndpoint.start(config, settings, storage, new CatalogAccess(
          httpAccess(httpAuthRequired, RestCatalogConfig.from(settings).basicAuthUsers()),
          TableRestEndpoint.tableTopics(owner::topics))).orElse(null);
      if (tableRest != null) {
        started.push(tableRest);
      }
    }
    if (config.has(ServerConfig.Role.REGISTRY)) {
      ClusterSchemaLog clusterLog = broker != null && storage.controller().isPresent()
          ? ClusterSchemaLog.open(broker, storage.controller().get(), SCHEMA_LOG_TIMEOUT_MS) : null;
      SchemaStore schemaLog = clusterLog != null ? clusterLog.store() : schemaLog();
      started.push(clusterLog != null ? clusterLog : schemaLog);
      RegistryConfig registryConfig = RegistryConfig.from(settings);
      SchemaRegistry registry = new SchemaRegistry(registryConfig, schemaLog);
      schemaRegistry = registry;
      started.push(registry);
      registry.start();
      registryHttp = new RegistryHttpServer(registry, registryConfig,
          clusterLog != null ? clusterLog.writeLeader() : WriteLeader.self(),
          httpAccess(httpAuthRequired, registryConfig.basicAuthUsers()));
      started.push(registryHttp);
      registryHttp.start();
      if (clusterLog != null) {
        String kafka = broker.bootstrapServers();
        clusterLog.serving(URI.create((registryConfig.tlsEnabled() ? "https://" : "http://")
            + kafka.substring(0, kafka.lastIndexOf(':')) + ":" + registryHttp.port()), registry);
        LOG.info("schema registry is the {} of {}", clusterLog.writer() ? "writer" : "follower", PartitionSchemaStore.TOPIC);
      }
      LOG.info("schema registry listening on {}:{}", registryConfig.host(), registryHttp.port());
    }
    if (broker != null) {
      startTableTopics(settings);
    }
    admin.attach(storage);
    admin.console().attach(broker, schemaRegistry, storage.controller().orElse(null), tableRestPort().orElse(null));
    // every node reports its load to the controller leader, so that any node's console shows every node's
    storage.controller().ifPresent(link -> link.reportLoadFrom(admin.console().localLoad()::measure));
    state = State.RUNNING;
    LOG.info("node {} is running", config.nodeId());
  }

  /** Table topics: the broker checks table.topic.* configs; with table.enable the node runs them. */
  private void startTableTopics(Settings settings) {
    broker.topicConfigs().validateReservedWith(TableTopicsService::check);
    if (!settings.get(TableServiceConfig.ENABLE)) {
      return;
    }
    // Every broker runs the table topics of the partitions it leads. The control topic opens here or,
    // once another broker leads it, through the Kafka protocol; a partition just created here opens
    // once this broker applied the change, hence the retries.
    TableTopicsService tables = null;
    for (int attempt = 1; tables == null; attempt++) {
      try {
        tables = TableTopicsService.start(broker, config, settings, Optional.ofNullable(schemaRegistry), meters);
      } catch (IllegalStateException e) {
        if (attempt >= INTERNAL_TOPIC_ATTEMPTS) {
          throw e;
        }
        LOG.info("table topics not started yet ({}); retrying", e.getMessage());
        pause(INTERNAL_TOPIC_RETRY_MS);
      }
    }
    started.push(tables);
    admin.attachTables(tables);
  }

  /**
   * Whether the HTTP endpoints require credentials ({@code http.auth.required}; {@code auto}: when
   * the Kafka port authenticates its clients, the ACL authorizer is on, or the HTTPS endpoints require
   * client certificates: an operator who asked for those wants no anonymous HTTP endpoint either).
   */
  static boolean httpAuthRequired(Settings settings) {
    boolean secured = new SecurityConfig(settings, "0.0.0.0", 0, "localhost", 0).authenticatesClients()
        || new AuthorizerConfig(settings).enabled
        || "required".equals(ClientCertificates.from(settings).mode());
    return HttpSecurity.authRequired(settings.get(HttpSecurity.AUTH_REQUIRED), secured);
  }

  /**
   * What an HTTP endpoint authenticates and authorizes with: the broker's Kafka users and ACL
   * authorizer on a node running one (the endpoint's own users besides); before the broker runs, or
   * without one, only the endpoint's own users and no ACLs.
   */
  private HttpAccess httpAccess(boolean required, Map<String, String> endpointUsers) {
    KafkaBroker b = broker;
    return b == null ? new HttpAccess(required, endpointUsers, () -> null, Authorizer.off(), Optional.empty(),
            Optional::empty, httpClientCertificates)
        : new HttpAccess(required, endpointUsers, b::passwordCheck, b.authorizer(), Optional.of(tokenIssuer),
            b::tokenValidator, httpClientCertificates);
  }

  /** The started admin endpoint, or its start's own exception. */
  private static AdminServer awaitStart(CompletableFuture<AdminServer> starting) {
    try {
      return starting.join();
    } catch (java.util.concurrent.CompletionException e) {
      if (e.getCause() instanceof RuntimeException cause) {
        throw cause;
      }
      if (e.getCause() instanceof Error cause) {
        throw cause;
      }
      throw e;
    }
  }

  private static void pause(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted during start", e);
    }
  }

  /**
   * Where the registry keeps its log: the internal topic {@code _schemas} on this node's broker, so
   * schemas live in the broker's own log and object storage like any topic; a registry-only node
   * (no broker role) keeps it in a stream of the storage engine.
   */
  private SchemaStore schemaLog() {
    if (broker == null) {
      return StreamSchemaStore.open(storage, config.dataDir().resolve("registry"));
    }
    try {
      return new PartitionSchemaStore(broker.internalPartition(PartitionSchemaStore.TOPIC).get(1, TimeUnit.MINUTES),
          Time.SYSTEM, SCHEMA_LOG_TIMEOUT_MS);
    } catch (ExecutionException e) {
      throw new IllegalStateException("cannot open the registry's topic " + PartitionSchemaStore.TOPIC + ": "
          + e.getCause().getMessage(), e.getCause());
    } catch (TimeoutException e) {
      throw new IllegalStateException("opening the registry's topic " + PartitionSchemaStore.TOPIC + " timed out", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while opening " + PartitionSchemaStore.TOPIC, e);
    }
  }

  /**
   * The broker's view of the cluster from the controller: this node's replica of the metadata log
   * (the local voter's, or the non-voting listener's on a node without the controller role).
   */
  private ClusterMetadata clusterMetadata(ControllerLink controller, BrokerConfig brokerConfig) {
    if (brokerConfig.nodeId != config.nodeId()) {
      throw new ConfigException(BrokerConfig.NODE_ID.name(), "must equal node.id (" + config.nodeId()
          + ") with a controller quorum: the broker registers under node.id");
    }
    return new ControllerClusterMetadata(controller.client(), controller.replica(), controller.self(),
        brokerConfig.clusterId, controller.localNode(), controller::leaseLost);
  }

  /** The broker's own keys default from the server's: its node id, and its topic registry under data.dir. */
  private Settings brokerSettings(Settings settings) {
    Settings result = settings;
    if (!settings.contains(BrokerConfig.NODE_ID)) {
      result = result.with(BrokerConfig.NODE_ID.name(), Integer.toString(config.nodeId()));
    }
    if (!settings.contains(BrokerConfig.DATA_DIR)) {
      result = result.with(BrokerConfig.DATA_DIR.name(), config.dataDir().resolve("kafka").toString());
    }
    return result;
  }

  private void bindJvmMetrics() {
    NodeMeters.bindJvm(meters, started::push);
  }

  private Health health() {
    return new Health() {
      @Override
      public boolean live() {
        return state == State.STARTING || state == State.RUNNING;
      }

      @Override
      public Map<String, Boolean> readiness() {
        Map<String, Boolean> checks = new LinkedHashMap<>();
        checks.put("process.running", state == State.RUNNING);
        StorageNode node = storage;
        if (node != null) {
          checks.putAll(node.readiness());
        } else {
          checks.put("storage.recovered", false);
        }
        return checks;
      }

      @Override
      public Map<String, Boolean> components() {
        Map<String, Boolean> checks = new LinkedHashMap<>();
        StorageNode node = storage;
        if (node != null) {
          checks.putAll(node.liveness());
        }
        KafkaBroker b = broker;
        if (b != null) {
          checks.put("broker.partitions", b.failedPartitions().isEmpty());
        }
        return checks;
      }
    };
  }

  /**
   * Completes, once, with the reason when this node must be closed and started again while the
   * process lives ({@link NodeSupervisor} does): its epoch was fenced and failed over (see
   * {@code ControllerLink}), so it serves nothing, or its storage engine failed for good (a WAL I/O
   * error), so its partitions cannot take writes until a new engine recovered the WAL. Never
   * completes for a node without storage.
   */
  public java.util.concurrent.CompletionStage<String> restartNeeded() {
    StorageNode node = storage;
    if (node == null) {
      return new CompletableFuture<>();
    }
    CompletableFuture<String> replaced = node.controller().map(ControllerLink::onReplaced)
        .orElseGet(CompletableFuture::new).toCompletableFuture();
    CompletableFuture<String> failed = node.onFailed().toCompletableFuture();
    return replaced.applyToEither(failed, why -> why);
  }

  public State state() {
    return state;
  }

  public ServerConfig config() {
    return config;
  }

  /** The bound admin port (the configured one, or the one picked for port 0). */
  public int adminPort() {
    return admin.port();
  }

  /** The bound Kafka listener port, when this process plays the broker role. */
  public Optional<Integer> kafkaPort() {
    return Optional.ofNullable(broker).map(KafkaBroker::port);
  }

  /** The bound schema registry port, when this process plays the registry role. */
  public Optional<Integer> registryPort() {
    return Optional.ofNullable(registryHttp).map(RegistryHttpServer::port);
  }

  /** The bound Iceberg REST catalog port, when this process serves it (broker role, table.rest.enable). */
  public Optional<Integer> tableRestPort() {
    return Optional.ofNullable(tableRest).map(TableRestEndpoint::port);
  }

  /** The broker of this process, when it plays the broker role (tests reach its partitions through it). */
  Optional<KafkaBroker> broker() {
    return Optional.ofNullable(broker);
  }

  public PrometheusMeterRegistry meters() {
    return meters;
  }

  /**
   * Graceful stop: stops serving admin requests, then closes the storage engine (which closes
   * every stream and uploads what its WAL holds), then releases metrics.
   */
  @Override
  public void close() {
    synchronized (this) {
      if (state == State.STOPPING || state == State.STOPPED || state == State.FAILED) {
        return;
      }
      state = State.STOPPING;
    }
    LOG.info("stopping node {}", config.nodeId());
    // Requests first (in-flight ones finish against a live engine), then everything else in reverse start order.
    AdminServer endpoint = admin;
    if (endpoint != null && started.remove(endpoint)) {
      closeQuietly(endpoint);
    }
    stopComponents();
    state = State.STOPPED;
    LOG.info("node {} stopped", config.nodeId());
  }

  private void stopComponents() {
    while (!started.isEmpty()) {
      closeQuietly(started.pop());
    }
    meters.close();
  }

  private static void closeQuietly(AutoCloseable component) {
    try {
      component.close();
    } catch (Exception e) {
      LOG.warn("closing {} failed; continuing with the rest", component.getClass().getSimpleName(), e);
    }
  }
}
