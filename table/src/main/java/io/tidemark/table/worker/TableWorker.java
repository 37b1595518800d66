package io.tidemark.table.worker;

import io.tidemark.table.control.ControlLog;
import io.tidemark.table.control.ControlMessage.CommitStart;
import io.tidemark.table.control.ControlMessage.FilesWritten;
import io.tidemark.table.control.ControlMessage.WorkerRound;
import io.tidemark.table.source.PartitionRecordSource;
import io.tidemark.table.sync.TableSync;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This broker's worker for one table topic: it owns the {@link TableSync} over the partitions this
 * broker leads and answers every {@link CommitStart} of the topic's coordinator by preparing a
 * round (reading each partition from the offset in the table, converting, writing Parquet files,
 * rolled at the target size and at the end of the round) within a time budget, then appending a
 * {@link FilesWritten} with the files and offsets to the control topic. It never commits: files
 * of a round the coordinator does not commit are orphans, and the next round starts again from
 * the table's offsets.
 *
 * <p>The led partitions are dealt into up to {@code parallelism} groups, each with its own
 * {@link TableSync}, so that their conversion runs in parallel; the groups' shares of a round are
 * joined into one answer.
 *
 * <p>Threading: one thread owns the round; {@link #onStart} only hands the request over, and a
 * start superseded by a newer one before it ran is skipped (at most one round in flight). Each
 * group's sync is prepared on a converter thread while the round's thread waits. States:
 * RUNNING → STOPPED ({@link #close}, which waits for a round in progress).
 */
public final class TableWorker implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(TableWorker.class);
  private static final long REPLY_TIMEOUT_MS = 60_000;

  /** One led partition as the worker sees it. */
  public record PartitionView(int partition, TableSync.PartitionState state, long highWatermark, long skippedRecords,
      String pauseReason, long backfillStartOffset, long backfillEndOffset) {}

  private final String topic;
  private final int node;
  private final Map<Integer, PartitionRecordSource> sources;
  private final ControlLog control;
  private final long roundBudgetMs;
  private final LongSupplier clockMs;
  /** Syncs over disjoint groups of the led partitions, converted in parallel (one when parallelism is 1). */
  private final List<TableSync> syncs;
  private final Map<Integer, TableSync> syncOf = new TreeMap<>();
  private final ExecutorService thread;
  private final ExecutorService converters;
  private volatile CommitStart latest;
  private volatile String currentCommitId = "";

  /**
   * @param parallelism how many threads convert this worker's partitions at once: the partitions are
   *     dealt round robin into that many groups (at most one per partition), each with its own sync
   * @param syncFactory builds a group's sync; its commit-id supplier is the worker's current round
   *     (so data files are named after the round)
   */
  public TableWorker(String topic, int node, Map<Integer, PartitionRecordSource> sources, ControlLog control,
      long roundBudgetMs, LongSupplier clockMs, int parallelism, SyncFactory syncFactory) {
    this.topic = topic;
    this.node = node;
    this.sources = new TreeMap<>(sources);
    this.control = control;
    this.roundBudgetMs = roundBudgetMs;
    this.clockMs = clockMs;
    int groups = Math.max(1, Math.min(parallelism, this.sources.size()));
    List<Map<Integer, PartitionRecordSource>> split = new ArrayList<>();
    for (int g = 0; g < groups; g++) {
      split.add(new TreeMap<>());
    }
    int i = 0;
    for (Map.Entry<Integer, PartitionRecordSource> e : this.sources.entrySet()) {
      split.get(i++ % groups).put(e.getKey(), e.getValue());
    }
    List<TableSync> built = new ArrayList<>();
    for (Map<Integer, PartitionRecordSource> group : split) {
      TableSync sync = syncFactory.create(group, () -> currentCommitId);
      built.add(sync);
      group.keySet().forEach(p -> syncOf.put(p, sync));
    }
    this.syncs = List.copyOf(built);
    this.thread = Executors.newSingleThreadExecutor(Thread.ofPlatform().name("table-worker-" + topic).daemon().factory());
    this.converters = groups == 1 ? null
        : Executors.newFixedThreadPool(groups, Thread.ofPlatform().name("table-convert-" + topic + "-", 0).daemon().factory());
  }

  /** Builds the worker's {@link TableSync}. */
  @FunctionalInterface
  public interface SyncFactory {
    TableSync create(Map<Integer, PartitionRecordSource> sources, java.util.function.Supplier<String> commitIds);
  }

  /** The coordinator asked for a round; prepared on the worker's thread. */
  public void onStart(CommitStart start) {
    latest = start;
    try {
      thread.execute(() -> {
        if (latest == start) {
          prepareAndReply(start);
        }
      });
    } catch (java.util.concurrent.RejectedExecutionException stopped) {
      // closed meanwhile
    }
  }

  /** The led partitions: state, high watermark, skipped records, pause reason. */
  public Map<Integer, PartitionView> partitions() {
    Map<Integer, PartitionView> out = new TreeMap<>();
    sources.forEach((p, source) -> {
      TableSync.PartitionStatus s = syncOf.get(p).status(p);
      out.put(p, new PartitionView(p, s.state(), source.highWatermark(), s.skippedRecords(), s.pauseReason(),
          s.backfillStartOffset(), s.backfillEndOffset()));
    });
    return out;
  }

  private void prepareAndReply(CommitStart start) {
    Map<Integer, Long> highWatermarks = new TreeMap<>();
    sources.forEach((p, source) -> highWatermarks.put(p, source.highWatermark()));
    long deadline = clockMs.getAsLong() + roundBudgetMs;
    currentCommitId = start.commitId();
    FilesWritten reply;
    try {
      TableSync.PreparedRound r = prepareAll(start.commitId(), () -> deadline - clockMs.getAsLong());
      TableSync.DeadLetters dl = r.deadLetters();
      reply = new FilesWritten(topic, start.commitId(), node, new WorkerRound(r.baseOffsets(), r.nextOffsets(), highWatermarks,
          r.files(), r.deleteFiles(), dl.baseOffsets(), dl.nextOffsets(), dl.files(), r.rows(), r.skipped(), r.moreData()), "");
    } catch (RuntimeException e) {
      log.warn("{}: worker could not prepare round {}", topic, start.commitId(), e);
      reply = new FilesWritten(topic, start.commitId(), node, WorkerRound.empty(), e.toString());
    }
    try {
      control.append(reply).get(REPLY_TIMEOUT_MS, TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      // the coordinator's wait runs out and the partitions join the next round; these files stay orphans
      log.warn("{}: reply to round {} could not be recorded: {}", topic, start.commitId(), e.toString());
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Prepares every group's share of the round, the groups in parallel. A group that fails leaves its
   * partitions out of this round (they join the next one); only when every group fails does the round fail.
   */
  private TableSync.PreparedRound prepareAll(String commitId, LongSupplier remainingMs) {
    if (converters == null) {
      return syncs.getFirst().prepare(remainingMs);
    }
    List<Future<TableSync.PreparedRound>> running = new ArrayList<>();
    for (TableSync sync : syncs) {
      running.add(converters.submit(() -> sync.prepare(remainingMs)));
    }
    List<TableSync.PreparedRound> done = new ArrayList<>();
    RuntimeException failure = null;
    for (Future<TableSync.PreparedRound> f : running) {
      try {
        done.add(f.get());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while preparing round " + commitId, e);
      } catch (ExecutionException e) {
        failure = e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
        log.warn("{}: a partition group could not prepare round {}; its partitions join the next round", topic, commitId,
            e.getCause());
      }
    }
    if (done.isEmpty() && failure != null) {
      throw failure;
    }
    return TableSync.PreparedRound.union(commitId, done);
  }

  @Override
  public void close() {
    if (converters != null) {
      converters.shutdownNow();
    }
    thread.shutdownNow();
    try {
      if (!thread.awaitTermination(REPLY_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
        log.warn("{}: worker round still running after {} ms; leaving it", topic, REPLY_TIMEOUT_MS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
