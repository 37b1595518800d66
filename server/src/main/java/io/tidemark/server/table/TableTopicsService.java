package io.tidemark.server.table;

import io.micrometer.core.instrument.MeterRegistry;
import io.tidemark.broker.KafkaBroker;
import io.tidemark.broker.produce.ProduceHandler;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.registry.SchemaRegistry;
import io.tidemark.registry.client.SchemaRegistryClient;
import io.tidemark.server.config.ServerConfig;
import io.tidemark.server.storage.MeteredObjectStorage;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.objectstore.ObjectStorage;
import io.tidemark.stream.objectstore.ObjectStorageConfig;
import io.tidemark.stream.objectstore.ObjectStorages;
import io.tidemark.table.config.TableCatalogConfig;
import io.tidemark.table.config.TableServiceConfig;
import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.control.ControlLog;
import io.tidemark.table.control.FollowingControlLog;
import io.tidemark.table.control.KafkaControlLog;
import io.tidemark.table.convert.AvroSchemaSource;
import io.tidemark.table.convert.RegistryAvroSchemas;
import io.tidemark.table.maintenance.MaintenanceConfig;
import io.tidemark.table.node.TableTopicNode;
import io.tidemark.table.node.TableTopicStatus;
import io.tidemark.table.source.PartitionLogSource;
import io.tidemark.table.source.PartitionRecordSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.catalog.Catalog;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the table topics of this node. At start it opens the Iceberg catalog ({@code table.catalog.*}; the embedded default is SQLite under {@code data.dir} with the
 * warehouse in the same object storage as the streams) and the control topic. Then every scan
 * interval it compares the broker's topics with what runs: a topic with
 * {@code table.topic.enable=true} gets its worker (partitions led here) and, by
 * {@link CoordinatorPlacement}, its coordinator; a changed config or partition count restarts them
 * (which also resumes a paused table), a disabled or deleted topic stops. Meters per topic.
 *
 * <p>The server plugs {@link #check} into the broker's topic-config validation whether or not
 * this node runs table topics ({@code table.enable}).
 *
 * <p>Threading: one watcher thread owns the assignments and meters; {@link #status} and
 * {@link #statuses} are read from any thread (admin HTTP, scrapes). Closed by the server before
 * the broker.
 */
public final class TableTopicsService implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(TableTopicsService.class);
  private static final int CONTROL_READ_BYTES = 4 << 20;
  private static final long CONTROL_POLL_MS = 20;
  /** Schemas (by id, parsed) the table topics' registry client keeps. */
  private static final int SCHEMA_CACHE_MAX = 10_000;
  /** How long a read of a remote control log waits for new messages (a fetch returns as soon as one arrives). */
  private static final long CONTROL_REMOTE_POLL_MS = 200;
  private static final long CONTROL_TRIM_INTERVAL_MS = 60_000;

  private final KafkaBroker broker;
  private final TableServiceConfig config;
  private final ObjectStorage storage;
  private final Catalog catalog;
  private final TableTopicNode node;
  private final ControlLog control;
  private final CoordinatorPlacement placement;
  private final TableMeters meters;
  private final ScheduledExecutorService watcher;
  private final Set<String> invalidLogged = new HashSet<>();

  private TableTopicsService(KafkaBroker broker, TableServiceConfig config, ObjectStorage storage, Catalog catalog,
      TableTopicNode node, ControlLog control, MeterRegistry registry) {
    this.control = control;
    this.broker = broker;
    this.config = config;
    this.storage = storage;
    this.catalog = catalog;
    this.node = node;
    this.placement = new CoordinatorPlacement(broker);
    this.meters = new TableMeters(registry, node::status);
    this.watcher = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("table-topics-watch").daemon().factory());
  }

  /** The config rule the broker applies to reserved table-topic names: null when valid, else the reason. */
  public static String check(Map<String, String> tableConfigs) {
    try {
      TableTopicConfig.parse(tableConfigs);
      return null;
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
  }

  /**
   * Starts the table topics on {@code broker} (already started).
   *
   * @param schemaRegistry this process's schema registry, read in-process by {@code by_schema_id} and
   *     {@code by_latest_schema} (so its authentication and TLS do not stand in between); empty without one
   */
  public static TableTopicsService start(KafkaBroker broker, ServerConfig server, Settings settings,
      Optional<SchemaRegistry> schemaRegistry, MeterRegistry registry) {
    TableServiceConfig config = TableServiceConfig.from(settings);
    Settings storageSettings = settings.contains(ObjectStorageConfig.LOCAL_PATH) ? settings
        : settings.with(ObjectStorageConfig.LOCAL_PATH.name(), server.dataDir().resolve("objects").toString());
    ObjectStorage storage = MeteredObjectStorage.forTables(ObjectStorages.create(storageSettings), registry);
    ControlLog control = null;
    try {
      control = openControlLog(broker); // first: it is what a start retries on
      Catalog catalog = TableCatalogConfig.parse(settings.asMap()).open(server.dataDir(),
          TableRestEndpoint.warehouse(storageSettings, server.dataDir(), storage));
      AvroSchemaSource schemas = schemaRegistry.map(r -> (AvroSchemaSource) new RegistryAvroSchemas(
          SchemaRegistryClient.inProcess(r.lookup(), SCHEMA_CACHE_MAX))).orElse(null);
      TableTopicNode node = new TableTopicNode(new TableTopicNode.Settings(server.nodeId(), config.targetFileBytes(),
          config.maxBytesPerPartitionRound(), config.roundBudgetMs(), config.replyWaitMs(), CONTROL_POLL_MS, CONTROL_TRIM_INTERVAL_MS,
          config.workerThreads()),
          MaintenanceConfig.from(settings), catalog, schemas, control, System::currentTimeMillis);
      TableTopicsService service = new TableTopicsService(broker, config, storage, catalog, node, control, registry);
      node.start();
      service.watcher.scheduleWithFixedDelay(service::scan, 0, config.scanIntervalMs(), TimeUnit.MILLISECONDS);
      log.info("table topics running (catalog {}, control topic {})", settings.get(TableServiceConfig.CATALOG_TYPE),
          ControlLog.TOPIC);
      return service;
    } catch (Exception e) {
      if (control instanceof FollowingControlLog following) {
        following.close();
      }
      storage.close();
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new IllegalStateException("table topics failed to start: " + e.getMessage(), e);
    }
  }

  /**
   * The control log: the partition itself while this broker leads {@value ControlLog#TOPIC}, else a
   * Kafka client to whichever broker leads it, chosen again at every call so that it follows the
   * partition when it moves ({@link FollowingControlLog}). Creates the topic when no broker has yet.
   */
  private static ControlLog openControlLog(KafkaBroker broker) throws Exception {
    OptionalInt leader = broker.leaderOf(ControlLog.TOPIC, 0);
    if (leader.isPresent() && leader.getAsInt() != broker.nodeId()) {
      log.info("{} is led by node {}: this node's table topics reach it through the Kafka protocol while it is", ControlLog.TOPIC,
          leader.getAsInt());
    } else {
      broker.internalPartition(ControlLog.TOPIC).get(1, TimeUnit.MINUTES);
    }
    TopicPartition control = new TopicPartition(ControlLog.TOPIC, 0);
    return new FollowingControlLog(() -> broker.partitionLog(control),
        () -> new KafkaControlLog(broker.bootstrapServers(), broker.internalClientConfigs(), ProduceHandler.INTERNAL_CLIENT_PREFIX + "-table-control-"
            + broker.nodeId(), CONTROL_READ_BYTES, Duration.ofMillis(CONTROL_REMOTE_POLL_MS), Duration.ofSeconds(30)),
        System::currentTimeMillis, CONTROL_READ_BYTES);
  }

  public List<TableTopicStatus> statuses() {
    List<TableTopicStatus> out = new ArrayList<>();
    for (String topic : new TreeSet<>(node.topics())) {
      node.status(topic).ifPresent(out::add);
    }
    return out;
  }

  public Optional<TableTopicStatus> status(String topic) {
    return node.status(topic);
  }

  /**
   * A table topic as the shared catalog shows it to any node: its table, the time and id of its last
   * Tidemark commit, the next offset of each partition that commit holds, and the rows of the table and
   * of its dead-letter table {@code <table>_dlq} (null where a table or snapshot does not exist).
   */
  public record CatalogView(String table, Long lastCommitMs, String lastCommitId, Map<Integer, Long> committedOffsets,
      Long rows, Long deadLetterRows) {}

  /** Whether {@code topicConfigs} enable a table topic (invalid table configs: no). */
  public static boolean isTableTopic(Map<String, String> topicConfigs) {
    try {
      return TableTopicConfig.parse(topicConfigs).enabled();
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  /** Dead-letter rows of {@code topic} back through conversion; empty when it is not a table topic here. */
  public Optional<io.tidemark.table.sync.DeadLetterReprocessor.Result> reprocessDeadLetters(String topic, int maxRows) {
    return node.reprocessDeadLetters(topic, maxRows);
  }

  /**
   * What the catalog holds of table topic {@code topic} (with its topic configs), read by any node
   * whether or not it runs the topic (the console's cluster-wide table page).
   */
  public CatalogView catalogView(String topic, Map<String, String> topicConfigs) {
    TableTopicConfig config = TableTopicConfig.parse(topicConfigs);
    String name = config.namespace() + "." + config.tableNameFor(topic);
    org.apache.iceberg.catalog.TableIdentifier id = org.apache.iceberg.catalog.TableIdentifier.parse(name);
    Long lastCommitMs = null;
    String commitId = null;
    Map<Integer, Long> offsets = Map.of();
    try {
      if (catalog.tableExists(id)) {
        org.apache.iceberg.Table table = catalog.loadTable(id);
        io.tidemark.table.commit.TableCommitter.Committed committed = new io.tidemark.table.commit.TableCommitter(table)
            .committed();
        offsets = committed.nextOffsets();
        commitId = committed.commitId().orElse(null);
        lastCommitMs = table.currentSnapshot() == null ? null : table.currentSnapshot().timestampMillis();
      }
    } catch (RuntimeException e) {
      log.debug("reading the table of {} failed: {}", topic, e.toString());
    }
    return new CatalogView(name, lastCommitMs, commitId, offsets, totalRecords(id),
        totalRecords(org.apache.iceberg.catalog.TableIdentifier.of(id.namespace(), id.name() + "_dlq")));
  }

  private Long totalRecords(org.apache.iceberg.catalog.TableIdentifier id) {
    try {
      if (!catalog.tableExists(id)) {
        return null;
      }
      org.apache.iceberg.Snapshot current = catalog.loadTable(id).currentSnapshot();
      if (current == null) {
        return 0L;
      }
      String total = current.summary().get(org.apache.iceberg.SnapshotSummary.TOTAL_RECORDS_PROP);
      return total == null ? null : Long.parseLong(total);
    } catch (RuntimeException e) {
      log.debug("reading the snapshot of {} failed: {}", id, e.toString());
      return null;
    }
  }

  private void scan() {
    try {
      Set<String> running = new HashSet<>();
      for (TopicInfo topic : broker.topics()) {
        if (!topic.internal() && applyTopic(topic)) {
          running.add(topic.name());
        }
      }
      for (String topic : node.topics()) {
        if (!running.contains(topic)) {
          node.remove(topic);
          meters.unbind(topic);
        }
      }
    } catch (RuntimeException e) {
      log.warn("table topics scan failed; retrying in {} ms", config.scanIntervalMs(), e);
    }
  }

  /** Runs {@code topic} as a table topic if enabled; true when it runs. */
  private boolean applyTopic(TopicInfo topic) {
    TableTopicConfig tableConfig;
    try {
      tableConfig = TableTopicConfig.parse(topic.configs());
    } catch (IllegalArgumentException e) {
      if (invalidLogged.add(topic.name() + e.getMessage())) {
        log.warn("{}: table topic configs are invalid, table topic not run: {}", topic.name(), e.getMessage());
      }
      return false;
    }
    if (!tableConfig.enabled()) {
      return false;
    }
    Map<Integer, PartitionRecordSource> led = new TreeMap<>();
    for (TopicInfo.PartitionInfo p : topic.partitions()) {
      broker.partitionLog(new TopicPartition(topic.name(), p.partition()))
          .ifPresent(partitionLog -> led.put(p.partition(), new PartitionLogSource(partitionLog)));
    }
    node.apply(topic.name(), new TableTopicNode.Assignment(topic.id().toString(), tableConfig, led,
        placement.coordinatesHere(topic), placement.workerNodes(topic)));
    meters.bind(topic.name(), led.keySet());
    return true;
  }

  @Override
  public void close() {
    watcher.shutdownNow();
    try {
      watcher.awaitTermination(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    meters.unbindAll();
    node.close();
    if (control instanceof FollowingControlLog following) {
      following.close();
    }
    if (catalog instanceof AutoCloseable closeable) {
      try {
        closeable.close();
      } catch (Exception e) {
        log.warn("closing the Iceberg catalog failed", e);
      }
    }
    storage.close();
  }
}
