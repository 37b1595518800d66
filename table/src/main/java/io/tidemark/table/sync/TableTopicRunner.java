package io.tidemark.table.sync;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a {@link TableSync}'s rounds on the commit interval: one round, then the next one
 * {@code commitIntervalMs} after it ended, or at once while a round reports more data (bounded
 * rounds catch up back to back). A failed round is logged, kept as {@link Status#lastError()},
 * and retried one interval later; it never affects Kafka producers or consumers.
 *
 * <p>States: NEW → RUNNING ({@link #start}) → STOPPED ({@link #stop}). Rounds run one at a time on
 * the given scheduler (never concurrently); {@link #status()} may be read from any thread.
 */
public final class TableTopicRunner {

  private static final Logger log = LoggerFactory.getLogger(TableTopicRunner.class);

  /** What the runner has done so far; times from the injected clock, -1 when never. */
  public record Status(String state, long rounds, long commits, long rowsWritten, long recordsSkipped,
      long lastCommitMs, String lastError) {}

  private final TableSync sync;
  private final ScheduledExecutorService scheduler;
  private final LongSupplier clockMs;
  private final long commitIntervalMs;
  private volatile Status status = new Status("NEW", 0, 0, 0, 0, -1, "");
  private ScheduledFuture<?> next;
  private boolean stopped;

  public TableTopicRunner(TableSync sync, long commitIntervalMs, ScheduledExecutorService scheduler, LongSupplier clockMs) {
    this.sync = sync;
    this.commitIntervalMs = commitIntervalMs;
    this.scheduler = scheduler;
    this.clockMs = clockMs;
  }

  public synchronized void start() {
    if (!status.state().equals("NEW")) {
      throw new IllegalStateException("runner is " + status.state());
    }
    status = with("RUNNING", status.lastError());
    next = scheduler.schedule(this::round, 0, TimeUnit.MILLISECONDS);
  }

  /** Stops scheduling rounds; a round in progress finishes (its commit lands or not as a whole). */
  public synchronized void stop() {
    stopped = true;
    if (next != null) {
      next.cancel(false);
    }
    status = with("STOPPED", status.lastError());
  }

  public Status status() {
    return status;
  }

  private void round() {
    long delay = commitIntervalMs;
    try {
      TableSync.RoundResult r = sync.runRound();
      Status s = status;
      status = new Status(s.state(), s.rounds() + 1, s.commits() + (r.committed() ? 1 : 0), s.rowsWritten() + r.rows(),
          s.recordsSkipped() + r.skipped(), r.committed() ? clockMs.getAsLong() : s.lastCommitMs(), "");
      if (r.moreData()) {
        delay = 0;
      }
    } catch (RuntimeException e) {
      log.warn("table topic round failed; retrying in {} ms", commitIntervalMs, e);
      Status s = status;
      status = new Status(s.state(), s.rounds() + 1, s.commits(), s.rowsWritten(), s.recordsSkipped(), s.lastCommitMs(),
          e.toString());
    }
    synchronized (this) {
      if (!stopped) {
        next = scheduler.schedule(this::round, delay, TimeUnit.MILLISECONDS);
      }
    }
  }

  private Status with(String state, String lastError) {
    Status s = status;
    return new Status(state, s.rounds(), s.commits(), s.rowsWritten(), s.recordsSkipped(), s.lastCommitMs(), lastError);
  }
}
