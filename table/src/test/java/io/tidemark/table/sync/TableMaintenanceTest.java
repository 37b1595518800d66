package io.tidemark.table.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.table.commit.TableCommitter;
import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.convert.KafkaColumns;
import io.tidemark.table.maintenance.CommitGate;
import io.tidemark.table.maintenance.MaintenanceConfig;
import io.tidemark.table.maintenance.MaintenanceReport;
import io.tidemark.table.maintenance.TableMaintenance;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Goal: built-in maintenance (compaction, delete-file rewrite, manifest rewrite, snapshot expiry,
 * orphan removal) leaves append and upsert tables (format v2 and v3, partitioned or not) with
 * exactly the rows they had, read with Iceberg's generic reader against a reference model, keeps
 * the topic's committed offsets, lets the commit cycle go on correctly afterwards, never shows a
 * reader a wrong state while it runs, and keeps the file count and planning time of a table fed
 * one small commit after another bounded.
 */
class TableMaintenanceTest {

  private static final int PARTITIONS = 3;
  /** Runs by hand (runNow), small target so that the test's few-KiB files count as small. */
  private static final MaintenanceConfig BOUNDS = new MaintenanceConfig(3_600_000, 1L << 30, 100_000, 600_000, 2);
  private static final boolean FULL = "full".equals(System.getProperty("tidemark.test.scale"));

  private static Path dir;
  private static TestWarehouse warehouse;
  private static final AtomicInteger topics = new AtomicInteger();

  @BeforeAll
  static void startWarehouse() throws IOException {
    dir = Files.createTempDirectory("tidemark-maintenance");
    warehouse = new TestWarehouse(dir);
  }

  @AfterAll
  static void stopWarehouse() throws IOException {
    warehouse.close();
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  /** A topic landing into its table through one TableSync, with the rows the table must hold. */
  private static final class Feed {
    final TestTopic topic;
    final TableSync sync;
    final Catalog catalog;
    final boolean upsert;
    final Random random;
    /** Append tables: "partition/offset" → value; upsert tables: key → value. */
    final Map<String, String> model = new TreeMap<>();
    final Map<String, Map<String, String>> modelByCommit = new ConcurrentHashMap<>();
    final AtomicInteger fileRounds = new AtomicInteger();
    int version;
    int rounds;

    final TestWarehouse warehouse;

    Feed(boolean upsert, boolean partitioned, boolean v3, long seed) {
      this(TableMaintenanceTest.warehouse, upsert, partitioned, v3, seed);
    }

    Feed(TestWarehouse warehouse, boolean upsert, boolean partitioned, boolean v3, long seed) {
      this.warehouse = warehouse;
      this.topic = new TestTopic("maint" + topics.incrementAndGet(), PARTITIONS);
      this.upsert = upsert;
      this.random = new Random(seed);
      Map<String, String> configs = new HashMap<>();
      configs.put(TableTopicConfig.ENABLE, "true");
      configs.put(TableTopicConfig.CONVERT_VALUE_TYPE, "json");
      configs.put(TableTopicConfig.FORMAT_VERSION, v3 ? "3" : "2");
      if (upsert) {
        configs.put(TableTopicConfig.UPSERT_ENABLE, "true");
      }
      if (partitioned) {
        configs.put(TableTopicConfig.PARTITION_BY, "[grp]");
      }
      this.catalog = warehouse.freshCatalog();
      this.sync = new TableSync(topic.name, TableTopicConfig.parse(configs), catalog, topic.sources(),
          () -> topic.name + "-files-" + fileRounds.incrementAndGet(),
          1 << 20, 64L << 20);
    }

    /** Appends {@code records} records (upserts of random keys, a few deletes) and commits them as one round. */
    void round(int records) {
      for (int i = 0; i < records; i++) {
        int id = random.nextInt(40);
        int partition = id % PARTITIONS;
        String key = "k" + id;
        version++;
        boolean delete = upsert && random.nextInt(5) == 0;
        String value = delete ? null : "{\"id\":" + id + ",\"val\":\"v" + version + "\",\"grp\":" + (version % 3) + "}";
        long offset = topic.append(partition, List.of(new SimpleRecord(1_700_000_000_000L,
            key.getBytes(StandardCharsets.UTF_8), value == null ? null : value.getBytes(StandardCharsets.UTF_8))));
        if (!upsert) {
          model.put(partition + "/" + offset, "v" + version);
        } else if (delete) {
          model.remove(key);
        } else {
          model.put(key, "v" + version);
        }
      }
      String commitId = topic.name + "-round-" + (++rounds);
      modelByCommit.put(commitId, Map.copyOf(model));
      TableSync.PreparedRound prepared = sync.prepare();
      sync.commit(TableSync.PreparedRound.union(commitId, List.of(prepared)));
    }

    Table table() {
      return warehouse.load(sync.tableIdentifier());
    }

    TableMaintenance maintenance(TableTopicConfig.Maintenance settings) {
      return maintenance(settings, System::currentTimeMillis);
    }

    TableMaintenance maintenance(TableTopicConfig.Maintenance settings, java.util.function.LongSupplier clockMs) {
      return new TableMaintenance(topic.name, warehouse.freshCatalog(), sync.tableIdentifier(), settings, BOUNDS,
          clockMs, Executors.newSingleThreadScheduledExecutor());
    }

    /** The model of the round {@code snapshot} shows: that of the newest round committed at or before it. */
    Map<String, String> modelAt(Table table, Snapshot snapshot) {
      String commitId = null;
      for (Snapshot a = snapshot; a != null && commitId == null; a = a.parentId() == null ? null : table.snapshot(a.parentId())) {
        commitId = a.summary().get(TableCommitter.COMMIT_ID);
      }
      assertThat(commitId).as("a round committed at or before snapshot %s", snapshot.snapshotId()).isNotNull();
      return modelByCommit.get(commitId);
    }
  }

  /** Rows of {@code snapshot} in the model's form; a second row of one id fails. */
  private static Map<String, String> read(Table table, Snapshot snapshot, boolean upsert) throws IOException {
    Map<String, String> out = new TreeMap<>();
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).useSnapshot(snapshot.snapshotId()).build()) {
      for (Record r : rows) {
        String id = upsert ? (String) r.getField(KafkaColumns.KEY)
            : r.getField(KafkaColumns.PARTITION) + "/" + r.getField(KafkaColumns.OFFSET);
        String previous = out.put(id, (String) r.getField("val"));
        assertThat(previous).as("a second row of %s in snapshot %s", id, snapshot.snapshotId()).isNull();
      }
    }
    return out;
  }

  private static Map<String, String> readCurrent(Feed feed) throws IOException {
    Table table = feed.table();
    return read(table, table.currentSnapshot(), feed.upsert);
  }

  private static long summary(Table table, String key) {
    return Long.parseLong(table.currentSnapshot().summary().getOrDefault(key, "0"));
  }

  private static TableTopicConfig.Maintenance settings(long targetBytes, long snapshotAgeMs, long orphanAgeMs) {
    return new TableTopicConfig.Maintenance(true, targetBytes, true, snapshotAgeMs, 1, orphanAgeMs);
  }

  @Test
  void compactionKeepsEveryRowOfAnAppendTableAndItsOffsets() throws Exception {
    Feed feed = new Feed(false, true, false, 1);
    for (int i = 0; i < 12; i++) {
      feed.round(6);
    }
    Table before = feed.table();
    long filesBefore = summary(before, "total-data-files");
    TableCommitter.Committed offsetsBefore = new TableCommitter(before).committed();
    assertThat(readCurrent(feed)).isEqualTo(feed.model);

    // an orphan from long ago (a round that never committed) and one being written now
    Path data = Path.of(java.net.URI.create(before.location() + "/data"));
    Path oldOrphan = Files.writeString(data.resolve("lost-round.parquet"), "not referenced");
    Files.setLastModifiedTime(oldOrphan, FileTime.fromMillis(System.currentTimeMillis() - 3 * 3_600_000L));
    Path youngOrphan = Files.writeString(data.resolve("round-in-flight.parquet"), "not yet referenced");

    try (TableMaintenance maintenance = feed.maintenance(settings(1 << 20, 0, 3_600_000L))) {
      MaintenanceReport report = maintenance.runNow();
      Table after = feed.table();
      System.out.printf("append table: %d data files before, %d after; %s%n", filesBefore,
          summary(after, "total-data-files"), report.lastRun());
      assertThat(report.lastError()).isEmpty();
      assertThat(summary(after, "total-data-files")).as("one file per table partition (grp)").isEqualTo(3);
      assertThat(report.dataFilesRewritten()).isEqualTo(filesBefore);
      assertThat(readCurrent(feed)).isEqualTo(feed.model);
      assertThat(new TableCommitter(after).committed()).isEqualTo(offsetsBefore);
      assertThat(report.snapshotsExpired()).isPositive();
      assertThat(Files.exists(oldOrphan)).as("old orphan removed").isFalse();
      assertThat(Files.exists(youngOrphan)).as("young unreferenced file kept").isTrue();
      assertThat(report.orphanFilesRemoved()).isEqualTo(1);

      // the commit cycle goes on from the same offsets; a second run compacts again
      for (int i = 0; i < 3; i++) {
        feed.round(6);
      }
      assertThat(readCurrent(feed)).isEqualTo(feed.model);
      maintenance.runNow();
      assertThat(readCurrent(feed)).isEqualTo(feed.model);
      assertThat(summary(feed.table(), "total-data-files")).isEqualTo(3);
    }
  }

  @Test
  void aCommitLeavingManyDeleteFilesStartsARunAtOnce() throws Exception {
    // Goal: an upsert table committed often does not wait for the interval (an hour here) while its
    // equality deletes pile up (each one read against every older data file by every reader): a commit
    // leaving at least the trigger's count of delete files starts a run, at most once per gap, and the
    // run leaves fewer delete files and the same rows.
    int trigger = 6;
    Feed feed = new Feed(true, false, false, 11);
    java.util.concurrent.atomic.AtomicLong clock = new java.util.concurrent.atomic.AtomicLong(1_000_000);
    java.util.concurrent.ScheduledExecutorService owner = Executors.newSingleThreadScheduledExecutor();
    MaintenanceConfig bounds = new MaintenanceConfig(3_600_000, 1L << 30, 100_000, 600_000, 2, trigger);
    try (TableMaintenance maintenance = new TableMaintenance(feed.topic.name, warehouse.freshCatalog(),
        feed.sync.tableIdentifier(), settings(1 << 20, 3_600_000L, 3_600_000L), bounds, CommitGate.direct(), clock::get,
        owner)) {
      maintenance.start();
      clock.addAndGet(TableMaintenance.EARLY_RUN_MIN_GAP_MS);
      int rounds = 0;
      do {
        feed.round(8);
        rounds++;
        if (summary(feed.table(), "total-delete-files") < trigger) {
          maintenance.committed(feed.table().currentSnapshot());
          owner.submit(() -> { }).get(); // anything the call queued has run
          assertThat(maintenance.report().runs()).as("no run below the trigger (round %d)", rounds).isZero();
        }
        assertThat(rounds).as("rounds to reach %d delete files", trigger).isLessThan(50);
      } while (summary(feed.table(), "total-delete-files") < trigger);
      long deleteFiles = summary(feed.table(), "total-delete-files");

      clock.addAndGet(-1); // less than the gap since the maintenance started: no run yet
      maintenance.committed(feed.table().currentSnapshot());
      owner.submit(() -> { }).get();
      assertThat(maintenance.report().runs()).isZero();

      clock.addAndGet(1);
      maintenance.committed(feed.table().currentSnapshot());
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(60))
          .until(() -> maintenance.report().runs() == 1);
      MaintenanceReport report = maintenance.report();
      System.out.printf("upsert table, trigger %d: %d delete files after %d rounds; run: %s%n", trigger, deleteFiles, rounds,
          report.lastRun());
      assertThat(report.lastError()).isEmpty();
      assertThat(report.lastRun()).contains("started by delete files");
      assertThat(report.deleteFilesRemoved()).isPositive();
      assertThat(summary(feed.table(), "total-delete-files")).isLessThan(trigger);
      assertThat(readCurrent(feed)).isEqualTo(feed.model);

      // right after that run, another commit over the trigger waits for the gap
      while (summary(feed.table(), "total-delete-files") < trigger) {
        feed.round(8);
      }
      maintenance.committed(feed.table().currentSnapshot());
      owner.submit(() -> { }).get();
      assertThat(maintenance.report().runs()).isEqualTo(1);
      clock.addAndGet(TableMaintenance.EARLY_RUN_MIN_GAP_MS);
      maintenance.committed(feed.table().currentSnapshot());
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(60))
          .until(() -> maintenance.report().runs() == 2);
      assertThat(readCurrent(feed)).isEqualTo(feed.model);
    }
  }

  @Test
  void anUpsertTableCommittedEverySecondStaysCheapToRead() throws Exception {
    // Goal: the cost of reading an upsert table committed every second stays bounded with the delete-file
    // trigger, where without maintenance it grows with the square of the rounds (every round's equality
    // deletes apply to every older data file, and the generic reader loads each per data file). Two tables fed
    // the same rounds: one without maintenance, one told of each commit (one second apart on its clock).
    int rounds = FULL ? 60 : 12;
    Feed piled = new Feed(true, false, false, 21);
    Feed kept = new Feed(true, false, false, 21);
    java.util.concurrent.atomic.AtomicLong clock = new java.util.concurrent.atomic.AtomicLong(1_000_000);
    java.util.concurrent.ScheduledExecutorService owner = Executors.newSingleThreadScheduledExecutor();
    MaintenanceConfig bounds = new MaintenanceConfig(3_600_000, 1L << 30, 100_000, 600_000, 2, 12);
    try (TableMaintenance maintenance = new TableMaintenance(kept.topic.name, warehouse.freshCatalog(),
        kept.sync.tableIdentifier(), settings(1 << 20, 3_600_000L, 3_600_000L), bounds, CommitGate.direct(), clock::get,
        owner)) {
      long keptMax = 0;
      for (int i = 0; i < rounds; i++) {
        piled.round(12);
        kept.round(12);
        clock.addAndGet(1_000);
        maintenance.committed(kept.table().currentSnapshot());
        owner.submit(() -> { }).get(); // a run started here ends before the next round (as when it is quicker)
        keptMax = Math.max(keptMax, deleteLoadsPerScan(kept.table()));
      }
      long piledLoads = deleteLoadsPerScan(piled.table());
      long keptLoads = deleteLoadsPerScan(kept.table());
      long piledStart = System.nanoTime();
      assertThat(readCurrent(piled)).isEqualTo(piled.model);
      long piledMs = (System.nanoTime() - piledStart) / 1_000_000;
      long keptStart = System.nanoTime();
      assertThat(readCurrent(kept)).isEqualTo(kept.model);
      long keptMs = (System.nanoTime() - keptStart) / 1_000_000;
      System.out.printf("upsert table after %d rounds: without maintenance %d delete-file loads per full scan (%d ms);"
          + " with the trigger %d (%d ms; at most %d after any round), %d runs%n", rounds, piledLoads, piledMs, keptLoads,
          keptMs, keptMax, maintenance.report().runs());
      assertThat(maintenance.report().runs()).isPositive();
      assertThat(keptMax * 3).as("delete-file loads per scan with the trigger, at most, against the piled table's")
          .isLessThan(piledLoads);
    }
  }

  /** How many delete files a full scan of the table's current snapshot loads (each once per data file it applies to). */
  private static long deleteLoadsPerScan(Table table) throws IOException {
    long loads = 0;
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask t : tasks) {
        loads += t.deletes().size();
      }
    }
    return loads;
  }

  @Test
  void aRunStopsAfterItsCurrentGroupWhenClosed() throws Exception {
    // Goal: closing maintenance (its node no longer coordinates the topic) does not wait for the rest of a
    // run: the group being committed lands whole, no further group or step starts, and the rows are intact.
    Feed feed = new Feed(false, true, false, 7);
    for (int i = 0; i < 12; i++) {
      feed.round(6);
    }
    long filesBefore = summary(feed.table(), "total-data-files");
    java.util.concurrent.ScheduledExecutorService owner = Executors.newSingleThreadScheduledExecutor();
    AtomicInteger commits = new AtomicInteger();
    java.util.concurrent.atomic.AtomicReference<TableMaintenance> self = new java.util.concurrent.atomic.AtomicReference<>();
    Thread[] closer = new Thread[1];
    CommitGate closingAfterFirst = change -> {
      change.run();
      if (commits.incrementAndGet() == 1) {
        closer[0] = Thread.ofPlatform().start(() -> self.get().close());
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(60)).until(owner::isShutdown);
      }
    };
    TableMaintenance maintenance = new TableMaintenance(feed.topic.name, warehouse.freshCatalog(), feed.sync.tableIdentifier(),
        settings(1 << 20, 0, 3_600_000L), BOUNDS, closingAfterFirst, System::currentTimeMillis, owner);
    self.set(maintenance);

    MaintenanceReport report = maintenance.runNow();
    closer[0].join();

    assertThat(commits).as("one group of the three table partitions' groups committed").hasValue(1);
    assertThat(report.lastError()).isEmpty();
    assertThat(report.lastRun()).contains("stopped");
    assertThat(report.dataFilesRewritten()).isPositive().isLessThan(filesBefore);
    assertThat(report.snapshotsExpired()).isZero();
    assertThat(readCurrent(feed)).isEqualTo(feed.model);
    assertThat(owner.isTerminated()).isTrue();
  }

  @ParameterizedTest(name = "v3={0} partitioned={1}")
  @CsvSource({"false,true", "true,false"})
  void compactionAppliesTheDeletesOfAnUpsertTable(boolean v3, boolean partitioned) throws Exception {
    upsertTableCompacted(v3, partitioned);
  }

  @ParameterizedTest(name = "v3={0} partitioned={1}")
  @CsvSource({"false,false", "true,true"})
  @org.junit.jupiter.api.Tag("full")
  void compactionAppliesTheDeletesOfAnUpsertTableOtherLayouts(boolean v3, boolean partitioned) throws Exception {
    upsertTableCompacted(v3, partitioned);
  }

  private void upsertTableCompacted(boolean v3, boolean partitioned) throws Exception {
    Feed feed = new Feed(true, partitioned, v3, v3 ? 7 : 3);
    for (int i = 0; i < 10; i++) {
      feed.round(12);
    }
    Table before = feed.table();
    long dataBefore = summary(before, "total-data-files");
    long deletesBefore = summary(before, "total-delete-files");
    assertThat(deletesBefore).as("the upsert rounds wrote delete files").isPositive();
    assertThat(readCurrent(feed)).isEqualTo(feed.model);

    try (TableMaintenance maintenance = feed.maintenance(settings(1 << 20, 3_600_000L, 3_600_000L))) {
      MaintenanceReport report = maintenance.runNow();
      Table after = feed.table();
      System.out.printf("upsert v3=%s partitioned=%s: data files %d -> %d, delete files %d -> %d; %s%n", v3, partitioned,
          dataBefore, summary(after, "total-data-files"), deletesBefore, summary(after, "total-delete-files"),
          report.lastRun());
      assertThat(report.lastError()).isEmpty();
      assertThat(readCurrent(feed)).isEqualTo(feed.model);
      assertThat(summary(after, "total-data-files")).isLessThanOrEqualTo(partitioned ? 3 : 1);
      assertThat(summary(after, "total-delete-files")).isLessThan(deletesBefore);
      assertThat(report.deleteFilesRemoved()).isPositive();

      // rounds after compaction delete rows that compaction rewrote: their deletes must still apply
      for (int i = 0; i < 3; i++) {
        feed.round(12);
        assertThat(readCurrent(feed)).as("after round %d past compaction", i).isEqualTo(feed.model);
      }
      maintenance.runNow();
      assertThat(readCurrent(feed)).isEqualTo(feed.model);
    }
  }

  @ParameterizedTest(name = "upsert={0}")
  @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
  void compactionOfAFormat3TableKeepsEveryRowsLineage(boolean upsert) throws Exception {
    Feed feed = new Feed(upsert, false, true, upsert ? 13 : 17);
    for (int i = 0; i < 8; i++) {
      feed.round(10);
    }
    Map<String, List<Long>> before = lineage(feed);
    long filesBefore = summary(feed.table(), "total-data-files");
    assertThat(before.values()).as("every row has a row id and a last-updated sequence number")
        .allSatisfy(l -> assertThat(l).doesNotContainNull());
    assertThat(before.values().stream().map(l -> l.get(0)).distinct().count()).as("row ids are unique")
        .isEqualTo(before.size());
    assertThat(before.values().stream().map(l -> l.get(1)).distinct().count()).as("rows of several commits")
        .isGreaterThan(1);
    try (TableMaintenance maintenance = feed.maintenance(settings(1 << 20, 3_600_000L, 3_600_000L))) {
      MaintenanceReport report = maintenance.runNow();
      assertThat(report.lastError()).isEmpty();
    }
    assertThat(summary(feed.table(), "total-data-files")).as("compaction rewrote the files").isLessThan(filesBefore)
        .isEqualTo(1);
    assertThat(readCurrent(feed)).isEqualTo(feed.model);
    assertThat(lineage(feed)).as("_row_id and _last_updated_sequence_number of every row, after compaction")
        .isEqualTo(before);
  }

  /** Per row (key or partition/offset): its _row_id and _last_updated_sequence_number, as Iceberg's reader gives them. */
  private static Map<String, List<Long>> lineage(Feed feed) throws IOException {
    Table table = feed.table();
    Map<String, List<Long>> out = new TreeMap<>();
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table)
        .project(org.apache.iceberg.MetadataColumns.schemaWithRowLineage(table.schema())).build()) {
      for (Record r : rows) {
        String id = feed.upsert ? (String) r.getField(KafkaColumns.KEY)
            : r.getField(KafkaColumns.PARTITION) + "/" + r.getField(KafkaColumns.OFFSET);
        out.put(id, java.util.Arrays.asList((Long) r.getField(org.apache.iceberg.MetadataColumns.ROW_ID.name()),
            (Long) r.getField(org.apache.iceberg.MetadataColumns.LAST_UPDATED_SEQUENCE_NUMBER.name())));
      }
    }
    return out;
  }

  @Test
  void readersDuringMaintenanceAlwaysSeeACommittedState() throws Exception {
    Feed feed = new Feed(true, true, false, 11);
    feed.round(10);
    AtomicBoolean done = new AtomicBoolean();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicInteger reads = new AtomicInteger();
    Thread reader = Thread.ofPlatform().name("maintenance-test-reader").start(() -> {
      try {
        while (!done.get()) {
          Table table = feed.table();
          Snapshot s = table.currentSnapshot();
          assertThat(read(table, s, true)).as("snapshot %s", s.snapshotId()).isEqualTo(feed.modelAt(table, s));
          reads.incrementAndGet();
        }
      } catch (Throwable t) {
        failure.set(t);
      }
    });
    int rounds = FULL ? 200 : 12;
    try (TableMaintenance maintenance = feed.maintenance(settings(1 << 20, 0, 3_600_000L))) {
      for (int i = 0; i < rounds && failure.get() == null; i++) {
        feed.round(8);
        if (i % 3 == 2) {
          maintenance.runNow();
        }
      }
      done.set(true);
      reader.join();
      assertThat(failure.get()).as("what a reader saw").isNull();
      System.out.printf("readers: %d reads during %d rounds and maintenance runs; %s%n", reads.get(), rounds,
          maintenance.report());
      assertThat(reads.get()).isPositive();
      assertThat(readCurrent(feed)).isEqualTo(feed.model);
    } finally {
      done.set(true);
      reader.join();
    }
  }

  /**
   * A table fed one small commit after another (one a second for ten minutes under the full scale;
   * a quick run of rounds by default) with maintenance running on its own thread every few seconds:
   * its live data files and planning time stay bounded.
   */
  @Test
  void aTableFedSmallCommitsKeepsItsFileCountAndPlanningTimeBounded() throws Exception {
    Feed feed = new Feed(true, false, false, 5);
    int rounds = FULL ? 600 : 16;
    long pauseMs = FULL ? 1_000 : 0;
    int runEvery = FULL ? 30 : 8;
    long maxFiles = 0;
    long maxPlanningMs = 0;
    try (TableMaintenance maintenance = feed.maintenance(settings(1 << 20, FULL ? 60_000 : 0, 3_600_000L))) {
      for (int i = 1; i <= rounds; i++) {
        long start = System.currentTimeMillis();
        feed.round(5);
        if (i % runEvery == 0) {
          maintenance.runNow();
          Table table = feed.table();
          long files = summary(table, "total-data-files") + summary(table, "total-delete-files");
          long planningMs = planningMs(table);
          maxFiles = Math.max(maxFiles, files);
          maxPlanningMs = Math.max(maxPlanningMs, planningMs);
          System.out.printf("round %d: %d live files (data + delete) after maintenance, planning %d ms, %d snapshots%n",
              i, files, planningMs, size(table.snapshots()));
        }
        long left = pauseMs - (System.currentTimeMillis() - start);
        if (left > 0) {
          Thread.sleep(left); // the feed's pace (one commit a second), not an assertion
        }
      }
      assertThat(readCurrent(feed)).isEqualTo(feed.model);
      // without maintenance: (data + delete files per round) x rounds; with it: what the last interval added
      assertThat(maxFiles).as("live files after any maintenance run").isLessThanOrEqualTo(4);
      assertThat(maxPlanningMs).as("planning time of the maintained table").isLessThan(5_000);
    }
  }

  private static long planningMs(Table table) throws IOException {
    long start = System.nanoTime();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask ignored : tasks) {
        // plan every task
      }
    }
    return (System.nanoTime() - start) / 1_000_000;
  }

  private static int size(Iterable<?> items) {
    int n = 0;
    for (Object ignored : items) {
      n++;
    }
    return n;
  }

  /** Goal: a table topic's maintenance settings parse from its configs, with AutoMQ's snapshot-expiry names as aliases only. */
  @Test
  void maintenanceSettingsParseWithAutomqExpiryAliases() {
    TableTopicConfig.Maintenance defaults = TableTopicConfig.defaults().maintenance();
    assertThat(defaults).isEqualTo(new TableTopicConfig.Maintenance(true, 128L << 20, true, 3_600_000L, 1,
        72 * 3_600_000L));
    TableTopicConfig.Maintenance set = TableTopicConfig.parse(Map.of("automq.table.topic.expire.snapshot.older.than.hours",
        "5", "automq.table.topic.expire.snapshot.retain.last", "3", "automq.table.topic.expire.snapshot.enabled", "false",
        TableTopicConfig.MAINTENANCE_ENABLE, "false")).maintenance();
    assertThat(set).isEqualTo(new TableTopicConfig.Maintenance(false, 128L << 20, false, 5 * 3_600_000L, 3,
        72 * 3_600_000L));
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> TableTopicConfig.parse(
        Map.of("automq.table.topic.maintenance.enable", "true"))).hasMessageContaining("unknown table topic config");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> TableTopicConfig.parse(
        Map.of(TableTopicConfig.ORPHAN_FILES_OLDER_THAN_HOURS, "0"))).hasMessageContaining("must be between 1");
  }

  /**
   * The warehouse as objects of Tidemark's object storage (the path of the embedded catalog on S3;
   * the in-memory store here, S3's list semantics are the store contract's):
   * orphan removal lists the store, takes an old unreferenced object and keeps a young one, and no
   * file any snapshot still needs is removed, even with a clock two hours ahead so that every file of
   * the table, those compaction writes in the same run included, is past the safety age. Every
   * snapshot left is read with Iceberg's generic reader and equals the model of its round.
   */
  @Test
  void orphanRemovalOnAWarehouseInObjectStorageKeepsEveryLiveFile() throws Exception {
    try (TestWarehouse objects = TestWarehouse.inObjectStorage(Files.createTempDirectory(dir, "objects"),
        new io.tidemark.stream.objectstore.MemoryObjectStorage())) {
      Feed feed = new Feed(objects, true, true, false, 23);
      for (int i = 0; i < 5; i++) {
        feed.round(8);
      }
      Table before = feed.table();
      assertThat(before.location()).startsWith("s3://warehouse/");
      String oldOrphan = before.location() + "/data/lost-round.parquet";
      writeFile(before, oldOrphan);
      long aheadMs = 2 * 3_600_000L;
      try (TableMaintenance maintenance = feed.maintenance(settings(1 << 20, 3_600_000L, 3_600_000L),
          () -> System.currentTimeMillis() + aheadMs)) {
        MaintenanceReport report = maintenance.runNow();
        assertThat(report.lastError()).isEmpty();
        assertThat(report.lastRun()).doesNotContain("cannot list");
        assertThat(report.dataFilesRewritten()).as("compaction ran in the same run").isPositive();
        assertThat(report.orphanFilesRemoved()).isEqualTo(1);
        assertThat(before.io().newInputFile(oldOrphan).exists()).as("old orphan removed").isFalse();
      }
      assertEverySnapshotReadsItsRound(feed);
      assertThat(readCurrent(feed)).isEqualTo(feed.model);

      // more rounds, then a file written just now (a round in flight) survives a run on the real clock
      feed.round(8);
      String young = feed.table().location() + "/data/round-in-flight.parquet";
      writeFile(feed.table(), young);
      try (TableMaintenance maintenance = feed.maintenance(settings(1 << 20, 3_600_000L, 3_600_000L))) {
        MaintenanceReport report = maintenance.runNow();
        assertThat(report.lastError()).isEmpty();
        assertThat(report.orphanFilesRemoved()).isZero();
      }
      assertThat(feed.table().io().newInputFile(young).exists()).as("young unreferenced file kept").isTrue();
      assertEverySnapshotReadsItsRound(feed);
      assertThat(readCurrent(feed)).isEqualTo(feed.model);
    }
  }

  private static void writeFile(Table table, String location) throws IOException {
    try (var out = table.io().newOutputFile(location).create()) {
      out.write("not referenced by the table".getBytes(StandardCharsets.UTF_8));
    }
  }

  /** Reads every snapshot the table still holds through a fresh catalog: each needs all its files, and shows its round. */
  private static void assertEverySnapshotReadsItsRound(Feed feed) throws IOException {
    Table table = feed.table();
    int snapshots = 0;
    for (Snapshot s : table.snapshots()) {
      assertThat(read(table, s, feed.upsert)).as("snapshot %s", s.snapshotId()).isEqualTo(feed.modelAt(table, s));
      snapshots++;
    }
    assertThat(snapshots).isPositive();
  }
}
