package io.tidemark.table.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.table.commit.TableCommitter;
import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.control.ControlLog;
import io.tidemark.table.control.ControlMessage;
import io.tidemark.table.convert.KafkaColumns;
import io.tidemark.table.node.TableTopicNode;
import io.tidemark.table.node.TableTopicStatus;
import io.tidemark.table.source.PartitionRecordSource;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Goal: the coordinator/worker commit cycle over the control topic lands every record once, survives an unfinished round, and does not wait for a stuck partition. */
class CommitCycleTest {

  private static final TableIdentifier TABLE = TableIdentifier.of("default", "cycle");
  @TempDir
  Path dir;
  private TestWarehouse warehouse;
  private ControlLog control;
  private final List<TableTopicNode> nodes = new ArrayList<>();

  @BeforeEach
  void setUp() {
    warehouse = new TestWarehouse(dir);
    control = ControlLog.local(new TestTopic(ControlLog.TOPIC, 1).logs.get(0), System::currentTimeMillis, 1 << 20);
  }

  @AfterEach
  void tearDown() throws Exception {
    nodes.forEach(TableTopicNode::close);
    warehouse.close();
  }

  private TableTopicNode node(long replyWaitMs) {
    return node(replyWaitMs, 60_000);
  }

  private TableTopicNode node(long replyWaitMs, long trimIntervalMs) {
    TableTopicNode node = new TableTopicNode(
        new TableTopicNode.Settings(1, 64L << 20, 1 << 20, 2_000, replyWaitMs, 10, trimIntervalMs, 3),
        warehouse.freshCatalog(), null, control, System::currentTimeMillis);
    node.start();
    nodes.add(node);
    return node;
  }

  private static TableTopicNode.Assignment assignment(Map<Integer, PartitionRecordSource> sources) {
    TableTopicConfig config = TableTopicConfig.parse(Map.of(TableTopicConfig.ENABLE, "true",
        TableTopicConfig.COMMIT_INTERVAL_MS, "1000", TableTopicConfig.TABLE_NAME, "cycle"));
    return new TableTopicNode.Assignment("id-1", config, sources, true, Set.of(1));
  }

  private static void produce(TestTopic topic, int partition, String... values) {
    List<SimpleRecord> records = new ArrayList<>();
    for (String v : values) {
      records.add(new SimpleRecord(1L, null, v.getBytes(StandardCharsets.UTF_8)));
    }
    topic.append(partition, records);
  }

  private Map<String, Long> rowsByValue() {
    Map<String, Long> out = new TreeMap<>();
    for (Record r : warehouse.readAll(TABLE)) {
      java.nio.ByteBuffer b = ((java.nio.ByteBuffer) r.getField(KafkaColumns.VALUE)).duplicate();
      byte[] bytes = new byte[b.remaining()];
      b.get(bytes);
      Long previous = out.put(new String(bytes, StandardCharsets.UTF_8) + "@" + r.getField(KafkaColumns.PARTITION),
          (Long) r.getField(KafkaColumns.OFFSET));
      assertThat(previous).as("row written twice").isNull();
    }
    return out;
  }

  private List<ControlMessage> controlMessages() {
    List<ControlMessage> out = new ArrayList<>();
    for (ControlLog.Entry e : control.read(0).join().entries()) {
      out.add(e.message());
    }
    return out;
  }

  @Test
  void roundsThroughTheControlTopicLandEveryRecordOnceWithOffsetsInTheSnapshot() {
    TestTopic topic = new TestTopic("cycle", 3);
    produce(topic, 0, "a", "b");
    produce(topic, 1, "c");
    TableTopicNode node = node(10_000);
    node.apply("cycle", assignment(topic.sources()));

    await().atMost(Duration.ofSeconds(60)).until(() -> warehouse.freshCatalog().tableExists(TABLE)
        && rowsByValue().size() == 3);
    produce(topic, 2, "d", "e");
    produce(topic, 0, "f");
    await().atMost(Duration.ofSeconds(60)).until(() -> rowsByValue().size() == 6);

    assertThat(rowsByValue()).containsExactlyInAnyOrderEntriesOf(Map.of("a@0", 0L, "b@0", 1L, "f@0", 2L, "c@1", 0L,
        "d@2", 0L, "e@2", 1L));
    Table table = warehouse.load(TABLE);
    TableCommitter.Committed committed = new TableCommitter(table).committed();
    assertThat(committed.nextOffsets()).containsExactlyInAnyOrderEntriesOf(Map.of(0, 3L, 1, 1L, 2, 2L));
    // the snapshot's commit id is a round the coordinator started and ended as landed in the control topic
    String commitId = committed.commitId().orElseThrow();
    List<ControlMessage> messages = controlMessages();
    assertThat(messages).anySatisfy(m -> assertThat(m).isEqualTo(new ControlMessage.CommitStart("cycle", commitId,
        ((ControlMessage.CommitStart) messages.stream().filter(x -> x instanceof ControlMessage.CommitStart
            && x.commitId().equals(commitId)).findFirst().orElseThrow()).startedAtMs())));
    assertThat(messages).anySatisfy(m -> assertThat(m).isInstanceOfSatisfying(ControlMessage.CommitEnd.class,
        end -> assertThat(end.commitId().equals(commitId) && end.landed()).isTrue()));
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      TableTopicStatus status = node.status("cycle").orElseThrow();
      assertThat(status.rowsWritten()).isEqualTo(6);
      assertThat(status.dataFiles()).isPositive();
      assertThat(status.bytesWritten()).isPositive();
      assertThat(status.partitions()).allSatisfy(p -> {
        assertThat(p.lagRecords()).isZero();
        assertThat(p.lagMs()).isZero();
      });
    });
  }

  @Test
  void aCommitLeavingManyDeleteFilesStartsMaintenanceOnTheCoordinatingNode() {
    // Goal: on a node, the coordinator tells maintenance of each commit, so an upsert table whose deletes pile
    // up is compacted long before the interval (an hour here), and keeps exactly the latest row per key.
    TableTopicNode node = new TableTopicNode(new TableTopicNode.Settings(1, 64L << 20, 1 << 20, 2_000, 10_000, 10, 60_000, 3),
        new io.tidemark.table.maintenance.MaintenanceConfig(3_600_000, 1L << 30, 100_000, 600_000, 2, 4),
        warehouse.freshCatalog(), null, control, System::currentTimeMillis);
    node.start();
    nodes.add(node);
    TestTopic topic = new TestTopic("cycle", 2);
    TableTopicConfig config = TableTopicConfig.parse(Map.of(TableTopicConfig.ENABLE, "true",
        TableTopicConfig.COMMIT_INTERVAL_MS, "1000", TableTopicConfig.TABLE_NAME, "cycle",
        TableTopicConfig.CONVERT_VALUE_TYPE, "json", TableTopicConfig.UPSERT_ENABLE, "true"));
    node.apply("cycle", new TableTopicNode.Assignment("id-1", config, topic.sources(), true, Set.of(1)));
    Map<String, String> latest = new TreeMap<>();
    for (int batch = 0; batch < 60 && node.maintenance("cycle").orElseThrow().report().runs() == 0; batch++) {
      for (int i = 0; i < 6; i++) {
        String key = "k" + i;
        String value = "b" + batch + "-" + i;
        topic.append(i % 2, List.of(new SimpleRecord(1L, key.getBytes(StandardCharsets.UTF_8),
            ("{\"v\":\"" + value + "\"}").getBytes(StandardCharsets.UTF_8))));
        latest.put(key, value);
      }
      Map<String, String> expected = Map.copyOf(latest);
      await().atMost(Duration.ofSeconds(60)).until(() -> warehouse.freshCatalog().tableExists(TABLE)
          && latestRows().equals(expected));
    }
    await().atMost(Duration.ofSeconds(60)).until(() -> node.maintenance("cycle").orElseThrow().report().runs() > 0);
    io.tidemark.table.maintenance.MaintenanceReport report = node.maintenance("cycle").orElseThrow().report();
    assertThat(report.lastRun()).contains("started by delete files");
    assertThat(report.dataFilesRewritten()).isPositive();
    assertThat(latestRows()).isEqualTo(latest);
  }

  /** Upsert table rows: key to its value's field v (a second row of one key fails). */
  private Map<String, String> latestRows() {
    Map<String, String> out = new TreeMap<>();
    for (Record r : warehouse.readAll(TABLE)) {
      String previous = out.put((String) r.getField(KafkaColumns.KEY), (String) r.getField("v"));
      assertThat(previous).as("two rows of one key").isNull();
    }
    return out;
  }

  @Test
  void aTransactionalTopicLandsOnlyCommittedRecordsAndNeverPassesTheLastStableOffset() {
    // Goal: aborted records never reach the table; records after an open transaction wait for it (LSO)
    TestTopic topic = new TestTopic("cycle", 1);
    produce(topic, 0, "a");                                                             // offset 0
    topic.appendTransactional(0, 1000, 0, values("t1", "t2"));                          // 1-2
    topic.appendTransactional(0, 1001, 0, values("x1"));                                // 3
    topic.endTransaction(0, 1000, true);                                                // 4
    topic.endTransaction(0, 1001, false);                                               // 5
    topic.appendTransactional(0, 1002, 0, values("open"));                              // 6
    produce(topic, 0, "after-open");                                                    // 7
    TableTopicNode node = node(10_000);
    node.apply("cycle", assignment(topic.sources()));

    await().atMost(Duration.ofSeconds(60)).until(() -> warehouse.freshCatalog().tableExists(TABLE) && rowsByValue().size() == 3);
    assertThat(rowsByValue()).containsExactlyInAnyOrderEntriesOf(Map.of("a@0", 0L, "t1@0", 1L, "t2@0", 2L));
    assertThat(new TableCommitter(warehouse.load(TABLE)).committed().nextOffsets()).containsEntry(0, 6L);

    topic.endTransaction(0, 1002, true);                                                // 8
    await().atMost(Duration.ofSeconds(60)).until(() -> rowsByValue().size() == 5);
    assertThat(rowsByValue()).containsExactlyInAnyOrderEntriesOf(Map.of("a@0", 0L, "t1@0", 1L, "t2@0", 2L, "open@0", 6L,
        "after-open@0", 7L));
    await().atMost(Duration.ofSeconds(60)).until(() -> new TableCommitter(warehouse.load(TABLE)).committed().nextOffsets().get(0) == 9L);
  }

  private static List<SimpleRecord> values(String... values) {
    List<SimpleRecord> records = new ArrayList<>();
    for (String v : values) {
      records.add(new SimpleRecord(1L, null, v.getBytes(StandardCharsets.UTF_8)));
    }
    return records;
  }

  @Test
  void anUnfinishedRoundIsResolvedFromTheTableAndNothingIsWrittenTwice() {
    TestTopic topic = new TestTopic("cycle", 2);
    produce(topic, 0, "a", "b");
    produce(topic, 1, "c");
    // a previous coordinator recorded its intent and the snapshot landed, then it died before recording the end
    TableSync previous = new TableSync("cycle", assignment(Map.of()).config(), warehouse.freshCatalog(), topic.sources(),
        () -> "round-landed", 1 << 20, 64L << 20);
    control.append(new ControlMessage.CommitStart("cycle", "round-landed", 1)).join();
    previous.commit(previous.prepare());
    produce(topic, 1, "d");

    TableTopicNode node = node(10_000);
    node.apply("cycle", assignment(topic.sources()));

    await().atMost(Duration.ofSeconds(60)).until(() -> rowsByValue().size() == 4);
    assertThat(rowsByValue()).containsExactlyInAnyOrderEntriesOf(Map.of("a@0", 0L, "b@0", 1L, "c@1", 0L, "d@1", 1L));
    assertThat(controlMessages()).contains(new ControlMessage.CommitEnd("cycle", "round-landed", true,
        snapshotWith(warehouse.load(TABLE), "round-landed")));
  }

  @Test
  void aRoundThatNeverLandedIsRecordedAsAbandonedAndItsRecordsComeAgain() {
    TestTopic topic = new TestTopic("cycle", 1);
    produce(topic, 0, "a");
    TableSync previous = new TableSync("cycle", assignment(Map.of()).config(), warehouse.freshCatalog(), topic.sources(),
        () -> "round-lost", 1 << 20, 64L << 20);
    control.append(new ControlMessage.CommitStart("cycle", "round-lost", 1)).join();
    previous.prepare(); // files written, never committed: orphans

    TableTopicNode node = node(10_000);
    node.apply("cycle", assignment(topic.sources()));

    await().atMost(Duration.ofSeconds(60)).until(() -> warehouse.freshCatalog().tableExists(TABLE) && rowsByValue().size() == 1);
    assertThat(controlMessages()).contains(new ControlMessage.CommitEnd("cycle", "round-lost", false, -1));
    assertThat(rowsByValue()).containsExactlyEntriesOf(Map.of("a@0", 0L));
  }

  @Test
  void aPartitionClosedAndOpenedAgainBetweenTwoScansIsReadFromItsNewLog() {
    // Goal: the broker lost its lease and got it back between two scans, so every partition is a new
    // log under the same numbers. The worker must move to the new logs: one left on the closed logs
    // never saw another record (a benchmark's table stayed at 0 rows after a 3 s lease loss).
    TestTopic topic = new TestTopic("cycle", 2);
    produce(topic, 0, "a");
    TableTopicNode node = node(10_000);
    node.apply("cycle", assignment(topic.sources()));
    await().atMost(Duration.ofSeconds(60)).until(() -> warehouse.freshCatalog().tableExists(TABLE) && rowsByValue().size() == 1);

    topic.reopen(0);
    topic.reopen(1);
    node.apply("cycle", assignment(topic.sources())); // the next scan: same partitions, same coordinator
    produce(topic, 0, "b");
    produce(topic, 1, "c");

    await().atMost(Duration.ofSeconds(60)).until(() -> rowsByValue().size() == 3);
    assertThat(rowsByValue()).containsExactlyInAnyOrderEntriesOf(Map.of("a@0", 0L, "b@0", 1L, "c@1", 0L));
    node.apply("cycle", assignment(topic.sources())); // unchanged logs: nothing restarts (a new coordinator counts from 0)
    assertThat(node.status("cycle").orElseThrow().commits()).isPositive();
  }

  @Test
  void aCoordinatorStoppedWhileRecoveringStopsAtOnceWithoutFailing() throws Exception {
    // Goal: a coordinator whose broker lost the topic's partition 0 while it was reading the control
    // topic (which answers late: its own partition moves too) stops within its check interval, not after
    // the control topic's 60 s timeout, and its recovery finishing meanwhile is no failure
    // (it used to schedule on its shut-down executor: "recovery failed" with RejectedExecutionException).
    control.append(new ControlMessage.CommitStart("other", "round-x", 1)).join();
    CountDownLatch reading = new CountDownLatch(1);
    CompletableFuture<Void> answer = new CompletableFuture<>();
    ControlLog late = new DelegatingControlLog(control) {
      @Override
      public CompletableFuture<ControlLog.Page> read(long offset) {
        reading.countDown();
        return answer.thenCompose(v -> control.read(offset));
      }
    };
    TableTopicConfig config = assignment(Map.of()).config();
    TableSync tableSide = new TableSync("cycle", config, warehouse.freshCatalog(), Map.of(), () -> "", 1 << 20, 64L << 20);
    java.util.concurrent.ScheduledThreadPoolExecutor owner = new java.util.concurrent.ScheduledThreadPoolExecutor(1);
    owner.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    io.tidemark.table.coordinator.TableCoordinator coordinator = new io.tidemark.table.coordinator.TableCoordinator("cycle",
        tableSide, late, () -> Set.of(1), new io.tidemark.table.coordinator.TableCoordinator.Timing(1_000, 10_000),
        () -> java.util.UUID.randomUUID().toString(), System::currentTimeMillis, owner);
    coordinator.start();
    assertThat(reading.await(60, TimeUnit.SECONDS)).isTrue();
    // the control topic answers while the coordinator is being closed
    Thread answering = Thread.ofPlatform().start(() -> {
      await().atMost(Duration.ofSeconds(60)).until(owner::isShutdown);
      answer.complete(null);
    });

    long started = System.nanoTime();
    coordinator.close();
    long closeMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    answering.join();

    assertThat(owner.isTerminated()).isTrue();
    assertThat(closeMs).as("close waited for the control topic").isLessThan(30_000);
    assertThat(coordinator.stats().state()).isEqualTo(io.tidemark.table.coordinator.TableCoordinator.State.STOPPED);
    assertThat(coordinator.stats().lastError()).isEmpty();
    assertThat(controlMessages()).noneMatch(m -> m.topic().equals("cycle"));
  }

  @Test
  void aWorkerSlowerThanTheReplyWaitStillLandsItsRows() {
    // Goal: a worker whose rounds take longer than the coordinator's reply wait (a machine starved of CPU:
    // a benchmark's table stayed at 0 rows) gets its rows into the table. Without the growing wait each
    // round was committed empty before the answer came, the answer was dropped as late, and the next
    // round started over from the same offsets: nothing ever landed.
    TestTopic topic = new TestTopic("cycle", 1);
    produce(topic, 0, "a", "b");
    PartitionRecordSource source = topic.sources().get(0);
    java.util.concurrent.Executor later = CompletableFuture.delayedExecutor(700, TimeUnit.MILLISECONDS);
    PartitionRecordSource slow = new WrappedSource(source) {
      @Override
      public CompletableFuture<Batches> read(long offset, int maxBytes) {
        return CompletableFuture.supplyAsync(() -> null, later).thenCompose(v -> delegate.read(offset, maxBytes));
      }
    };
    TableTopicNode node = new TableTopicNode(new TableTopicNode.Settings(1, 64L << 20, 1 << 20, 5_000, 200, 10, 60_000, 1),
        warehouse.freshCatalog(), null, control, System::currentTimeMillis);
    node.start();
    nodes.add(node);
    node.apply("cycle", assignment(Map.of(0, slow)));

    await().atMost(Duration.ofSeconds(60)).until(() -> warehouse.freshCatalog().tableExists(TABLE) && rowsByValue().size() == 2);
    assertThat(rowsByValue()).containsExactlyInAnyOrderEntriesOf(Map.of("a@0", 0L, "b@0", 1L));
  }

  /** A control log that passes every call to another; tests override what they change. */
  private static class DelegatingControlLog implements ControlLog {
    private final ControlLog delegate;

    DelegatingControlLog(ControlLog delegate) {
      this.delegate = delegate;
    }

    @Override
    public CompletableFuture<Long> append(ControlMessage message) {
      return delegate.append(message);
    }

    @Override
    public long startOffset() {
      return delegate.startOffset();
    }

    @Override
    public long endOffset() {
      return delegate.endOffset();
    }

    @Override
    public CompletableFuture<ControlLog.Page> read(long offset) {
      return delegate.read(offset);
    }

    @Override
    public CompletableFuture<Long> trimBefore(long offset) {
      return delegate.trimBefore(offset);
    }
  }

  @Test
  void aStuckPartitionDoesNotHoldBackTheOthersAndJoinsWhenItAnswers() {
    TestTopic topic = new TestTopic("cycle", 2);
    produce(topic, 0, "a");
    produce(topic, 1, "b");
    Map<Integer, PartitionRecordSource> sources = new TreeMap<>(topic.sources());
    StuckSource stuck = new StuckSource(sources.get(1));
    sources.put(1, stuck);
    TableTopicNode node = node(10_000);
    node.apply("cycle", assignment(sources));

    await().atMost(Duration.ofSeconds(60)).until(() -> warehouse.freshCatalog().tableExists(TABLE)
        && rowsByValue().containsKey("a@0"));
    assertThat(rowsByValue()).doesNotContainKey("b@1");
    stuck.release();
    await().atMost(Duration.ofSeconds(60)).until(() -> rowsByValue().containsKey("b@1"));
    assertThat(rowsByValue()).hasSize(2);
  }

  @Test
  void theControlTopicIsTrimmedAndARestartedNodeGoesOnFromTheTable() {
    TestTopic topic = new TestTopic("cycle", 1);
    produce(topic, 0, "a");
    TableTopicNode node = node(10_000, 100);
    node.apply("cycle", assignment(topic.sources()));
    await().atMost(Duration.ofSeconds(60)).until(() -> warehouse.freshCatalog().tableExists(TABLE) && rowsByValue().size() == 1);
    produce(topic, 0, "b");
    await().atMost(Duration.ofSeconds(60)).until(() -> rowsByValue().size() == 2 && control.startOffset() > 0);

    node.close();
    nodes.remove(node);
    produce(topic, 0, "c");
    node(10_000, 100).apply("cycle", assignment(topic.sources()));

    await().atMost(Duration.ofSeconds(60)).until(() -> rowsByValue().size() == 3);
    assertThat(rowsByValue()).containsExactlyInAnyOrderEntriesOf(Map.of("a@0", 0L, "b@0", 1L, "c@0", 2L));
  }

  private static long snapshotWith(Table table, String commitId) {
    for (org.apache.iceberg.Snapshot s : table.snapshots()) {
      if (commitId.equals(s.summary().get(TableCommitter.COMMIT_ID))) {
        return s.snapshotId();
      }
    }
    return -2;
  }

  /** A partition whose reads do not answer until released (an object store that hangs). */
  @Test
  void thePartitionsLedHereAreConvertedInParallel() {
    // Goal: a worker's partitions are converted at the same time, one group per thread (the first read
    // of each partition waits until all four partitions are being read; one after another they never would).
    TestTopic topic = new TestTopic("cycle", 4);
    CountDownLatch allReading = new CountDownLatch(4);
    AtomicBoolean serial = new AtomicBoolean();
    Map<Integer, PartitionRecordSource> sources = new TreeMap<>();
    topic.sources().forEach((p, source) -> {
      produce(topic, p, "r" + p);
      sources.put(p, new RendezvousSource(source, allReading, serial));
    });
    TableTopicNode node = new TableTopicNode(new TableTopicNode.Settings(1, 64L << 20, 1 << 20, 20_000, 30_000, 10, 60_000, 4),
        warehouse.freshCatalog(), null, control, System::currentTimeMillis);
    node.start();
    nodes.add(node);
    node.apply("cycle", assignment(sources));

    await().atMost(Duration.ofSeconds(60)).until(() -> warehouse.freshCatalog().tableExists(TABLE) && rowsByValue().size() == 4);
    assertThat(serial).as("some partition was read while the others were not").isFalse();
    assertThat(rowsByValue()).containsExactlyInAnyOrderEntriesOf(Map.of("r0@0", 0L, "r1@1", 0L, "r2@2", 0L, "r3@3", 0L));
  }

  @Test
  void aControlTopicThatCannotBeReachedAtStartDelaysTheTableTopicsButNotTheNode() {
    // Goal: the node starts while its control log does not answer (its broker is down); once it
    // answers, rounds run and every record lands once.
    TestTopic topic = new TestTopic("cycle", 2);
    produce(topic, 0, "a");
    produce(topic, 1, "b");
    AtomicInteger refusals = new AtomicInteger(5);
    ControlLog unreachableAtFirst = new DelegatingControlLog(control) {
      @Override
      public long endOffset() {
        if (refusals.getAndDecrement() > 0) {
          throw new IllegalStateException("the control topic's broker does not answer");
        }
        return control.endOffset();
      }
    };
    TableTopicNode node = new TableTopicNode(new TableTopicNode.Settings(1, 64L << 20, 1 << 20, 2_000, 10_000, 10, 60_000, 2),
        warehouse.freshCatalog(), null, unreachableAtFirst, System::currentTimeMillis);
    node.start(); // does not throw
    nodes.add(node);
    node.apply("cycle", assignment(topic.sources()));

    await().atMost(Duration.ofSeconds(60)).until(() -> warehouse.freshCatalog().tableExists(TABLE) && rowsByValue().size() == 2);
    assertThat(refusals.get()).isNegative();
    assertThat(rowsByValue()).containsExactlyInAnyOrderEntriesOf(Map.of("a@0", 0L, "b@1", 0L));
  }

  /** A source that answers offsets as its delegate does; subclasses change how reads go. */
  private abstract static class WrappedSource implements PartitionRecordSource {
    final PartitionRecordSource delegate;

    WrappedSource(PartitionRecordSource delegate) {
      this.delegate = delegate;
    }

    @Override
    public long logStartOffset() {
      return delegate.logStartOffset();
    }

    @Override
    public long highWatermark() {
      return delegate.highWatermark();
    }
  }

  /** A source whose first read waits (10 s at most) until every source of its latch is reading. */
  private static final class RendezvousSource extends WrappedSource {
    private final CountDownLatch allReading;
    private final AtomicBoolean serial;
    private boolean met;

    RendezvousSource(PartitionRecordSource delegate, CountDownLatch allReading, AtomicBoolean serial) {
      super(delegate);
      this.allReading = allReading;
      this.serial = serial;
    }

    @Override
    public CompletableFuture<Batches> read(long offset, int maxBytes) {
      if (!met) {
        met = true;
        allReading.countDown();
        try {
          if (!allReading.await(10, TimeUnit.SECONDS)) {
            serial.set(true);
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return delegate.read(offset, maxBytes);
    }
  }

  private static final class StuckSource extends WrappedSource {
    private volatile boolean released;
    private final Set<CompletableFuture<Batches>> hanging = new HashSet<>();

    StuckSource(PartitionRecordSource delegate) {
      super(delegate);
    }

    void release() {
      released = true;
    }

    @Override
    public CompletableFuture<Batches> read(long offset, int maxBytes) {
      if (released) {
        return delegate.read(offset, maxBytes);
      }
      CompletableFuture<Batches> never = new CompletableFuture<>();
      synchronized (hanging) {
        hanging.add(never);
      }
      return never;
    }
  }
}
