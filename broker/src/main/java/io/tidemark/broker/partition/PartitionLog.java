package io.tidemark.broker.partition;

import io.tidemark.broker.record.KeyValue;
import io.tidemark.broker.record.ProducedBatch;
import io.tidemark.broker.record.RecordBatches;
import io.tidemark.broker.record.StoredBatch;
import io.tidemark.stream.api.OffsetOutOfRangeException;
import io.tidemark.stream.api.Stream;
import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.api.StreamFencedException;
import io.tidemark.stream.api.StreamStore;
import io.tidemark.stream.api.AppendBackpressureException;
import io.tidemark.stream.object.CorruptBatchException;
import io.tidemark.stream.object.CorruptObjectException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Kafka partition served by this broker, stored on two streams: the data stream holds the
 * Kafka record batches unchanged except for the offsets, leader epoch and (LogAppendTime) time
 * the broker writes into them, so Kafka offset = stream offset; the meta stream holds snapshots of
 * the state needed to move the partition (producer state, leader-epoch history, log start).
 * The high watermark is the data stream's durable end ({@link Stream#nextOffset()}).
 *
 * <p>Damaged data: a stored batch that is not a valid record batch (torn, overwritten, written
 * around the broker) never stops the partition from opening. Replay after the last snapshot
 * checks every batch (CRC included) and skips a damaged one; a read checks the header of every
 * batch it returns. Either way the range is logged once with topic, partition and offsets, kept in
 * {@link #damagedRanges()} (the broker's metrics count them), and a fetch that starts in it fails
 * with {@link DamagedRangeException} (Kafka's CORRUPT_MESSAGE) while every other offset serves. A
 * snapshot that cannot be read is ignored and the state rebuilt from the whole data stream.
 *
 * <p>States: OPEN → FAILED (a stream append failed or was fenced; every call then fails with
 * NOT_LEADER or STORAGE_ERROR and the partition must be reopened) or OPEN → CLOSED. Backpressure
 * never fails a partition: an append its stream refuses at once (storage full, see
 * {@code StreamEngine}) changes nothing here and is answered with a retriable BUSY. Offsets are
 * assigned and producer sequences checked under this object's monitor (a short CPU-only
 * section); appends then complete asynchronously in offset order, as the stream assigns them.
 * Reads take no lock.
 */
public final class PartitionLog {

  private static final Logger log = LoggerFactory.getLogger(PartitionLog.class);
  /**
   * Version 3 adds the transaction index after the log cleaner's checkpoint (version 2 added that
   * checkpoint); versions 1 and 2 are still read.
   */
  private static final int SNAPSHOT_VERSION = 4;
  private static final int SCAN_CHUNK_BYTES = 1024 * 1024;
  static final int MAX_PRODUCERS = 10_000;
  /**
   * Bounds the data replayed when the partition opens elsewhere (a failover, a move after a crash):
   * a snapshot is taken after this many bytes, or {@link #SNAPSHOT_INTERVAL_NANOS} after the last
   * one once anything was appended, whichever comes first. Replay reads every byte since the last
   * snapshot, so these two bound the open time of a failed-over partition.
   */
  static final long SNAPSHOT_INTERVAL_BYTES = 16L * 1024 * 1024;
  /** At most this long between snapshots of a partition that takes appends (see {@link #SNAPSHOT_INTERVAL_BYTES}). */
  static final long SNAPSHOT_INTERVAL_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
  /** Damaged ranges remembered per partition (more are still detected on read). */
  static final int MAX_DAMAGED_RANGES = 1000;

  /** Told after each durable append, so that waiting fetches can be answered. */
  @FunctionalInterface
  public interface AppendListener {
    void onAppend(PartitionLog partition);
  }

  enum State { OPEN, FAILED, CLOSED }

  /** One entry of the leader-epoch history: the first offset written under {@code epoch}. */
  public record EpochStart(int epoch, long startOffset) {}

  private final PartitionLocation location;
  private final Stream data;
  private final Stream meta;
  private final int leaderEpoch;
  private final Time time;
  private final AppendListener listener;
  private final ProducerStateTable producers = new ProducerStateTable(MAX_PRODUCERS);
  /**
   * KIP-890 verification guards: producer id → the guard handed out while its transaction
   * coordinator confirms the partition is in its transaction; dropped by the producer's marker (its
   * transaction ended meanwhile, so the verification is void) and by its first transactional append.
   * Bounded like the producer table; guarded by this log's monitor.
   */
  private final Map<Long, Object> verifications = new java.util.LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<Long, Object> eldest) {
      return size() > MAX_PRODUCERS;
    }
  };
  /** The guard of appends that need no verification (the broker's own writes, tests). */
  public static final Object UNVERIFIED = new Object();
  /**
   * Producer id → the last of its batches here whose append waits (for its KIP-890 verification, or
   * behind an earlier waiting batch): completes once that append is issued. Later batches of the
   * producer queue behind it ({@link #appendInOrder}). At most one entry per producer with a request
   * in flight; an entry leaves when its batch is issued. Guarded by this log's monitor.
   */
  private final Map<Long, CompletableFuture<Void>> waitingAppends = new java.util.HashMap<>();
  private final TransactionIndex txns = new TransactionIndex();
  private final List<EpochStart> epochs = new ArrayList<>();
  private final DamagedRanges damaged = new DamagedRanges(MAX_DAMAGED_RANGES);
  private volatile LogSettings settings;
  private volatile State state = State.OPEN;
  private volatile String failure = "";
  /** FAILED by a storage error rather than a newer leader (which reconcile closes): only a restart heals it. */
  private volatile boolean failedByStorage;
  private long logEndOffset;
  /** Bytes of batches between log start and log end (approximate after a crash: rebuilt from the replayed data). */
  private long sizeBytes;
  private long maxTimestamp = -1;
  /** Base offset of the batch holding the largest timestamp; the record is found on demand. */
  private long maxTimestampBatch = -1;
  private CompletableFuture<Long> lastAppend = CompletableFuture.completedFuture(0L);
  private CompletableFuture<Void> snapshotTail = CompletableFuture.completedFuture(null);
  /** The last trim of the meta stream to its newest snapshot (trims run one at a time, after their snapshot). */
  private CompletableFuture<Void> trimTail = CompletableFuture.completedFuture(null);
  /** The log cleaner's checkpoint: data below it is clean (compacted topics); kept in the snapshot so it moves with the partition. */
  private long cleanedOffset;
  /** Bytes appended since the last snapshot; a new snapshot is taken past {@link #SNAPSHOT_INTERVAL_BYTES}. */
  private long bytesSinceSnapshot;
  /** {@link System#nanoTime} of the last snapshot (or of the open). */
  private long lastSnapshotNanos = System.nanoTime();

  private PartitionLog(PartitionLocation location, Stream data, Stream meta, int leaderEpoch, LogSettings settings,
      Time time, AppendListener listener) {
    this.location = location;
    this.data = data;
    this.meta = meta;
    this.leaderEpoch = leaderEpoch;
    this.settings = settings;
    this.time = time;
    this.listener = listener;
    this.logEndOffset = data.nextOffset();
  }

  /**
   * Opens both streams with {@code leaderEpoch} (fencing any older holder), loads the last
   * snapshot, replays the data written after it to rebuild producer state, records the new
   * leader epoch and writes a fresh snapshot.
   */
  public static CompletableFuture<PartitionLog> open(StreamStore store, PartitionLocation location, int leaderEpoch,
      LogSettings settings, Time time, AppendListener listener) {
    long started = time.milliseconds();
    long[] phases = new long[3]; // when the streams opened, the snapshot was read, the replay ended
    CompletableFuture<Stream> dataF = store.openStream(location.dataStreamId(), leaderEpoch);
    CompletableFuture<Stream> metaF = store.openStream(location.metaStreamId(), leaderEpoch);
    CompletableFuture<PartitionLog> opened = dataF.thenCombine(metaF,
            (d, m) -> new PartitionLog(location, d, m, leaderEpoch, settings, time, listener))
        .thenCompose(p -> {
          phases[0] = time.milliseconds();
          return p.loadSnapshot().thenCompose(from -> {
            phases[1] = time.milliseconds();
            return p.replayFrom(from).thenApply(v -> from);
          }).thenCompose(from -> {
            phases[2] = time.milliseconds();
            return p.startEpoch().thenApply(v -> {
              long now = time.milliseconds();
              log.info("opened {} at leader epoch {} in {} ms (streams {} ms, snapshot read {} ms, replay from offset {} to {}"
                  + " {} ms, epoch snapshot {} ms)", p.topicPartition(), leaderEpoch, now - started, phases[0] - started,
                  phases[1] - phases[0], from, p.data.nextOffset(), phases[2] - phases[1], now - phases[2]);
              return p;
            });
          });
        });
    // a half-open partition must not keep a stream: the next leader could never take it
    return opened.handle((p, error) -> {
      if (error == null) {
        return CompletableFuture.completedFuture(p);
      }
      return CompletableFuture.allOf(closeIfOpened(dataF), closeIfOpened(metaF)).handle((v, e) -> {
        throw error instanceof CompletionException ce ? ce : new CompletionException(error);
      });
    }).thenCompose(f -> (CompletableFuture<PartitionLog>) f);
  }

  private static CompletableFuture<Void> closeIfOpened(CompletableFuture<Stream> stream) {
    return stream.handle((s, e) -> s).thenCompose(s -> s == null ? CompletableFuture.completedFuture(null) : s.close())
        .exceptionally(e -> null);
  }

  /**
   * True once the partition FAILED on a storage error (not because a newer leader fenced it): it
   * stays failed until the process restarts and recovers it from the WAL, so the node's
   * {@code /health} reports it.
   */
  public boolean failedForGood() {
    return state == State.FAILED && failedByStorage;
  }

  public TopicPartition topicPartition() {
    return location.topicPartition();
  }

  public PartitionLocation location() {
    return location;
  }

  public int leaderEpoch() {
    return leaderEpoch;
  }

  public void updateSettings(LogSettings newSettings) {
    this.settings = newSettings;
  }

  public LogSettings settings() {
    return settings;
  }

  /** Every offset below it is durable and readable. */
  public long highWatermark() {
    return data.nextOffset();
  }

  public long logStartOffset() {
    return data.startOffset();
  }

  /**
   * Appends one validated batch: checks the producer's sequence, writes offsets (and the
   * LogAppendTime) into the batch, appends it to the data stream and completes once durable.
   * A retried batch completes with its original offset and writes nothing.
   */
  public CompletableFuture<AppendResult> append(ProducedBatch batch) {
    return append(batch, UNVERIFIED);
  }

  /**
   * Whether {@code producerId} has a transaction open here at {@code epoch}: its next transactional
   * batch needs no verification by the transaction coordinator.
   */
  public synchronized boolean inTransaction(long producerId, short epoch) {
    return txns.openTransactionStart(producerId) >= 0 && producers.epochOf(producerId) == epoch;
  }

  /**
   * Starts the verification of a producer's first transactional write here (KIP-890): null when
   * it already has a transaction open at {@code epoch} (nothing to verify), else the guard to pass
   * to {@link #append(ProducedBatch, Object)} once its coordinator confirmed the partition is in
   * the transaction. A marker of the producer in between voids the guard, so the append is refused.
   */
  public synchronized Object startVerification(long producerId, short epoch) {
    if (inTransaction(producerId, epoch)) {
      return null;
    }
    return verifications.computeIfAbsent(producerId, id -> new Object());
  }

  /**
   * Issues a client batch of {@code producerId} with {@code append} once {@code ready} completes (its
   * KIP-890 verification outcome, passed to {@code append}), and never before the batches of the
   * same producer that reached this partition earlier and still wait: the pipelined requests of a
   * connection (up to {@code max.in.flight.requests.per.connection}) may finish their verifications
   * out of order, but their batches are appended in the order they were sent, as Kafka's broker,
   * which reads one request of a connection at a time, appends them. Without this a later batch
   * could reach the sequence check first, be refused OUT_OF_ORDER_SEQUENCE, and the batches before
   * it be acknowledged meanwhile, so that the client finds the refused batch next in line and fails.
   * With nothing waiting and {@code ready} done, {@code append} runs at once on the calling thread.
   * A {@code ready} that failed fails the batch without calling {@code append}.
   */
  public <T> CompletableFuture<AppendResult> appendInOrder(long producerId, CompletableFuture<T> ready,
      java.util.function.Function<T, CompletableFuture<AppendResult>> append) {
    CompletableFuture<Void> previous;
    CompletableFuture<Void> issued = new CompletableFuture<>();
    synchronized (this) {
      previous = waitingAppends.get(producerId);
      if (previous == null && ready.isDone()) {
        return issue(ready, append); // nothing to wait for: issued under the monitor, so no later batch can pass it
      }
      waitingAppends.put(producerId, issued);
    }
    CompletableFuture<?> turn = previous == null ? ready : CompletableFuture.allOf(previous, ready);
    return turn.handle((x, e) -> null).thenCompose(x -> {
      synchronized (this) {
        try {
          return issue(ready, append);
        } finally {
          waitingAppends.remove(producerId, issued);
          issued.complete(null);
        }
      }
    });
  }

  private static <T> CompletableFuture<AppendResult> issue(CompletableFuture<T> ready,
      java.util.function.Function<T, CompletableFuture<AppendResult>> append) {
    T outcome;
    try {
      outcome = ready.join();
    } catch (CompletionException | java.util.concurrent.CancellationException e) {
      return CompletableFuture.failedFuture(e.getCause() != null ? e.getCause() : e);
    }
    try {
      return append.apply(outcome);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * {@link #append(ProducedBatch)} of a client's batch after KIP-890's verification: a
   * transactional batch that starts a transaction here (none open for its producer and epoch) is
   * refused with INVALID_TXN_STATE unless {@code verificationGuard} is the producer's current guard
   * ({@link #startVerification}); {@link #UNVERIFIED} skips the check.
   */
  public CompletableFuture<AppendResult> append(ProducedBatch batch, Object verificationGuard) {
    return append(batch, verificationGuard, false);
  }

  /**
   * {@link #append(ProducedBatch, Object)}; {@code transactionsV2} tells that the batch comes from a
   * transactions V2 client (KIP-890: Produce v12+, its epoch bumped at every transaction end). Such a
   * client starts every transaction at sequence 0, so, as in Kafka, a verified first batch of a
   * producer this partition does not know must carry sequence 0: a later batch whose predecessors
   * were refused is itself refused OUT_OF_ORDER_SEQUENCE (the client retries it) instead of opening
   * the producer here with a gap.
   */
  public CompletableFuture<AppendResult> append(ProducedBatch batch, Object verificationGuard, boolean transactionsV2) {
    if (batch.transactional() && !batch.idempotent()) {
      return CompletableFuture.failedFuture(new PartitionException(PartitionException.Outcome.INVALID_REQUEST,
          "a transactional batch must carry a producer id"));
    }
    // written by the group coordinator for TxnOffsetCommit: a transaction's records without producer sequences
    boolean coordinatorWrite = batch.transactional() && batch.baseSequence() < 0;
    if (batch.sizeBytes() > settings.maxMessageBytes()) {
      return CompletableFuture.failedFuture(new io.tidemark.broker.record.BatchRejectedException(
          io.tidemark.broker.record.BatchRejectedException.Reason.TOO_LARGE,
          "record batch of " + batch.sizeBytes() + " bytes is larger than max.message.bytes=" + settings.maxMessageBytes()));
    }
    CompletableFuture<Long> appended;
    long base;
    long appendTime;
    synchronized (this) {
      try {
        checkOpen();
      } catch (PartitionException e) {
        return CompletableFuture.failedFuture(e);
      }
      if (batch.idempotent() && !coordinatorWrite) {
        ProducerStateTable.BatchMetadata dup;
        try {
          boolean verified = verificationGuard != UNVERIFIED && verificationGuard != null;
          dup = producers.check(batch.producerId(), batch.producerEpoch(), batch.baseSequence(), batch.lastSequence(),
              verified && transactionsV2);
        } catch (PartitionException e) {
          return CompletableFuture.failedFuture(e);
        }
        if (dup != null) {
          long ts = settings.logAppendTime() ? dup.timestamp() : -1;
          return lastAppend.thenApply(x -> new AppendResult(dup.baseOffset(), ts, logStartOffset(), true));
        }
        if (batch.transactional() && verificationGuard != UNVERIFIED && !inTransaction(batch.producerId(), batch.producerEpoch())
            && (verificationGuard == null || verifications.get(batch.producerId()) != verificationGuard)) {
          return CompletableFuture.failedFuture(new PartitionException(PartitionException.Outcome.INVALID_TXN_STATE,
              "producer " + batch.producerId() + " has no verified transaction in " + topicPartition()
                  + " (its transaction ended, or the partition was never added to it)"));
        }
      }
      base = logEndOffset;
      appendTime = settings.logAppendTime() ? time.milliseconds() : -1;
      RecordBatches.assignOffsets(batch.buffer(), base, leaderEpoch, appendTime);
      appended = data.appendOwned(batch.recordCount(), batch.buffer()); // see the class comment: the produce path's copies
      if (appended.isCompletedExceptionally()) {
        // Refused at once (backpressure, or the stream stopped): nothing was assigned, so nothing changes here.
        return appended.handle((offset, error) -> {
          throw refused(error);
        });
      }
      logEndOffset += batch.recordCount();
      sizeBytes += batch.sizeBytes();
      bytesSinceSnapshot += batch.sizeBytes();
      long ts = appendTime >= 0 ? appendTime : batch.maxTimestamp();
      if (batch.idempotent() && !coordinatorWrite) {
        producers.update(batch.producerId(), batch.producerEpoch(), batch.baseSequence(), batch.lastSequence(), base,
            batch.recordCount(), ts);
      }
      if (batch.transactional()) {
        txns.onTransactionalBatch(batch.producerId(), base);
        if (!coordinatorWrite) {
          verifications.remove(batch.producerId()); // the transaction is open here now
        }
      }
      if (ts > maxTimestamp) {
        maxTimestamp = ts;
        maxTimestampBatch = base;
      }
      lastAppend = appended;
    }
    return appended.handle((offset, error) -> {
      if (error != null) {
        throw fail(error);
      }
      if (offset != base) {
        throw fail(new IllegalStateException("stream assigned offset " + offset + " to a batch written for offset " + base));
      }
      listener.onAppend(this);
      maybeSnapshot();
      return new AppendResult(base, appendTime, logStartOffset(), false);
    });
  }

  /**
   * Appends an end-transaction marker (COMMIT or ABORT) for {@code producerId}, ending its open
   * transaction here: an ABORT enters the aborted-transaction index, and the last stable offset
   * moves past the transaction once the marker is durable. Refused with INVALID_PRODUCER_EPOCH when
   * the producer already wrote here with a newer epoch, and with COORDINATOR_FENCED when a marker
   * of a newer transaction coordinator was already written (Kafka's checks); completes once durable.
   * A marker for a producer without an open transaction is written all the same (a retried marker).
   */
  public CompletableFuture<AppendResult> appendMarker(long producerId, short producerEpoch, int coordinatorEpoch, boolean commit) {
    CompletableFuture<Long> appended;
    long base;
    synchronized (this) {
      try {
        checkOpen();
        producers.checkMarkerEpoch(producerId, producerEpoch);
      } catch (PartitionException e) {
        return CompletableFuture.failedFuture(e);
      }
      if (coordinatorEpoch < txns.coordinatorEpoch(producerId)) {
        return CompletableFuture.failedFuture(new PartitionException(PartitionException.Outcome.COORDINATOR_FENCED,
            "marker of coordinator epoch " + coordinatorEpoch + " for producer " + producerId + " in " + topicPartition()
                + " is older than epoch " + txns.coordinatorEpoch(producerId) + " already seen"));
      }
      long now = time.milliseconds();
      ByteBuffer marker = RecordBatches.endTxnMarker(producerId, producerEpoch, coordinatorEpoch, commit, now);
      base = logEndOffset;
      RecordBatches.assignOffsets(marker, base, leaderEpoch, settings.logAppendTime() ? now : -1);
      appended = data.append(1, marker);
      if (appended.isCompletedExceptionally()) {
        return appended.handle((offset, error) -> {
          throw refused(error);
        });
      }
      logEndOffset += 1;
      sizeBytes += marker.remaining();
      bytesSinceSnapshot += marker.remaining();
      producers.onMarker(producerId, producerEpoch);
      txns.onMarker(producerId, coordinatorEpoch, commit, base);
      verifications.remove(producerId); // a verification started before this marker belongs to the ended transaction
      lastAppend = appended;
    }
    return appended.handle((offset, error) -> {
      if (error != null) {
        throw fail(error);
      }
      if (offset != base) {
        throw fail(new IllegalStateException("stream assigned offset " + offset + " to a marker written for offset " + base));
      }
      listener.onAppend(this);
      maybeSnapshot();
      return new AppendResult(base, -1, logStartOffset(), false);
    });
  }

  /**
   * The last stable offset: below it every transaction is decided (committed or aborted) and
   * durable; {@code read_committed} consumers read up to it. Equals the high watermark when no
   * transaction is open.
   */
  public synchronized long lastStableOffset() {
    return txns.lastStableOffset(highWatermark());
  }

  /** Aborted transactions overlapping {@code [fromOffset, toOffset)}: {producer id, first offset}, oldest first. */
  public synchronized List<long[]> abortedTransactions(long fromOffset, long toOffset) {
    List<long[]> out = new ArrayList<>();
    for (TransactionIndex.Aborted a : txns.abortedIn(fromOffset, toOffset)) {
      out.add(new long[] {a.producerId(), a.firstOffset()});
    }
    return out;
  }

  /** Aborted transactions overlapping {@code [fromOffset, toOffset)}: {producer id, first offset, marker offset}, oldest first. */
  public synchronized List<long[]> abortedTransactionRanges(long fromOffset, long toOffset) {
    List<long[]> out = new ArrayList<>();
    for (TransactionIndex.Aborted a : txns.abortedIn(fromOffset, toOffset)) {
      out.add(new long[] {a.producerId(), a.firstOffset(), a.lastOffset()});
    }
    return out;
  }

  /**
   * Whole batches from {@code offset} up to the last stable offset (the read of a
   * {@code read_committed} fetch; aborted data is still in it, the client skips it by the aborted
   * transactions). An offset between the LSO and the high watermark reads nothing.
   */
  public CompletableFuture<ReadResult> readCommitted(long offset, int maxBytes) {
    long lso = lastStableOffset();
    if (offset >= lso && offset <= highWatermark() && offset >= logStartOffset()) {
      return CompletableFuture.completedFuture(new ReadResult(List.of(), highWatermark(), logStartOffset()));
    }
    return read(offset, maxBytes, lso);
  }

  /**
   * Committed data only, for in-process readers (table topics): like {@link #readCommitted}, with
   * the batches of aborted transactions left out (control batches stay, readers skip them).
   */
  public CompletableFuture<ReadResult> readCommittedOnly(long offset, int maxBytes) {
    return readCommitted(offset, maxBytes).thenApply(r -> {
      if (r.batches().isEmpty()) {
        return r;
      }
      StoredBatch first = RecordBatches.header(r.batches().get(0));
      StoredBatch last = RecordBatches.header(r.batches().get(r.batches().size() - 1));
      List<TransactionIndex.Aborted> aborted;
      synchronized (this) {
        aborted = txns.abortedIn(first.baseOffset(), last.lastOffset() + 1);
      }
      if (aborted.isEmpty()) {
        return r;
      }
      List<ByteBuffer> kept = new ArrayList<>(r.batches().size());
      for (ByteBuffer b : r.batches()) {
        StoredBatch h = RecordBatches.header(b);
        boolean abortedData = h.transactional() && !h.control() && aborted.stream().anyMatch(a -> a.producerId() == h.producerId()
            && a.firstOffset() <= h.baseOffset() && h.baseOffset() < a.lastOffset());
        if (!abortedData) {
          kept.add(b);
        }
      }
      return new ReadResult(kept, r.highWatermark(), r.logStartOffset());
    });
  }

  private void maybeSnapshot() {
    boolean due;
    synchronized (this) {
      due = state == State.OPEN && (bytesSinceSnapshot >= SNAPSHOT_INTERVAL_BYTES
          || bytesSinceSnapshot > 0 && System.nanoTime() - lastSnapshotNanos >= SNAPSHOT_INTERVAL_NANOS);
    }
    if (due) {
      writeSnapshot().exceptionally(e -> {
        log.warn("periodic snapshot of {} not written: {}", topicPartition(), e.toString());
        return null;
      });
    }
  }

  /**
   * The error for an append its stream refused at once: backpressure leaves the partition open (a
   * retriable BUSY); any other refusal means the stream stopped, which fails the partition.
   */
  private PartitionException refused(Throwable error) {
    Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    if (cause instanceof AppendBackpressureException) {
      return new PartitionException(PartitionException.Outcome.BUSY, "partition " + topicPartition()
          + " cannot take the write now: " + cause.getMessage(), cause);
    }
    return fail(cause);
  }

  private PartitionException fail(Throwable error) {
    Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    synchronized (this) {
      if (state == State.OPEN) {
        state = State.FAILED;
        failure = String.valueOf(cause.getMessage());
        failedByStorage = !(cause instanceof StreamFencedException);
        log.warn("partition {} failed and must be reopened: {}", topicPartition(), cause.toString());
      }
    }
    if (cause instanceof PartitionException pe) {
      return pe;
    }
    if (cause instanceof StreamFencedException) {
      return new PartitionException(PartitionException.Outcome.NOT_LEADER, "partition " + topicPartition() + " moved: " + cause.getMessage(), cause);
    }
    return new PartitionException(PartitionException.Outcome.STORAGE_ERROR, "append to " + topicPartition() + " failed: " + cause.getMessage(), cause);
  }

  private void checkOpen() {
    if (state != State.OPEN) {
      throw new PartitionException(state == State.CLOSED ? PartitionException.Outcome.NOT_LEADER : PartitionException.Outcome.STORAGE_ERROR,
          "partition " + topicPartition() + " is " + state + (failure.isEmpty() ? "" : ": " + failure));
    }
  }

  /**
   * Whole batches from {@code offset} up to the high watermark, at most {@code maxBytes} unless
   * the first batch alone is larger (it is then returned whole, KIP-74).
   */
  public CompletableFuture<ReadResult> read(long offset, int maxBytes) {
    return read(offset, maxBytes, Long.MAX_VALUE);
  }

  private CompletableFuture<ReadResult> read(long offset, int maxBytes, long endOffset) {
    if (state != State.OPEN) {
      try {
        checkOpen();
      } catch (PartitionException e) {
        return CompletableFuture.failedFuture(e);
      }
    }
    long hw = highWatermark();
    long start = logStartOffset();
    if (offset < start || offset > hw) {
      return CompletableFuture.failedFuture(new PartitionException(PartitionException.Outcome.OFFSET_OUT_OF_RANGE,
          "offset " + offset + " is outside [" + start + ", " + hw + "] of " + topicPartition()));
    }
    if (offset == hw) {
      return CompletableFuture.completedFuture(new ReadResult(List.of(), hw, start));
    }
    long end = Math.min(hw, endOffset);
    return data.fetch(offset, end, Math.max(1, maxBytes)).handle((r, e) -> {
      if (e != null) {
        throw translateReadError(e);
      }
      List<ByteBuffer> out = new ArrayList<>(r.batches().size());
      for (StreamBatch b : r.batches()) {
        if (b.baseOffset() >= end) {
          break;
        }
        DamagedRanges.Range bad = damage(b, false);
        if (bad != null) {
          if (out.isEmpty()) {
            throw new DamagedRangeException(topicPartition(), bad.fromOffset(), bad.toOffset(), bad.problem());
          }
          break; // serve what precedes the damage; the next fetch starts at it and gets the error
        }
        out.add(b.payload());
      }
      return new ReadResult(out, hw, start);
    });
  }

  /** The key/value records of whole batches read for an internal loader, and the offset to read next. */
  public record RecordPage(List<KeyValue> records, long nextOffset) {}

  /**
   * Reads key/value records from {@code offset} for an internal loader ({@code __consumer_offsets},
   * {@code _schemas}, the table control topic): like {@link #read}, but a damaged range at
   * {@code offset} is skipped (the page is empty and {@code nextOffset} its end), and a batch whose
   * records cannot be decoded is reported as damaged and left out. Loaders thus never stop at bad bytes.
   */
  public CompletableFuture<RecordPage> readRecords(long offset, int maxBytes) {
    return readRecords(offset, maxBytes, false);
  }

  /**
   * Like {@link #readRecords(long, int)}; with {@code withMarkers}, records carry the producer of
   * their transactional batch and end-transaction markers are included (see {@link KeyValue}).
   */
  public CompletableFuture<RecordPage> readRecords(long offset, int maxBytes, boolean withMarkers) {
    return read(offset, maxBytes).handle((r, e) -> {
      if (e != null) {
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        if (cause instanceof DamagedRangeException d) {
          return new RecordPage(List.of(), d.toOffset());
        }
        throw e instanceof CompletionException ce ? ce : new CompletionException(e);
      }
      List<KeyValue> records = new ArrayList<>();
      long next = offset;
      for (ByteBuffer b : r.batches()) {
        StoredBatch h = RecordBatches.header(b);
        try {
          for (KeyValue kv : RecordBatches.keyValues(b, withMarkers)) {
            if (kv.offset() >= offset) {
              records.add(kv);
            }
          }
        } catch (RuntimeException bad) {
          records.removeIf(kv -> kv.offset() >= h.baseOffset());
          reportDamage(h.baseOffset(), h.lastOffset() + 1, "records cannot be decoded: " + bad.getMessage());
        }
        next = Math.max(next, h.lastOffset() + 1);
      }
      return new RecordPage(records, next);
    });
  }

  /** The damaged ranges found since this partition opened (at most {@value #MAX_DAMAGED_RANGES} remembered). */
  public List<long[]> damagedRanges() {
    List<long[]> out = new ArrayList<>();
    for (DamagedRanges.Range r : damaged.ranges()) {
      out.add(new long[] {r.fromOffset(), r.toOffset()});
    }
    return out;
  }

  /** How many damaged ranges reads and replay have found since this partition opened. */
  public long damagedRangesFound() {
    return damaged.found();
  }

  /**
   * The damage of a stored batch (known, or found now by its header and, with {@code checkCrc},
   * its CRC), reported when new; null when the batch is valid.
   */
  private DamagedRanges.Range damage(StreamBatch b, boolean checkCrc) {
    DamagedRanges.Range known = damaged.startingAt(b.baseOffset());
    if (known != null) {
      return known;
    }
    String problem = RecordBatches.storedBatchProblem(b.payload(), b.baseOffset(), b.recordCount(), checkCrc);
    if (problem == null) {
      return null;
    }
    reportDamage(b.baseOffset(), b.nextOffset(), problem);
    return new DamagedRanges.Range(b.baseOffset(), b.nextOffset(), problem);
  }

  private void reportDamage(long fromOffset, long toOffset, String problem) {
    if (damaged.add(fromOffset, toOffset, problem)) {
      TopicPartition tp = topicPartition();
      log.error("damaged data in topic {} partition {} offsets {}..{} ({}): fetches of that range get CORRUPT_MESSAGE, "
          + "the rest of the partition serves", tp.topic(), tp.partition(), fromOffset, toOffset - 1, problem);
    }
  }

  private RuntimeException translateReadError(Throwable e) {
    Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    if (cause instanceof OffsetOutOfRangeException) {
      return new PartitionException(PartitionException.Outcome.OFFSET_OUT_OF_RANGE, cause.getMessage(), cause);
    }
    if (cause instanceof StreamFencedException) {
      return fail(cause);
    }
    if (cause instanceof RuntimeException re) {
      return re;
    }
    return new CompletionException(cause);
  }

  /** Offset and timestamp of the first record with timestamp ≥ {@code timestampMs}, or null. */
  public CompletableFuture<long[]> offsetForTimestamp(long timestampMs) {
    return scanForTimestamp(logStartOffset(), highWatermark(), timestampMs);
  }

  private CompletableFuture<long[]> scanForTimestamp(long from, long hw, long ts) {
    if (from >= hw) {
      return CompletableFuture.completedFuture(null);
    }
    return data.fetch(from, hw, SCAN_CHUNK_BYTES).thenCompose(r -> {
      long next = from;
      for (StreamBatch b : r.batches()) {
        long[] hit = damage(b, false) == null ? RecordBatches.firstAtOrAfter(b.payload(), ts) : null;
        if (hit != null && hit[0] >= from) {
          return CompletableFuture.completedFuture(hit);
        }
        next = b.nextOffset();
      }
      return next <= from ? CompletableFuture.completedFuture(null) : scanForTimestamp(next, hw, ts);
    });
  }

  /** Offset and timestamp of the record with the largest timestamp, or null when empty. */
  public CompletableFuture<long[]> maxTimestampOffset() {
    long ts;
    long batchBase;
    synchronized (this) {
      ts = maxTimestamp;
      batchBase = maxTimestampBatch;
    }
    if (ts < 0 || batchBase < logStartOffset() || batchBase >= highWatermark()) {
      return CompletableFuture.completedFuture(null);
    }
    return data.fetch(batchBase, batchBase + 1, 1).thenApply(r -> r.batches().isEmpty() || damage(r.batches().get(0), false) != null
        ? null : new long[] {RecordBatches.offsetOfTimestamp(r.batches().get(0).payload(), ts), ts});
  }

  /**
   * For OffsetForLeaderEpoch: the largest epoch ≤ {@code requested} in this partition's history
   * and the end offset of that epoch (start of the next one, or the log end), or
   * {@code [-1, -1]} when the requested epoch is older than the history.
   */
  public synchronized long[] endOffsetForEpoch(int requested) {
    int found = -1;
    for (int i = 0; i < epochs.size(); i++) {
      if (epochs.get(i).epoch() <= requested) {
        found = i;
      }
    }
    if (found < 0) {
      return new long[] {-1, -1};
    }
    long end = found + 1 < epochs.size() ? epochs.get(found + 1).startOffset() : logEndOffset;
    return new long[] {epochs.get(found).epoch(), end};
  }

  /** The leader epoch under which {@code offset} was written (-1 when unknown). */
  public synchronized int epochForOffset(long offset) {
    int found = -1;
    for (EpochStart e : epochs) {
      if (e.startOffset() <= offset) {
        found = e.epoch();
      }
    }
    return found < 0 && !epochs.isEmpty() ? epochs.get(0).epoch() : found;
  }

  /** Moves the log start to {@code offset} (-1 = high watermark); returns the new low watermark. */
  public CompletableFuture<Long> deleteRecordsBefore(long offset) {
    long hw = highWatermark();
    long target = offset == -1 ? hw : offset;
    if (target < 0 || target > hw) {
      return CompletableFuture.failedFuture(new PartitionException(PartitionException.Outcome.OFFSET_OUT_OF_RANGE,
          "cannot delete records before " + offset + ": high watermark of " + topicPartition() + " is " + hw));
    }
    if (target <= logStartOffset()) {
      return CompletableFuture.completedFuture(logStartOffset());
    }
    long before = logStartOffset();
    return data.fetch(before, target, Integer.MAX_VALUE).thenCompose(r -> {
      long freed = 0;
      for (StreamBatch b : r.batches()) {
        if (b.nextOffset() <= target) {
          freed += b.payload().remaining();
        }
      }
      long f = freed;
      return data.trim(target).thenApply(v -> {
        synchronized (this) {
          sizeBytes = Math.max(0, sizeBytes - f);
        }
        return v;
      });
    }).thenCompose(v -> writeSnapshot()).thenApply(v -> logStartOffset());
  }

  /** Bytes held between log start and log end. */
  public synchronized long sizeBytes() {
    return sizeBytes;
  }

  /**
   * Deletes the oldest batches that are past {@code retentionMs} (by their max timestamp) or
   * that keep the partition above {@code retentionBytes}; -1 disables either rule. Looks at most
   * {@code maxScanBytes} of the oldest data per call (later calls continue). Returns the new log
   * start offset.
   */
  public CompletableFuture<Long> enforceRetention(long nowMs, long retentionMs, long retentionBytes, int maxScanBytes) {
    if ((retentionMs < 0 && retentionBytes < 0) || state != State.OPEN) {
      return CompletableFuture.completedFuture(logStartOffset());
    }
    long start = logStartOffset();
    long hw = highWatermark();
    if (start >= hw) {
      return CompletableFuture.completedFuture(start);
    }
    return data.fetch(start, hw, maxScanBytes).thenCompose(r -> {
      long trimTo = start;
      long removed = 0;
      long size;
      synchronized (this) {
        size = sizeBytes;
      }
      long pending = 0; // bytes of damaged batches waiting for the verdict on the next intact batch
      for (StreamBatch b : r.batches()) {
        int bytes = b.payload().remaining();
        boolean oversized = retentionBytes >= 0 && size - removed - pending - bytes >= retentionBytes;
        boolean intact = damage(b, false) == null;
        if (!intact && !oversized) {
          pending += bytes; // no timestamp to judge by: it goes when the intact batch after it expires
          continue;
        }
        StoredBatch h = intact ? RecordBatches.header(b.payload()) : null;
        boolean expired = h != null && retentionMs >= 0 && h.maxTimestamp() >= 0 && h.maxTimestamp() < nowMs - retentionMs;
        if (!expired && !oversized) {
          break;
        }
        trimTo = b.nextOffset();
        removed += pending + bytes;
        pending = 0;
      }
      if (trimTo <= start) {
        return CompletableFuture.completedFuture(start);
      }
      long freed = removed;
      long target = trimTo;
      return data.trim(target).thenApply(v -> {
        synchronized (this) {
          sizeBytes = Math.max(0, sizeBytes - freed);
        }
        log.info("retention moved the start of {} to {} ({} bytes freed)", topicPartition(), target, freed);
        return target;
      });
    });
  }

  /**
   * Producer ids with state in this partition: id, epoch, last sequence, last timestamp, first
   * offset of last batches, coordinator epoch of its last marker (-1), first offset of its open
   * transaction (-1).
   */
  public synchronized List<long[]> producerStates() {
    List<long[]> out = new ArrayList<>();
    java.util.Set<Long> listed = new java.util.HashSet<>();
    for (ProducerStateTable.Entry e : producers.entries()) {
      long firstOffset = e.batches.isEmpty() ? -1 : e.batches.peekFirst().baseOffset();
      listed.add(e.producerId);
      out.add(new long[] {e.producerId, e.epoch, e.lastSeq(), e.lastTimestamp, firstOffset, txns.coordinatorEpoch(e.producerId),
          txns.openTransactionStart(e.producerId)});
    }
    // coordinator-written transactions (TxnOffsetCommit) have no sequences but are open all the same
    txns.openTransactions().forEach((pid, first) -> {
      if (!listed.contains(pid)) {
        out.add(new long[] {pid, -1, -1, -1, first, txns.coordinatorEpoch(pid), first});
      }
    });
    return out;
  }

  /**
   * Stops taking appends (they are answered NOT_LEADER from now on), waits for appends in flight,
   * writes a last snapshot (not trimming the meta stream: the next holder's snapshot does) and
   * closes both streams together, so that the storage engine uploads their remaining data in one
   * object and the two closes reach the controller at once.
   */
  public CompletableFuture<Void> close() {
    long started = time.milliseconds();
    boolean wasOpen;
    synchronized (this) {
      if (state == State.CLOSED) {
        return CompletableFuture.completedFuture(null);
      }
      wasOpen = state == State.OPEN;
      state = State.CLOSED;
    }
    long[] snapshotDone = {started};
    CompletableFuture<Void> snap = wasOpen
        ? writeSnapshot(false).exceptionally(e -> {
          log.warn("last snapshot of {} not written: {}", topicPartition(), e.toString());
          return null;
        })
        : CompletableFuture.completedFuture(null);
    return snap.thenCompose(v -> {
      snapshotDone[0] = time.milliseconds();
      return CompletableFuture.allOf(data.close(), meta.close());
    }).whenComplete((v, e) -> {
      long now = time.milliseconds();
      log.info("closed {} (leader epoch {}) at offset {} in {} ms (appends drained and last snapshot {} ms, upload and"
          + " stream closes {} ms){}", topicPartition(), leaderEpoch, data.nextOffset(), now - started,
          snapshotDone[0] - started, now - snapshotDone[0], e == null ? "" : "; failed: " + e);
    });
  }

  /** Releases the data: trims both streams to their ends and closes them (topic deletion). */
  public CompletableFuture<Void> deleteAndClose() {
    synchronized (this) {
      state = State.CLOSED;
    }
    return lastAppend.handle((x, e) -> null)
        .thenCompose(x -> CompletableFuture.allOf(data.trim(data.nextOffset()), meta.trim(meta.nextOffset())))
        .handle((x, e) -> null)
        .thenCompose(x -> CompletableFuture.allOf(data.close(), meta.close()));
  }

  /** The log cleaner's checkpoint: every offset below it has been cleaned (0 before the first pass). */
  public synchronized long cleanedOffset() {
    return cleanedOffset;
  }

  /**
   * Records that the cleaner finished a pass up to {@code offset} and writes a snapshot, so the
   * checkpoint survives a crash and moves with the partition; completes once it is durable. The
   * aborted transactions whose ABORT marker is at one of {@code emptyAbortedMarkers} had no data
   * left: they leave the aborted-transaction index (read_committed fetches have nothing of theirs
   * to skip).
   */
  public CompletableFuture<Void> recordCleaned(long offset, java.util.Set<Long> emptyAbortedMarkers) {
    synchronized (this) {
      if (state != State.OPEN) {
        return CompletableFuture.failedFuture(new PartitionException(PartitionException.Outcome.NOT_LEADER,
            "partition " + topicPartition() + " is " + state));
      }
      cleanedOffset = Math.max(cleanedOffset, offset);
      txns.dropAborted(emptyAbortedMarkers);
      return writeSnapshot();
    }
  }

  // ---- snapshots and recovery ----

  private CompletableFuture<Long> loadSnapshot() {
    long end = meta.nextOffset();
    if (end <= meta.startOffset()) {
      // never opened to the end before (each open writes a snapshot): the data from offset 0 holds every producer
      synchronized (this) {
        producers.complete(data.startOffset() == 0);
      }
      return CompletableFuture.completedFuture(data.startOffset());
    }
    return meta.fetch(end - 1, end, Integer.MAX_VALUE).thenApply(r -> {
      if (r.batches().isEmpty()) {
        return forgetSnapshot();
      }
      try {
        return readSnapshot(r.batches().get(r.batches().size() - 1).payload());
      } catch (RuntimeException e) {
        TopicPartition tp = topicPartition();
        log.error("the state snapshot of topic {} partition {} (meta stream offset {}) is unreadable ({}); rebuilding "
            + "producer state and leader epochs from the whole data stream", tp.topic(), tp.partition(), end - 1, e.getMessage());
        return forgetSnapshot();
      }
    });
  }

  /** Back to the state of an empty partition, to replay from the data stream's start. */
  private synchronized long forgetSnapshot() {
    producers.clear();
    txns.clear();
    cleanedOffset = 0;
    epochs.clear();
    sizeBytes = 0;
    maxTimestamp = -1;
    maxTimestampBatch = -1;
    return data.startOffset();
  }

  private synchronized long readSnapshot(ByteBuffer payload) {
    byte[] bytes = new byte[payload.remaining()];
    payload.duplicate().get(bytes);
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
      int version = in.readInt();
      if (version < 1 || version > SNAPSHOT_VERSION) {
        throw new IllegalStateException("unknown partition snapshot version " + version + " in meta stream of " + topicPartition());
      }
      long snapshotOffset = in.readLong();
      in.readLong(); // log start at snapshot time; the data stream's start offset is authoritative
      sizeBytes = in.readLong();
      maxTimestamp = in.readLong();
      maxTimestampBatch = in.readLong();
      int n = in.readInt();
      epochs.clear();
      for (int i = 0; i < n; i++) {
        epochs.add(new EpochStart(in.readInt(), in.readLong()));
      }
      producers.readFrom(in);
      cleanedOffset = version >= 2 ? in.readLong() : 0;
      if (version >= 3) {
        txns.readFrom(in);
      } else {
        txns.clear();
      }
      producers.complete(version >= 4 && in.readBoolean()); // older snapshots did not say: assume forgotten producers
      return Math.max(snapshotOffset, data.startOffset());
    } catch (IOException e) {
      throw new UncheckedIOException("partition snapshot of " + topicPartition() + " is unreadable", e);
    }
  }

  private CompletableFuture<Void> replayFrom(long from) {
    long end = data.nextOffset();
    if (from >= end) {
      return CompletableFuture.completedFuture(null);
    }
    return data.fetch(from, end, SCAN_CHUNK_BYTES).thenCompose(r -> {
      long next = from;
      synchronized (this) {
        for (StreamBatch b : r.batches()) {
          if (b.nextOffset() > from) {
            if (damage(b, true) == null) {
              replayBatch(RecordBatches.header(b.payload()), b.payload());
            } else {
              producers.complete(false); // the damaged batch's producer may not be known
            }
            sizeBytes += b.payload().remaining();
          }
          next = b.nextOffset();
        }
      }
      return next <= from ? CompletableFuture.completedFuture(null) : replayFrom(next);
    }).exceptionallyCompose(e -> {
      Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
      if (!(cause instanceof CorruptObjectException || cause instanceof CorruptBatchException)) {
        return CompletableFuture.failedFuture(cause);
      }
      // Stored objects that fail their checks never heal: open with the state replayed so far rather than never.
      synchronized (this) {
        producers.complete(false); // the unreadable batches' producers are not known
      }
      TopicPartition tp = topicPartition();
      log.error("data of topic {} partition {} from offset {} cannot be read ({}); producer state is rebuilt up to that "
          + "offset and fetches there fail", tp.topic(), tp.partition(), from, cause.getMessage());
      return CompletableFuture.completedFuture(null);
    });
  }

  private void replayBatch(StoredBatch b, ByteBuffer payload) {
    if (b.producerId() >= 0 && !b.control() && b.baseSequence() >= 0) {
      producers.update(b.producerId(), b.producerEpoch(), b.baseSequence(), b.lastSequence(), b.baseOffset(), b.recordCount(),
          b.maxTimestamp());
    }
    if (b.transactional() && !b.control()) {
      txns.onTransactionalBatch(b.producerId(), b.baseOffset());
    }
    if (b.control() && b.producerId() >= 0) {
      RecordBatches.Marker m = RecordBatches.marker(payload);
      if (m != null) {
        producers.onMarker(b.producerId(), b.producerEpoch());
        txns.onMarker(b.producerId(), m.coordinatorEpoch(), m.commit(), b.baseOffset());
      }
    }
    if (b.maxTimestamp() > maxTimestamp) {
      maxTimestamp = b.maxTimestamp();
      maxTimestampBatch = b.baseOffset();
    }
    if (b.partitionLeaderEpoch() >= 0 && (epochs.isEmpty() || epochs.get(epochs.size() - 1).epoch() < b.partitionLeaderEpoch())) {
      epochs.add(new EpochStart(b.partitionLeaderEpoch(), b.baseOffset()));
    }
  }

  private CompletableFuture<Void> startEpoch() {
    synchronized (this) {
      logEndOffset = data.nextOffset();
      if (epochs.isEmpty() || epochs.get(epochs.size() - 1).epoch() < leaderEpoch) {
        epochs.add(new EpochStart(leaderEpoch, logEndOffset));
      }
    }
    return writeSnapshot();
  }

  /**
   * Captures the state as of the last assigned offset and writes it to the meta stream once every
   * batch it covers is durable (so a snapshot never describes data that could still be lost).
   * Snapshots are written one at a time; the meta stream is trimmed to the newest.
   */
  private CompletableFuture<Void> writeSnapshot() {
    return writeSnapshot(true);
  }

  /**
   * As above; completes once the snapshot is durable in the meta stream (a write to the WAL).
   * With {@code trim}, the meta stream is then trimmed to it in the background: a trim uploads the
   * meta stream and writes to the controller, which nobody needs to wait for (opening a partition
   * serves without it). Trims run one after another; a failed one (the partition closed meanwhile)
   * is only logged, the next one covers it.
   */
  private CompletableFuture<Void> writeSnapshot(boolean trim) {
    byte[] bytes;
    CompletableFuture<Long> covered;
    synchronized (this) {
      ByteArrayOutputStream buf = new ByteArrayOutputStream();
      try (DataOutputStream out = new DataOutputStream(buf)) {
        out.writeInt(SNAPSHOT_VERSION);
        out.writeLong(logEndOffset);
        out.writeLong(data.startOffset());
        out.writeLong(sizeBytes);
        out.writeLong(maxTimestamp);
        out.writeLong(maxTimestampBatch);
        out.writeInt(epochs.size());
        for (EpochStart e : epochs) {
          out.writeInt(e.epoch());
          out.writeLong(e.startOffset());
        }
        producers.writeTo(out);
        out.writeLong(cleanedOffset);
        txns.trimBelow(data.startOffset());
        txns.writeTo(out);
        out.writeBoolean(producers.complete());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      bytes = buf.toByteArray();
      covered = lastAppend;
      bytesSinceSnapshot = 0;
      lastSnapshotNanos = System.nanoTime();
      CompletableFuture<Void> previous = snapshotTail;
      CompletableFuture<Long> appended = previous.handle((x, e) -> null)
          .thenCompose(x -> covered.handle((y, e) -> {
            if (e != null) {
              throw new CompletionException(e);
            }
            return y;
          }))
          .thenCompose(x -> meta.append(1, ByteBuffer.wrap(bytes)));
      snapshotTail = appended.thenApply(offset -> null);
      if (trim) {
        trimTail = trimTail.handle((x, e) -> null).thenCompose(x -> appended)
            .thenCompose(offset -> offset > meta.startOffset() ? meta.trim(offset) : CompletableFuture.completedFuture(null))
            .whenComplete((v, e) -> {
              if (e != null && !appended.isCompletedExceptionally()) {
                log.debug("meta stream of {} not trimmed to its last snapshot: {}", topicPartition(), e.toString());
              }
            });
      }
      return snapshotTail;
    }
  }

  @Override
  public String toString() {
    return "PartitionLog[" + topicPartition() + ", epoch " + leaderEpoch + ", " + state + "]";
  }
}
