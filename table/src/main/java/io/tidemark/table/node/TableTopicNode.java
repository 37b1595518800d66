package io.tidemark.table.node;

import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.control.ControlLog;
import io.tidemark.table.control.ControlMessage;
import io.tidemark.table.control.ControlMessage.CommitStart;
import io.tidemark.table.control.ControlMessage.FilesWritten;
import io.tidemark.table.convert.AvroSchemaSource;
import io.tidemark.table.coordinator.TableCoordinator;
import io.tidemark.table.maintenance.MaintenanceConfig;
import io.tidemark.table.maintenance.TableMaintenance;
import io.tidemark.table.source.PartitionRecordSource;
import io.tidemark.table.sync.TableSync;
import io.tidemark.table.worker.TableWorker;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.iceberg.catalog.Catalog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The table topics of this broker: per enabled table topic, a {@link TableWorker} over the
 * partitions this broker leads and, where the placement put it, the topic's
 * {@link TableCoordinator}; and the reader of the control topic, which hands every message to its
 * topic's coordinator or worker. Next to each coordinator runs the table's built-in
 * {@link TableMaintenance} (its own owner thread, so maintenance never delays a commit round). A changed assignment (config, partitions, placement) replaces the
 * topic's worker and coordinator, so a partition paused on a bad record resumes on a config change.
 *
 * <p>Threading: {@link #apply}, {@link #remove} and {@link #close} are called by one owner thread
 * (the server's topic watcher); the control reader has its own thread; {@link #status} may be
 * called from any thread. The control topic is trimmed below what every coordinator here still
 * needs.
 */
public final class TableTopicNode implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(TableTopicNode.class);

  /**
   * @param roundBudgetMs how long a worker may spend preparing one round before the partitions it
   *     did not finish join the next round
   * @param replyWaitMs how long the coordinator waits for the workers' answers
   * @param trimIntervalMs how often the control topic is trimmed below what the coordinators here still need
   */
  public record Settings(int nodeId, long targetFileBytes, int maxBytesPerPartitionRound, long roundBudgetMs,
      long replyWaitMs, long controlPollMs, long trimIntervalMs, int workerThreads) {}

  /**
   * What this node runs for one table topic: the partitions it leads, whether it coordinates, and
   * which nodes' workers the coordinator waits for. {@code topicId} tells a re-created topic apart.
   * Two assignments are the same only with equal sources too: a partition closed and opened again
   * here (e.g. after the broker lost and regained its lease) is a new log, and a worker left reading
   * the closed one would never see another record.
   */
  public record Assignment(String topicId, TableTopicConfig config, Map<Integer, PartitionRecordSource> ledPartitions,
      boolean coordinator, Set<Integer> workerNodes) {

    boolean sameAs(Assignment other) {
      return topicId.equals(other.topicId) && config.equals(other.config) && coordinator == other.coordinator
          && ledPartitions.equals(other.ledPartitions) && workerNodes.equals(other.workerNodes);
    }
  }

  private record Handle(Assignment assignment, TableWorker worker, TableCoordinator coordinator,
      TableMaintenance maintenance, String table, long startedMs) {}

  private final Settings settings;
  private final MaintenanceConfig maintenanceBounds;
  private final Catalog catalog;
  private final AvroSchemaSource schemas;
  private final ControlLog control;
  private final LongSupplier clockMs;
  private final Map<String, Handle> handles = new ConcurrentHashMap<>();
  private final ScheduledExecutorService reader;
  private long position;
  private long positionAtLastTrim;
  private long lastTrimMs;

  public TableTopicNode(Settings settings, Catalog catalog, AvroSchemaSource schemas, ControlLog control, LongSupplier clockMs) {
    this(settings, MaintenanceConfig.defaults(), catalog, schemas, control, clockMs);
  }

  /** @param maintenanceBounds how often and how much the tables coordinated here are maintained */
  public TableTopicNode(Settings settings, MaintenanceConfig maintenanceBounds, Catalog catalog, AvroSchemaSource schemas,
      ControlLog control, LongSupplier clockMs) {
    this.settings = settings;
    this.maintenanceBounds = maintenanceBounds;
    this.catalog = catalog;
    this.schemas = schemas;
    this.control = control;
    this.clockMs = clockMs;
    this.reader = newOwnerThread("table-control-reader");
  }

  /**
   * Starts reading the control topic from its current end (older messages are the coordinators' to
   * recover). The end is looked up by the reader, so a control topic that cannot be reached yet (its
   * broker is down) delays the table topics here, not the node's start.
   */
  public void start() {
    position = -1;
    lastTrimMs = clockMs.getAsLong();
    reader.scheduleWithFixedDelay(this::poll, 0, settings.controlPollMs(), TimeUnit.MILLISECONDS);
  }

  /** Runs the topic as assigned; a changed assignment restarts its worker and coordinator. */
  public void apply(String topic, Assignment assignment) {
    Handle existing = handles.get(topic);
    if (existing != null && existing.assignment().sameAs(assignment)) {
      return;
    }
    if (existing != null) {
      log.info("{}: table topic assignment changed; restarting its worker and coordinator", topic);
      remove(topic);
    }
    TableTopicConfig config = assignment.config();
    TableWorker worker = assignment.ledPartitions().isEmpty() ? null
        : new TableWorker(topic, settings.nodeId(), assignment.ledPartitions(), control, settings.roundBudgetMs(), clockMs,
            settings.workerThreads(),
            (sources, ids) -> new TableSync(topic, config, catalog, sources, schemas, ids,
                settings.maxBytesPerPartitionRound(), settings.targetFileBytes()));
    TableCoordinator coordinator = null;
    TableMaintenance maintenance = null;
    if (assignment.coordinator()) {
      TableSync tableSide = new TableSync(topic, config, catalog, Map.of(), schemas, () -> "",
          settings.maxBytesPerPartitionRound(), settings.targetFileBytes());
      coordinator = new TableCoordinator(topic, tableSide, control, assignment::workerNodes,
          new TableCoordinator.Timing(config.commitIntervalMs(), settings.replyWaitMs()), () -> UUID.randomUUID().toString(),
          clockMs, newOwnerThread("table-coordinator-" + topic));
      TableCoordinator committer = coordinator;
      maintenance = new TableMaintenance(topic, catalog, tableSide.tableIdentifier(), config.maintenance(), maintenanceBounds,
          change -> awaitCommit(committer.betweenCommits(change)), clockMs, newOwnerThread("table-maintenance-" + topic));
      coordinator.afterEachCommit(maintenance::committed);
    }
    String table = config.namespace() + "." + config.tableNameFor(topic);
    handles.put(topic, new Handle(assignment, worker, coordinator, maintenance, table, clockMs.getAsLong()));
    if (coordinator != null) {
      coordinator.start();
      maintenance.start();
    }
    log.info("{}: table topic running into {} ({} partitions led here{})", topic, table, assignment.ledPartitions().size(),
        coordinator != null ? ", coordinator here" : "");
  }

  /** Stops the topic's worker and coordinator here (a round being committed finishes first). */
  public void remove(String topic) {
    Handle h = handles.remove(topic);
    if (h == null) {
      return;
    }
    if (h.maintenance() != null) {
      h.maintenance().close();
    }
    if (h.coordinator() != null) {
      h.coordinator().close();
    }
    if (h.worker() != null) {
      h.worker().close();
    }
    log.info("{}: table topic stopped on this node", topic);
  }

  /** The table maintenance of {@code topic} when this node coordinates it (e.g. to run it now). */
  public Optional<TableMaintenance> maintenance(String topic) {
    Handle h = handles.get(topic);
    return h == null ? Optional.empty() : Optional.ofNullable(h.maintenance());
  }

  public Set<String> topics() {
    return Set.copyOf(handles.keySet());
  }

  /** The topic's status as seen from this node. */
  public Optional<TableTopicStatus> status(String topic) {
    Handle h = handles.get(topic);
    return h == null ? Optional.empty() : Optional.of(StatusView.of(topic, h.table(), h.assignment().config(), h.worker(),
        h.coordinator(), h.maintenance(), h.startedMs(), clockMs.getAsLong()));
  }

  /**
   * Sends the dead-letter rows of {@code topic}'s table (at most {@code maxRows}) back through conversion with the
   * topic's current settings ({@link io.tidemark.table.sync.DeadLetterReprocessor}); empty when the topic is not a
   * table topic here. Runs on the caller's thread, one run per topic at a time on this node.
   */
  public Optional<io.tidemark.table.sync.DeadLetterReprocessor.Result> reprocessDeadLetters(String topic, int maxRows) {
    Handle h = handles.get(topic);
    if (h == null) {
      return Optional.empty();
    }
    if (!reprocessing.add(topic)) {
      throw new IllegalStateException("dead letters of " + topic + " are being reprocessed already; retry when it ends");
    }
    try {
      TableSync offline = new TableSync(topic, h.assignment().config(), catalog, Map.of(), schemas, () -> "",
          settings.maxBytesPerPartitionRound(), settings.targetFileBytes());
      // an upsert table's dead letters are checked against the later records of their partitions led here
      return Optional.of(new io.tidemark.table.sync.DeadLetterReprocessor(offline, catalog,
          () -> "reprocess-" + UUID.randomUUID(), h.assignment().ledPartitions(),
          io.tidemark.table.sync.DeadLetterReprocessor.DEFAULT_MAX_SCAN_BYTES).run(maxRows));
    } finally {
      reprocessing.remove(topic);
    }
  }

  private final Set<String> reprocessing = ConcurrentHashMap.newKeySet();

  private void poll() {
    try {
      if (position < 0) {
        position = control.endOffset();
        positionAtLastTrim = position;
      }
      // read until a page brings nothing new (a remote control log waits a little for new messages)
      while (true) {
        ControlLog.Page page = control.read(position).get(60, TimeUnit.SECONDS);
        page.entries().forEach(e -> dispatch(e.message()));
        if (page.nextOffset() <= position) {
          break;
        }
        position = page.nextOffset();
      }
      trimIfDue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      log.warn("reading the control topic {} at offset {} failed; retrying", ControlLog.TOPIC, position, e);
    }
  }

  private void dispatch(ControlMessage message) {
    Handle h = handles.get(message.topic());
    if (h == null) {
      return;
    }
    if (message instanceof CommitStart start && h.worker() != null) {
      h.worker().onStart(start);
    } else if (message instanceof FilesWritten written && h.coordinator() != null) {
      h.coordinator().onWritten(written);
    }
  }

  private void trimIfDue() {
    long now = clockMs.getAsLong();
    if (now - lastTrimMs < settings.trimIntervalMs() || handles.isEmpty()) {
      return;
    }
    lastTrimMs = now;
    // Trim only below where this reader was one interval ago: the readers of other brokers (and the
    // coordinators there) get a whole interval to read what this one has read.
    long before = Math.min(positionAtLastTrim, control.endOffset());
    positionAtLastTrim = position;
    List<Long> needs = new ArrayList<>();
    for (Handle h : handles.values()) {
      if (h.coordinator() != null) {
        needs.add(h.coordinator().trimmableBefore());
      }
    }
    for (long n : needs) {
      if (n < 0) {
        return; // a coordinator still recovering needs the whole log
      }
      before = Math.min(before, n);
    }
    if (before > control.startOffset()) {
      control.trimBefore(before);
    }
  }

  /** Waits for a maintenance commit run by the coordinator and rethrows its own exception. */
  private static void awaitCommit(java.util.concurrent.CompletableFuture<Void> done) throws InterruptedException {
    try {
      done.get();
    } catch (java.util.concurrent.ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(e.getCause());
    }
  }

  /** A single-thread scheduler whose delayed tasks are dropped on shutdown. */
  private static ScheduledExecutorService newOwnerThread(String name) {
    ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, Thread.ofPlatform().name(name).daemon().factory());
    executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    executor.setRemoveOnCancelPolicy(true);
    return executor;
  }

  @Override
  public void close() {
    for (String topic : topics()) {
      remove(topic);
    }
    reader.shutdownNow();
  }
}
