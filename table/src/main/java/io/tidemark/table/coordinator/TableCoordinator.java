package io.tidemark.table.coordinator;

import io.tidemark.table.commit.TableCommitter;
import io.tidemark.table.control.ControlLog;
import io.tidemark.table.control.ControlMessage;
import io.tidemark.table.control.ControlMessage.CommitEnd;
import io.tidemark.table.control.ControlMessage.CommitStart;
import io.tidemark.table.control.ControlMessage.FilesWritten;
import io.tidemark.table.sync.TableSync;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The commit cycle of one table topic. Each round: record the intent ({@link CommitStart}, durable
 * in the control topic before anything else), collect the workers' {@link FilesWritten} until all
 * expected workers answered or the reply wait ran out (a late worker's partitions keep their
 * offsets and join the next round), commit ONE Iceberg snapshot holding every file with the
 * commit id and the per-partition next offsets in its summary ({@link TableCommitter}, which also
 * refuses a round whose base offsets the table no longer holds), and record the outcome
 * ({@link CommitEnd}). After a crash, {@link #start} first reads the control topic: a start
 * without an end is resolved by asking the table whether a snapshot with that commit id landed.
 * Workers always resume from the offsets in the table, so nothing is lost or written twice.
 *
 * <p>States: NEW → RECOVERING → IDLE ⇄ COLLECTING → COMMITTING → IDLE; any → STOPPED. An unknown
 * commit outcome goes back to RECOVERING. Threading: everything runs on the given single-thread
 * scheduler (the owner); {@link #onWritten} hands over; {@link #stats()} may be read anywhere.
 * {@link #close} (e.g. when this broker no longer leads the topic's partition 0) stops a recovery or
 * a round that is still collecting at once: the next coordinator resolves what they left from the
 * control topic and the table, as after a crash.
 */
public final class TableCoordinator implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(TableCoordinator.class);
  /** Empty reads in a row while recovering before the control topic counts as unreadable (the recovery retries). */
  private static final int MAX_READ_STALLS = 100;
  private static final long CONTROL_TIMEOUT_MS = 60_000;
  /** The longest a round waits for its workers once late answers made the wait grow. */
  static final long MAX_REPLY_WAIT_MS = 10 * 60_000;
  /** How often a wait on the control topic looks whether the coordinator is stopping. */
  private static final long STOP_CHECK_MS = 50;

  public enum State { NEW, RECOVERING, IDLE, COLLECTING, COMMITTING, STOPPED }

  /**
   * What the coordinator did so far. Times from the injected clock, -1 when never.
   * {@code caughtUpAtMs}: per partition, the latest round start at which the table held every
   * record the partition had.
   */
  public record Stats(State state, long commits, long lastCommitMs, String lastCommitId, long dataFiles, long bytesWritten,
      long rowsWritten, long badRecords, Map<Integer, Long> committedOffsets, Map<Integer, Long> caughtUpAtMs,
      String lastError) {}

  /** Timing of the cycle. */
  public record Timing(long commitIntervalMs, long replyWaitMs) {}

  private final String topic;
  private final TableSync tableSide;
  private final ControlLog control;
  private final Supplier<Set<Integer>> expectedWorkers;
  private final Timing timing;
  private final Supplier<String> commitIds;
  private final LongSupplier clockMs;
  private final ScheduledExecutorService owner;
  private final Map<Integer, FilesWritten> replies = new HashMap<>();
  private final Map<Integer, Long> committedOffsets = new TreeMap<>();
  private final Map<Integer, Long> caughtUpAtMs = new TreeMap<>();
  private volatile Stats stats = new Stats(State.NEW, 0, -1, "", 0, 0, 0, 0, Map.of(), Map.of(), "");
  private State state = State.NEW;
  private String current;
  private long currentStartMs;
  private volatile long lastEndOffset = -1;
  private ScheduledFuture<?> timer;
  /**
   * How long the current round waits for its workers: the configured wait, doubled (up to
   * {@link #MAX_REPLY_WAIT_MS}) each time a worker answers a round that was already committed without
   * it, and halved (not below the configured wait) after each round every worker answered in time. Without that, a worker
   * slower than the wait (a starved machine) answered every round late and the table never advanced.
   */
  private long replyWaitMs;
  private String grewIn = "";
  /** Set by {@link #close}: waits on the control topic end early (outside a commit) and nothing more is scheduled. */
  private volatile boolean stopping;
  /** Told of every snapshot a round's commit landed, on the owner thread. */
  private volatile Consumer<Snapshot> afterCommit = s -> { };

  /**
   * @param tableSide a {@link TableSync} without sources, used only for its table and commit step
   * @param expectedWorkers the nodes whose workers lead partitions of the topic (asked every round)
   * @param owner single-thread scheduler, owned (shut down) by the coordinator
   */
  public TableCoordinator(String topic, TableSync tableSide, ControlLog control, Supplier<Set<Integer>> expectedWorkers,
      Timing timing, Supplier<String> commitIds, LongSupplier clockMs, ScheduledExecutorService owner) {
    this.topic = topic;
    this.tableSide = tableSide;
    this.control = control;
    this.expectedWorkers = expectedWorkers;
    this.timing = timing;
    this.commitIds = commitIds;
    this.clockMs = clockMs;
    this.owner = owner;
    this.replyWaitMs = timing.replyWaitMs();
  }

  public void start() {
    owner.execute(this::recover);
  }

  /**
   * Tells {@code listener} of every snapshot a round's commit lands (on the owner thread, right after
   * the commit; it must return quickly, e.g. by handing work to another thread). Set before {@link #start()}.
   */
  public void afterEachCommit(Consumer<Snapshot> listener) {
    this.afterCommit = listener;
  }

  public Stats stats() {
    return stats;
  }

  /** Offset of the control topic below which this coordinator needs nothing (-1 until known). */
  public long trimmableBefore() {
    return lastEndOffset < 0 ? -1 : lastEndOffset + 1;
  }

  /**
   * Runs {@code change} (a maintenance commit) on the owner thread, so between two rounds' commits:
   * it never races a round's commit to the catalog (the commit cycle keeps its Iceberg retries for
   * commits of other engines). The future ends with the change's outcome; a stopped coordinator
   * fails it.
   */
  public java.util.concurrent.CompletableFuture<Void> betweenCommits(Runnable change) {
    java.util.concurrent.CompletableFuture<Void> done = new java.util.concurrent.CompletableFuture<>();
    try {
      owner.execute(() -> {
        if (state == State.STOPPED) {
          done.completeExceptionally(new IllegalStateException(topic + ": the coordinator stopped"));
          return;
        }
        try {
          change.run();
          done.complete(null);
        } catch (RuntimeException | Error e) {
          done.completeExceptionally(e);
        }
      });
    } catch (java.util.concurrent.RejectedExecutionException stopped) {
      done.completeExceptionally(new IllegalStateException(topic + ": the coordinator stopped", stopped));
    }
    return done;
  }

  /** A worker's answer (from the control topic's reader); handled on the owner thread. */
  public void onWritten(FilesWritten reply) {
    runOnOwner(() -> collect(reply));
  }

  private void recover() {
    if (state == State.STOPPED || stopping) {
      return;
    }
    moveTo(State.RECOVERING);
    try {
      Optional<CommitStart> pending = pendingStart();
      if (pending.isPresent()) {
        resolve(pending.get().commitId());
      }
      TableCommitter.Committed committed = new TableCommitter(tableSide.table()).committed();
      committedOffsets.clear();
      committedOffsets.putAll(committed.nextOffsets());
      moveTo(State.IDLE);
      scheduleCycle(0);
    } catch (RuntimeException e) {
      if (stopping) {
        log.info("{}: coordinator stopped while recovering", topic);
        return;
      }
      log.warn("{}: coordinator recovery failed; retrying in {} ms", topic, timing.commitIntervalMs(), e);
      fail(e);
      schedule(this::recover, timing.commitIntervalMs());
    }
  }

  /** The last start of this topic in the control topic that has no end after it. */
  private Optional<CommitStart> pendingStart() {
    long end = control.endOffset();
    long offset = control.startOffset();
    CommitStart pending = null;
    int stalls = 0;
    while (offset < end) {
      ControlLog.Page page = await(control.read(offset));
      for (ControlLog.Entry e : page.entries()) {
        ControlMessage m = e.message();
        if (!m.topic().equals(topic)) {
          continue;
        }
        if (m instanceof CommitStart s) {
          pending = s;
        } else if (m instanceof CommitEnd done && pending != null && done.commitId().equals(pending.commitId())) {
          pending = null;
          lastEndOffset = e.offset();
        }
      }
      if (page.nextOffset() <= offset) {
        // a remote control log may answer empty while its client connects: the records below the
        // end are there, so ask again a bounded number of times before giving up
        if (++stalls >= MAX_READ_STALLS) {
          throw new IllegalStateException("the control topic did not return its records from offset " + offset
              + " to " + end + " after " + stalls + " reads");
        }
        continue;
      }
      stalls = 0;
      offset = page.nextOffset();
    }
    return Optional.ofNullable(pending);
  }

  /** Records whether round {@code commitId} landed, judged by the table's newest offsets snapshot. */
  private void resolve(String commitId) {
    Table table = tableSide.table();
    TableCommitter.Committed committed = new TableCommitter(table).committed();
    boolean landed = committed.commitId().filter(commitId::equals).isPresent();
    long snapshotId = landed ? snapshotOf(table, commitId) : -1;
    log.info("{}: round {} found unfinished; it {} the table", topic, commitId, landed ? "landed in" : "did not reach");
    lastEndOffset = await(control.append(new CommitEnd(topic, commitId, landed, snapshotId)));
  }

  private static long snapshotOf(Table table, String commitId) {
    for (Snapshot s = table.currentSnapshot(); s != null; s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
      if (commitId.equals(s.summary().get(TableCommitter.COMMIT_ID))) {
        return s.snapshotId();
      }
    }
    return -1;
  }

  private void cycle() {
    if (state != State.IDLE || stopping) {
      return;
    }
    String commitId = commitIds.get();
    long startMs = clockMs.getAsLong();
    try {
      await(control.append(new CommitStart(topic, commitId, startMs)));
    } catch (RuntimeException e) {
      if (stopping) {
        return;
      }
      log.warn("{}: could not record the start of round {}; retrying in {} ms", topic, commitId, timing.commitIntervalMs(), e);
      fail(e);
      scheduleCycle(timing.commitIntervalMs());
      return;
    }
    current = commitId;
    currentStartMs = startMs;
    replies.clear();
    moveTo(State.COLLECTING);
    timer = schedule(() -> commitRound(commitId), replyWaitMs);
  }

  private void collect(FilesWritten reply) {
    if (!reply.commitId().equals(current) || state != State.COLLECTING) {
      // a late answer to an earlier round: its files are orphans, its partitions are in this round,
      // which waits longer (from its start) so that the worker's next answer is in time
      if (replyWaitMs < MAX_REPLY_WAIT_MS && !String.valueOf(current).equals(grewIn)) {
        grewIn = String.valueOf(current); // once per round, however many workers were late
        replyWaitMs = Math.min(MAX_REPLY_WAIT_MS, replyWaitMs * 2);
        log.info("{}: node {} answered round {} after it ended; rounds now wait {} ms for the workers", topic,
            reply.node(), reply.commitId(), replyWaitMs);
        if (state == State.COLLECTING && timer != null && timer.cancel(false)) {
          String round = current;
          timer = schedule(() -> commitRound(round),
              Math.max(0, currentStartMs + replyWaitMs - clockMs.getAsLong()));
        }
      }
      return;
    }
    replies.put(reply.node(), reply);
    if (replies.keySet().containsAll(expectedWorkers.get())) {
      if (timer != null) {
        timer.cancel(false);
      }
      commitRound(current);
    }
  }

  private void commitRound(String commitId) {
    if (state != State.COLLECTING || !commitId.equals(current)) {
      return;
    }
    moveTo(State.COMMITTING);
    long delay = Math.max(0, currentStartMs + timing.commitIntervalMs() - clockMs.getAsLong());
    String workerError = replies.values().stream().map(FilesWritten::error).filter(s -> !s.isEmpty()).findFirst().orElse("");
    if (replies.keySet().containsAll(expectedWorkers.get())) {
      replyWaitMs = Math.max(timing.replyWaitMs(), replyWaitMs / 2); // everyone answered in time
    }
    TableSync.PreparedRound round = RoundMerge.merge(commitId,
        replies.values().stream().filter(r -> r.error().isEmpty()).toList());
    try {
      boolean landed = false;
      if (!RoundMerge.empty(round)) {
        try {
          landed = tableSide.commit(round).committed();
        } catch (TableCommitter.CommitConflictException conflict) {
          log.warn("{}: {}", topic, conflict.getMessage());
          workerError = conflict.getMessage();
        }
      }
      Snapshot snapshot = landed ? tableSide.table().currentSnapshot() : null;
      long snapshotId = landed ? snapshot.snapshotId() : -1;
      lastEndOffset = await(control.append(new CommitEnd(topic, commitId, landed, snapshotId)));
      account(round, landed, workerError);
      if (landed) {
        notifyCommitted(snapshot);
      }
      moveTo(State.IDLE);
      scheduleCycle(round.moreData() ? 0 : delay);
    } catch (RuntimeException e) {
      // unknown outcome (the snapshot may or may not have landed): reconcile with the table first
      log.warn("{}: commit of round {} ended with an unknown outcome; reconciling with the table", topic, commitId, e);
      fail(e);
      moveTo(State.RECOVERING);
      schedule(this::recover, Math.min(delay + 1, timing.commitIntervalMs()));
    }
  }

  private void notifyCommitted(Snapshot snapshot) {
    try {
      afterCommit.accept(snapshot);
    } catch (RuntimeException e) {
      log.warn("{}: a listener of commits failed (the commit stands)", topic, e);
    }
  }

  private void account(TableSync.PreparedRound round, boolean landed, String error) {
    Stats s = stats;
    if (landed) {
      committedOffsets.putAll(round.nextOffsets());
    }
    for (FilesWritten reply : replies.values()) {
      reply.round().highWatermarks().forEach((p, hw) -> {
        if (committedOffsets.getOrDefault(p, 0L) >= hw) {
          caughtUpAtMs.put(p, currentStartMs);
        }
      });
    }
    long bytes = 0;
    int files = 0;
    if (landed) {
      for (DataFile f : round.files()) {
        bytes += f.fileSizeInBytes();
      }
      for (DataFile f : round.deadLetters().files()) {
        bytes += f.fileSizeInBytes();
      }
      for (org.apache.iceberg.DeleteFile f : round.deleteFiles()) {
        bytes += f.fileSizeInBytes();
      }
      files = round.files().size() + round.deadLetters().files().size();
    }
    stats = new Stats(state, s.commits() + (landed ? 1 : 0), landed ? clockMs.getAsLong() : s.lastCommitMs(),
        landed ? round.commitId() : s.lastCommitId(), s.dataFiles() + files, s.bytesWritten() + bytes,
        s.rowsWritten() + (landed ? round.rows() : 0), s.badRecords() + (landed ? round.skipped() : 0),
        Map.copyOf(committedOffsets), Map.copyOf(caughtUpAtMs), error);
  }

  private void scheduleCycle(long delayMs) {
    if (state != State.STOPPED) {
      schedule(this::cycle, delayMs);
    }
  }

  /**
   * Schedules {@code task} on the owner; nothing (null) once {@link #close} began: a task the owner
   * refuses then is no failure (the coordinator lost its topic, the next one recovers).
   */
  private ScheduledFuture<?> schedule(Runnable task, long delayMs) {
    if (stopping) {
      return null;
    }
    try {
      return owner.schedule(task, delayMs, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException refused) {
      if (!stopping && !owner.isShutdown()) {
        throw refused;
      }
      return null;
    }
  }

  private void moveTo(State next) {
    state = next;
    Stats s = stats;
    stats = new Stats(next, s.commits(), s.lastCommitMs(), s.lastCommitId(), s.dataFiles(), s.bytesWritten(), s.rowsWritten(),
        s.badRecords(), s.committedOffsets(), s.caughtUpAtMs(), s.lastError());
  }

  private void fail(RuntimeException e) {
    Stats s = stats;
    stats = new Stats(s.state(), s.commits(), s.lastCommitMs(), s.lastCommitId(), s.dataFiles(), s.bytesWritten(),
        s.rowsWritten(), s.badRecords(), s.committedOffsets(), s.caughtUpAtMs(), e.toString());
  }

  private void runOnOwner(Runnable task) {
    try {
      owner.execute(task);
    } catch (java.util.concurrent.RejectedExecutionException stopped) {
      // closed meanwhile
    }
  }

  /**
   * Stops the cycle; a round being committed finishes first (its snapshot lands whole or not at all),
   * a recovery or a round still collecting answers stop at once.
   */
  @Override
  public void close() {
    stopping = true;
    runOnOwner(() -> moveTo(State.STOPPED));
    owner.shutdown();
    try {
      if (!owner.awaitTermination(CONTROL_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
        owner.shutdownNow();
      }
    } catch (InterruptedException e) {
      owner.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Waits for the control topic, at most {@value #CONTROL_TIMEOUT_MS} ms; once {@link #close} began,
   * only a round being committed keeps waiting (to record its end).
   */
  private <T> T await(java.util.concurrent.CompletableFuture<T> f) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CONTROL_TIMEOUT_MS);
    try {
      while (true) {
        if (stopping && state != State.COMMITTING) {
          throw new IllegalStateException(topic + ": the coordinator stopped");
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new java.util.concurrent.TimeoutException();
        }
        try {
          return f.get(Math.min(left, TimeUnit.MILLISECONDS.toNanos(STOP_CHECK_MS)), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.TimeoutException notYet) {
          // look at stopping again
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted waiting for the control topic", e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException("control topic: " + e.getCause(), e.getCause());
    } catch (java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("control topic did not answer within " + CONTROL_TIMEOUT_MS + " ms", e);
    }
  }
}
