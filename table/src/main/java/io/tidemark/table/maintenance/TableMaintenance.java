package io.tidemark.table.maintenance;

import io.tidemark.table.commit.TableCommitter;
import io.tidemark.table.config.TableTopicConfig;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.io.FileInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Built-in maintenance of one table topic's table, run next to its coordinator: every
 * {@code table.maintenance.interval.ms} one run does, in order and within the run's budget of
 * bytes, files and time ({@link MaintenanceConfig}):
 *
 * <ol>
 *   <li>compaction: small data files of each table partition bin-packed to the target size, and
 *       files with enough deletes rewritten with the deletes applied ({@link Compaction});
 *   <li>removal of delete files that no longer apply to any data file ({@link DanglingDeletes});
 *   <li>manifest rewrite, clustered by partition, when the snapshot has more than
 *       {@value #MANIFESTS_BEFORE_REWRITE} data manifests;
 *   <li>snapshot expiry (older than the topic's age, keeping the newest ones and always the newest
 *       snapshot carrying the topic's committed offsets, which the commit cycle resumes from);
 *   <li>orphan file removal (unreferenced files older than the safety age; {@link OrphanFiles}).
 * </ol>
 *
 * <p>Every change is an ordinary Iceberg commit with optimistic concurrency, handed to the
 * {@link CommitGate} (on a node: the coordinator's thread, between two rounds' commits, so the two
 * never race each other to the catalog); the commit cycle never waits for a rewrite. A maintenance commit that loses to a concurrent commit (validation fails,
 * or Iceberg's retries run out) changes nothing and is counted as a conflict; that step stops for
 * this run and is tried again at the next. A commit with an unknown outcome ends the run without
 * deleting what it wrote (orphan removal takes it later if it did not land).
 *
 * <p>States: WAITING ⇄ RUNNING; any → STOPPED; DISABLED when the topic turns it off. Threading:
 * everything runs on the given single-thread scheduler (the owner); {@link #report()} may be read
 * from any thread; {@link #runNow()} hands a run to the owner and waits for it.
 */
public final class TableMaintenance implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(TableMaintenance.class);
  /** Snapshot summary key naming the maintenance step that wrote the snapshot. */
  public static final String SUMMARY_OPERATION = "tidemark.maintenance";
  static final int MANIFESTS_BEFORE_REWRITE = 16;
  private static final long MANIFEST_SMALL_BYTES = 8L << 20;
  private static final long CLOSE_TIMEOUT_MS = 60_000;
  /** Least time from the end of one run to the start of a run triggered by delete files. */
  public static final long EARLY_RUN_MIN_GAP_MS = 5_000;

  private final String topic;
  private final Catalog catalog;
  private final TableIdentifier id;
  private final TableTopicConfig.Maintenance settings;
  private final MaintenanceConfig bounds;
  private final CommitGate gate;
  private final LongSupplier clockMs;
  private final ScheduledExecutorService owner;
  private final AtomicLong fileSeq = new AtomicLong();
  private volatile MaintenanceReport report;
  private boolean stopped;
  /** Set by {@link #close}: a run in progress starts no further step or compaction group. */
  private volatile boolean closing;
  /** When the last run ended (at first: when this maintenance was created). */
  private volatile long lastRunEndedMs;
  /** A run triggered by delete files is queued on the owner and has not started yet. */
  private final AtomicBoolean earlyRunQueued = new AtomicBoolean();

  /** Maintenance committing on its own thread ({@link CommitGate#direct()}). */
  public TableMaintenance(String topic, Catalog catalog, TableIdentifier id, TableTopicConfig.Maintenance settings,
      MaintenanceConfig bounds, LongSupplier clockMs, ScheduledExecutorService owner) {
    this(topic, catalog, id, settings, bounds, CommitGate.direct(), clockMs, owner);
  }

  /**
   * @param gate where the commits run (next to the commit cycle on a node)
   * @param owner single-thread scheduler, owned (shut down) by this maintenance
   */
  public TableMaintenance(String topic, Catalog catalog, TableIdentifier id, TableTopicConfig.Maintenance settings,
      MaintenanceConfig bounds, CommitGate gate, LongSupplier clockMs, ScheduledExecutorService owner) {
    this.gate = gate;
    this.topic = topic;
    this.catalog = catalog;
    this.id = id;
    this.settings = settings;
    this.bounds = bounds;
    this.clockMs = clockMs;
    this.owner = owner;
    this.report = MaintenanceReport.initial(settings.enabled() ? "WAITING" : "DISABLED");
    this.lastRunEndedMs = clockMs.getAsLong();
  }

  /** Schedules the runs: the first one interval from now (a starting coordinator commits first). */
  public void start() {
    if (settings.enabled()) {
      owner.scheduleWithFixedDelay(() -> runGuarded(false), bounds.intervalMs(), bounds.intervalMs(), TimeUnit.MILLISECONDS);
    }
  }

  public MaintenanceReport report() {
    return report;
  }

  /**
   * Told after each commit of the table's rounds (any thread; cheap): when {@code committed} leaves at
   * least {@link MaintenanceConfig#deleteFilesTrigger()} delete files, a run starts now instead of at
   * the interval, unless one is queued or the last ended less than {@value #EARLY_RUN_MIN_GAP_MS} ms
   * ago. Without it an upsert table committed every second gathers one equality delete file per
   * partition per round until the next run, and every reader applies each of them to every older
   * data file: a scan's cost grows with the square of the rounds since the last run.
   */
  public void committed(Snapshot committed) {
    int trigger = bounds.deleteFilesTrigger();
    if (!settings.enabled() || trigger <= 0 || committed == null || closing) {
      return;
    }
    long deleteFiles = count(committed, SnapshotSummary.TOTAL_DELETE_FILES_PROP);
    if (deleteFiles < trigger || clockMs.getAsLong() - lastRunEndedMs < EARLY_RUN_MIN_GAP_MS
        || !earlyRunQueued.compareAndSet(false, true)) {
      return;
    }
    try {
      owner.execute(() -> {
        earlyRunQueued.set(false);
        if (clockMs.getAsLong() - lastRunEndedMs >= EARLY_RUN_MIN_GAP_MS) {
          log.info("{}: {} delete files after a commit (trigger {}); compaction runs now", topic, deleteFiles, trigger);
          runGuarded(true);
        }
      });
    } catch (RejectedExecutionException closed) {
      earlyRunQueued.set(false);
    }
  }

  /** Runs once now on the owner thread (whether or not the topic enables maintenance) and returns the report after it. */
  public MaintenanceReport runNow() throws InterruptedException {
    Future<?> done = owner.submit(() -> runGuarded(false));
    try {
      done.get();
    } catch (ExecutionException e) {
      throw new IllegalStateException("maintenance run of " + topic + " failed", e.getCause());
    }
    return report;
  }

  /** @param deletesOnly a run started by delete files: no snapshot expiry or orphan removal (a listing of the table) */
  private void runGuarded(boolean deletesOnly) {
    if (stopped) {
      return;
    }
    long started = clockMs.getAsLong();
    MaintenanceReport.RunResult r = new MaintenanceReport.RunResult();
    report = report.withState("RUNNING");
    try {
      run(r, started + bounds.maxDurationMs(), deletesOnly);
    } catch (RuntimeException e) {
      log.warn("{}: maintenance run failed; the next run is in {} ms", topic, bounds.intervalMs(), e);
      r.error = e.toString();
    }
    long ended = clockMs.getAsLong();
    lastRunEndedMs = ended;
    report = report.plus(r, started, ended - started, stopped ? "STOPPED" : settings.enabled() ? "WAITING" : "DISABLED");
    log.info("{}: maintenance run took {} ms: {}", topic, ended - started, r.summary());
  }

  private void run(MaintenanceReport.RunResult r, long deadlineMs, boolean deletesOnly) {
    if (!catalog.tableExists(id)) {
      r.skipped.append("table not created yet");
      return;
    }
    Table table = catalog.loadTable(id);
    if (table.currentSnapshot() == null) {
      r.skipped.append("table has no snapshot yet");
      return;
    }
    compact(table, r, deadlineMs);
    if (goOn(deadlineMs)) {
      removeDanglingDeletes(table, r);
    }
    if (goOn(deadlineMs)) {
      rewriteManifests(table, r);
    }
    if (deletesOnly) {
      r.skipped.append("started by delete files: no snapshot expiry or orphan removal");
    } else {
      expireAndRemoveOrphans(table, r, deadlineMs);
    }
    table.refresh();
    Snapshot current = table.currentSnapshot();
    if (current != null) {
      r.liveDataFiles = count(current, SnapshotSummary.TOTAL_DATA_FILES_PROP);
      r.liveDeleteFiles = count(current, SnapshotSummary.TOTAL_DELETE_FILES_PROP);
    }
  }

  /** The last steps of a run at the interval. */
  private void expireAndRemoveOrphans(Table table, MaintenanceReport.RunResult r, long deadlineMs) {
    if (settings.expireSnapshots() && goOn(deadlineMs)) {
      expireSnapshots(table, r);
    }
    if (goOn(deadlineMs)) {
      removeOrphans(table, r);
    } else {
      r.skipped.append(closing ? "stopped before orphan removal" : "time budget spent before orphan removal");
    }
  }

  /** Whether a run may start its next step or group: time left, and not being closed. */
  private boolean goOn(long deadlineMs) {
    return !closing && clockMs.getAsLong() < deadlineMs;
  }

  private static long count(Snapshot s, String prop) {
    String v = s.summary().get(prop);
    return v == null ? -1 : Long.parseLong(v);
  }

  private void compact(Table table, MaintenanceReport.RunResult r, long deadlineMs) {
    table.refresh();
    Snapshot base = table.currentSnapshot();
    List<Compaction.Bin> bins = Compaction.plan(table, base, settings.targetFileBytes(), bounds.minInputFiles(),
        bounds.maxBytesPerRun(), bounds.maxFilesPerRun());
    for (Compaction.Bin bin : bins) {
      if (!goOn(deadlineMs)) {
        r.skipped.append(closing ? "stopped" : "time budget spent").append(" with ").append(bins.size())
            .append(" bins planned; ");
        return;
      }
      Compaction.Rewritten out = Compaction.rewrite(table, bin, settings.targetFileBytes(),
          "compact-" + clockMs.getAsLong() + "-" + fileSeq.incrementAndGet());
      if (!commitOrDiscard(table, "compaction", out.added(), () -> Compaction.commit(table, base, out), r)) {
        return;
      }
      r.dataFilesRewritten += out.removed().size();
      r.dataFilesWritten += out.added().size();
      r.bytesRewritten += out.bytesRead();
    }
  }

  private void removeDanglingDeletes(Table table, MaintenanceReport.RunResult r) {
    table.refresh();
    Snapshot base = table.currentSnapshot();
    List<DeleteFile> dangling = DanglingDeletes.find(table, base);
    if (dangling.isEmpty()) {
      return;
    }
    if (commitOrDiscard(table, "delete-file removal", List.of(), () -> DanglingDeletes.remove(table, base, dangling), r)) {
      r.deleteFilesRemoved += dangling.size();
    }
  }

  private void rewriteManifests(Table table, MaintenanceReport.RunResult r) {
    table.refresh();
    List<ManifestFile> manifests = table.currentSnapshot().dataManifests(table.io());
    if (manifests.size() <= MANIFESTS_BEFORE_REWRITE) {
      return;
    }
    long small = manifests.stream().filter(m -> m.length() < MANIFEST_SMALL_BYTES).count();
    if (small < 2) {
      return;
    }
    boolean landed = commitOrDiscard(table, "manifest rewrite", List.of(), () -> table.rewriteManifests()
        .rewriteIf(m -> m.length() < MANIFEST_SMALL_BYTES)
        .clusterBy((DataFile f) -> partitionKey(table, f))
        .set(SUMMARY_OPERATION, "manifests")
        .commit(), r);
    if (landed) {
      r.manifestsRewritten += small;
    }
  }

  private static String partitionKey(Table table, DataFile f) {
    PartitionSpec spec = table.specs().get(f.specId());
    return f.specId() + "/" + spec.partitionToPath(f.partition());
  }

  private void expireSnapshots(Table table, MaintenanceReport.RunResult r) {
    table.refresh();
    long cutoff = clockMs.getAsLong() - settings.snapshotMaxAgeMs();
    Optional<Snapshot> offsets = newestWithOffsets(table);
    if (offsets.isPresent()) {
      cutoff = Math.min(cutoff, offsets.get().timestampMillis());
    }
    Set<Long> before = snapshotIds(table);
    AtomicLong deleted = new AtomicLong();
    long expireBefore = cutoff;
    boolean landed = commitOrDiscard(table, "snapshot expiry", List.of(), () -> table.expireSnapshots()
        .expireOlderThan(expireBefore)
        .retainLast(settings.retainLastSnapshots())
        .deleteWith(location -> {
          table.io().deleteFile(location);
          deleted.incrementAndGet();
        })
        .commit(), r);
    if (landed) {
      table.refresh();
      before.removeAll(snapshotIds(table));
      r.snapshotsExpired += before.size();
      r.expiredFilesDeleted += deleted.get();
    }
  }

  /** The newest ancestor of the current snapshot whose summary holds the topic's offsets (what a restart resumes from). */
  static Optional<Snapshot> newestWithOffsets(Table table) {
    for (Snapshot s = table.currentSnapshot(); s != null; s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
      if (s.summary().containsKey(TableCommitter.OFFSETS)) {
        return Optional.of(s);
      }
    }
    return Optional.empty();
  }

  private static Set<Long> snapshotIds(Table table) {
    Set<Long> ids = new HashSet<>();
    table.snapshots().forEach(s -> ids.add(s.snapshotId()));
    return ids;
  }

  private void removeOrphans(Table table, MaintenanceReport.RunResult r) {
    // the metadata file current before the listing must be in it (the guard); references are read after it
    table.refresh();
    String current = ((org.apache.iceberg.HasTableOperations) table).operations().current().metadataFileLocation();
    Optional<List<FileInfo>> listed = OrphanFiles.list(table);
    if (listed.isEmpty()) {
      r.skipped.append("orphan removal: the table's FileIO cannot list files; ");
      return;
    }
    table.refresh();
    Set<String> referenced = OrphanFiles.referenced(table);
    List<String> orphans = OrphanFiles.orphans(listed.get(), referenced, current,
        clockMs.getAsLong() - settings.orphanMinAgeMs(), bounds.maxFilesPerRun());
    for (String location : orphans) {
      table.io().deleteFile(location);
      r.orphanFilesRemoved++;
    }
  }

  /**
   * Runs one maintenance commit. True when it landed. A lost race (validation or retries out) is
   * a conflict: {@code written} (files of the change, not in the table) are deleted and false is
   * returned. An unknown outcome is rethrown with {@code written} kept (they may be in the table).
   */
  private boolean commitOrDiscard(Table table, String step, List<DataFile> written, Runnable commit,
      MaintenanceReport.RunResult r) {
    try {
      gate.commit(commit);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while the " + step + " commit was handed over (its outcome is unknown)", e);
    } catch (ValidationException | CommitFailedException conflict) {
      r.conflicts++;
      log.info("{}: maintenance {} lost to a concurrent commit and is retried at the next run: {}", topic, step,
          conflict.getMessage());
      for (DataFile f : written) {
        try {
          table.io().deleteFile(f.location());
        } catch (RuntimeException | Error e) {
          // an orphan then, taken by orphan removal after its safety age
        }
      }
      return false;
    }
    // CommitStateUnknownException and I/O failures propagate: the run ends, nothing is deleted
  }

  /**
   * Stops the runs; a run in progress ends after its current step or compaction group (whose commit
   * lands whole or not at all), so that a node losing the topic is not held up by a long run.
   */
  @Override
  public void close() {
    closing = true;
    try {
      owner.execute(() -> {
        stopped = true;
        report = report.withState("STOPPED");
      });
    } catch (RejectedExecutionException closed) {
      // closed already
    }
    owner.shutdown();
    try {
      if (!owner.awaitTermination(CLOSE_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
        owner.shutdownNow();
      }
    } catch (InterruptedException e) {
      owner.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
