package io.tidemark.stream.wal;

import io.tidemark.stream.objectstore.ObjectInfo;
import io.tidemark.stream.objectstore.ObjectStorage;
import io.tidemark.stream.wal.WalObjectFormat.Kind;
import io.tidemark.stream.wal.WalObjectFormat.ParsedKey;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A write-ahead log kept as objects in an {@link ObjectStorage}, for nodes without a durable disk
 * and for fail-over without shared volumes. Offsets are dense record counts. Keys and bytes are in
 * {@link WalObjectFormat}; recovery rules in {@link ObjectWalRecovery}.
 *
 * <h2>Writing</h2>
 * Appends go into the open batch; a batch is sealed when it holds {@code batchMaxBytes} or
 * {@code batchIntervalMs} after its first record (timer on the injected scheduler). At most
 * {@code maxInflightUploads} batches upload at once; payload bytes not yet acknowledged are bounded
 * by {@code maxPendingBytes}: beyond it {@code append} refuses the record at once with an already
 * failed future ({@link WalFullException}, nothing written; it never blocks its caller). A batch is
 * acknowledged when its PUT succeeded, the fence check after it passed, and every earlier batch is
 * acknowledged: futures complete in offset order. A failed PUT or fence check is retried (same key,
 * same bytes: idempotent) with backoff doubling up to {@link #MAX_RETRY_BACKOFF_MS}, for as long as
 * the log is open: an outage of the object store is backpressure (the bound fills, appends are
 * refused), never a failed log, and acknowledgements resume on their own when the store is back.
 *
 * <h2>Fencing, and why it is safe</h2>
 * A new writer of epoch {@code E} first PUTs {@code fence/E}, then LISTs for recovery, then PUTs
 * {@code start/E/S} where {@code S} is the offset it continues at. A writer of epoch {@code e}
 * acknowledges a batch only after (1) its PUT succeeded and then (2) a LIST of the fence prefix
 * showed no fence above {@code e}; if it shows one, that batch and every later call fail with
 * {@link WalFencedException}. With a strongly consistent store (a LIST sees every PUT that
 * completed before the LIST began) this is safe: if the check of batch {@code b} saw no fence
 * {@code E}, the PUT of {@code fence/E} had not completed when the check began; the PUT of
 * {@code b} had completed before the check began; the new writer lists only after its fence PUT
 * completed, so it lists after {@code b} exists and recovers it. Hence every acknowledged record is
 * recovered. Records acknowledged by {@code e} lie below {@code S} (the new writer continues after
 * what it recovered), so the rule "an older-epoch record at or above a newer epoch's start offset is
 * ignored" never drops an acknowledged record, while it drops, forever, anything a stale writer
 * PUTs after the new writer recovered: the stale writer cannot extend the log. Keys carry the
 * epoch, so it cannot overwrite the new writer's objects either. A batch whose PUT completed before
 * the new writer listed but which the stale writer failed (its check saw the fence) may be
 * recovered: it is durable, merely unacknowledged, like a block-WAL write that reached the disk just
 * before a crash.
 *
 * <h2>Trim and deletion</h2>
 * {@code trim(x)} PUTs {@code trim/x} (the trim point also goes into later batch headers); once it is
 * durable, batches wholly below {@code x} and older trim markers are deleted in the background, at
 * most 1000 keys per request and one request at a time. Recovery also deletes wholly trimmed and
 * stale batches and older fences. Start markers are kept (one small object per epoch).
 *
 * <h2>States and threads</h2>
 * {@code NEW → RECOVERED → STARTED → CLOSED}, or {@code FENCED} (terminal: a newer writer took over). State
 * is guarded by one lock held only to hand work over; storage calls are made outside it and their
 * completions come back on storage threads. Futures are completed outside the lock through an
 * ordered completion queue, so callbacks may call back into the log.
 */
public final class ObjectWriteAheadLog implements WriteAheadLog {

  private static final Logger LOG = LoggerFactory.getLogger(ObjectWriteAheadLog.class);
  private static final long RETRY_BACKOFF_MS = 50;
  /** Longest pause between two attempts of one batch upload. */
  static final long MAX_RETRY_BACKOFF_MS = 5_000;
  /** A failed attempt is logged as a warning on the first and then on every this-many-th attempt. */
  private static final int WARN_EVERY_ATTEMPTS = 10;
  private static final int DELETE_BATCH_KEYS = 1000;

  private enum State { NEW, RECOVERED, STARTED, CLOSING, CLOSED, FENCED }

  private static final class Batch {
    final long firstOffset;
    final List<ByteBuffer> records = new ArrayList<>();
    final List<CompletableFuture<Long>> futures = new ArrayList<>();
    long bytes;
    long trimOffset;
    boolean durable;
    ScheduledFuture<?> timer;

    Batch(long firstOffset) {
      this.firstOffset = firstOffset;
    }

    long lastOffset() {
      return firstOffset + records.size() - 1;
    }
  }

  private final ObjectWalOptions options;
  private final ObjectStorage storage;
  private final ScheduledExecutorService scheduler;
  private final Clock clock;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition drained = lock.newCondition();
  private final ArrayDeque<Batch> sealed = new ArrayDeque<>();
  private final ArrayDeque<Batch> unacked = new ArrayDeque<>();
  private final TreeMap<Long, List<String>> batchKeysByLastOffset = new TreeMap<>();
  private final TreeMap<Long, String> trimMarkers = new TreeMap<>();
  private final ArrayDeque<String> deleteQueue = new ArrayDeque<>();
  private final ConcurrentLinkedQueue<Runnable> completions = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean completing = new AtomicBoolean();
  private State state = State.NEW;
  private WalException terminal;
  private Batch open;
  private int inflight;
  private long pendingBytes;
  private long nextOffset;
  private long trimOffset;
  private boolean deleting;

  public ObjectWriteAheadLog(ObjectWalOptions options, ObjectStorage storage, ScheduledExecutorService scheduler, Clock clock) {
    this.options = options;
    this.storage = storage;
    this.scheduler = scheduler;
    this.clock = clock;
  }

  // ---------------------------------------------------------------- recovery

  @Override
  public Iterator<WalRecord> recover() {
    lock.lock();
    try {
      if (state != State.NEW) {
        throw new IllegalStateException("recover() called in state " + state);
      }
    } finally {
      lock.unlock();
    }
    int node = options.nodeId();
    long epoch = options.epoch();
    await(storage.put(WalObjectFormat.fenceKey(node, epoch), WalObjectFormat.encodeMarker(epoch, epoch)),
        "write fence marker " + WalObjectFormat.fenceKey(node, epoch));
    long newer = newestFence(await(storage.list(WalObjectFormat.fencePrefix(node)), "list WAL fences"));
    if (newer > epoch) {
      fence(newer);
      throw terminal;
    }
    List<ParsedKey> keys = new ArrayList<>();
    for (ObjectInfo info : await(storage.list(WalObjectFormat.nodePrefix(node)), "list WAL objects")) {
      ParsedKey key = WalObjectFormat.parse(node, info.key());
      if (key.kind() != null) {
        keys.add(key);
      }
    }
    ObjectWalRecovery.Plan plan = ObjectWalRecovery.plan(keys, epoch);
    List<WalRecord> records = new ArrayList<>();
    long end = fetch(plan, records);
    long start = Math.max(end, plan.trimOffset());
    await(storage.put(WalObjectFormat.startKey(node, epoch, start), WalObjectFormat.encodeMarker(epoch, start)),
        "write start marker");
    lock.lock();
    try {
      nextOffset = start;
      trimOffset = plan.trimOffset();
      plan.trimmedOrStale().forEach(k -> deleteQueue.add(k.key()));
      deleteQueue.addAll(plan.obsoleteMarkers());
      for (ParsedKey k : plan.liveBatches()) {
        if (k.epoch() < epoch && k.offset() >= start) {
          deleteQueue.add(k.key()); // stale: above our start marker, never valid again
        } else {
          batchKeysByLastOffset.computeIfAbsent(k.lastOffset(), x -> new ArrayList<>()).add(k.key());
        }
      }
      keys.stream().filter(k -> k.kind() == Kind.TRIM && k.offset() == plan.trimOffset())
          .forEach(k -> trimMarkers.put(k.offset(), k.key()));
      state = State.RECOVERED;
    } finally {
      lock.unlock();
    }
    LOG.info("object WAL of node {} recovered {} records in [{}, {}) from {} objects; epoch {} continues at {}",
        node, records.size(), plan.trimOffset(), end, plan.segments().size(), epoch, start);
    deleteInBackground();
    return records.iterator();
  }

  /** GETs the chain's objects, at most {@code maxInflightUploads} at a time; returns where the chain ends. */
  private long fetch(ObjectWalRecovery.Plan plan, List<WalRecord> out) {
    List<ObjectWalRecovery.Segment> segments = plan.segments();
    List<CompletableFuture<ByteBuffer>> reads = new ArrayList<>();
    long end = plan.trimOffset();
    for (int i = 0; i < segments.size(); i++) {
      while (reads.size() < segments.size() && reads.size() < i + options.maxInflightUploads()) {
        reads.add(storage.get(segments.get(reads.size()).batch().key()));
      }
      ObjectWalRecovery.Segment segment = segments.get(i);
      ParsedKey key = segment.batch();
      WalObjectFormat.Batch batch;
      try {
        batch = WalObjectFormat.decodeBatch(key.key(), reads.get(i).get());
        if (batch.nodeId() != options.nodeId() || batch.epoch() != key.epoch() || batch.firstOffset() != key.offset()
            || batch.lastOffset() != key.lastOffset()) {
          throw new WalException("WAL object " + key.key() + " is corrupt: its header (node " + batch.nodeId()
              + ", epoch " + batch.epoch() + ", offsets " + batch.firstOffset() + ".." + batch.lastOffset()
              + ") does not match its key");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new WalException("interrupted while recovering the object WAL");
      } catch (ExecutionException | RuntimeException e) {
        Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
        LOG.error("object WAL recovery stops at offset {}: {}; later records are not recovered", segment.from(),
            cause.getMessage());
        reads.subList(i, reads.size()).forEach(r -> r.cancel(false));
        return end;
      }
      for (long offset = segment.from(); offset <= segment.to(); offset++) {
        out.add(new WalRecord(offset, batch.records().get((int) (offset - batch.firstOffset()))));
      }
      end = segment.to() + 1;
    }
    return end;
  }

  @Override
  public void start() {
    lock.lock();
    try {
      if (state == State.NEW) {
        lock.unlock();
        try {
          recover();
        } finally {
          lock.lock();
        }
      }
      if (state != State.RECOVERED) {
        throw new IllegalStateException("start() called in state " + state);
      }
      state = State.STARTED;
    } finally {
      lock.unlock();
    }
  }

  // ---------------------------------------------------------------- appends

  @Override
  public CompletableFuture<Long> append(ByteBuffer record) {
    ByteBuffer copy = ByteBuffer.allocate(record.remaining()).put(record.duplicate()).flip();
    long size = copy.remaining();
    CompletableFuture<Long> future = new CompletableFuture<>();
    List<Batch> uploads = List.of();
    lock.lock();
    try {
      if (state != State.STARTED) {
        return CompletableFuture.failedFuture(notWritable());
      }
      if (pendingBytes > 0 && pendingBytes + size > options.maxPendingBytes()) {
        return CompletableFuture.failedFuture(new WalFullException("object WAL of node " + options.nodeId()
            + " holds " + pendingBytes + " unacknowledged bytes (bound " + options.maxPendingBytes() + "); nothing was"
            + " written, append again once an earlier append completed"));
      }
      if (open == null) {
        Batch batch = new Batch(nextOffset);
        batch.timer = scheduler.schedule(() -> sealOnTimer(batch), options.batchIntervalMs(), TimeUnit.MILLISECONDS);
        open = batch;
      }
      open.records.add(copy);
      open.futures.add(future);
      open.bytes += size;
      nextOffset++;
      pendingBytes += size;
      if (open.bytes >= options.batchMaxBytes()) {
        uploads = sealOpen();
      }
    } finally {
      lock.unlock();
    }
    uploads.forEach(b -> upload(b, 1));
    return future;
  }

  /** False once a newer writer fenced this log. */
  @Override
  public boolean healthy() {
    lock.lock();
    try {
      return state != State.FENCED;
    } finally {
      lock.unlock();
    }
  }

  private void sealOnTimer(Batch batch) {
    List<Batch> uploads;
    lock.lock();
    try {
      if (open != batch) {
        return;
      }
      uploads = sealOpen();
    } finally {
      lock.unlock();
    }
    uploads.forEach(b -> upload(b, 1));
  }

  /** Seals the open batch and returns the batches that may start uploading (lock held). */
  private List<Batch> sealOpen() {
    if (open != null) {
      open.timer.cancel(false);
      open.trimOffset = trimOffset;
      sealed.add(open);
      unacked.add(open);
      open = null;
    }
    return startQueuedUploads();
  }

  private void upload(Batch batch, int attempt) {
    String key = WalObjectFormat.batchKey(options.nodeId(), options.epoch(), batch.firstOffset, batch.lastOffset());
    ByteBuffer bytes = WalObjectFormat.encodeBatch(options.nodeId(), options.epoch(), batch.firstOffset,
        batch.trimOffset, batch.records);
    storage.put(key, bytes)
        .thenCompose(v -> storage.list(WalObjectFormat.fencePrefix(options.nodeId())))
        .whenComplete((fences, error) -> {
          if (error != null) {
            retry(batch, attempt, key, error);
            return;
          }
          long newer = newestFence(fences);
          if (newer > options.epoch()) {
            fence(newer);
          } else {
            acknowledge(batch, key);
          }
        });
  }

  /** Schedules the next attempt of a failed batch upload while the log is open; a closed or fenced log drops it. */
  private void retry(Batch batch, int attempt, String key, Throwable error) {
    Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    boolean active;
    lock.lock();
    try {
      active = state == State.STARTED || state == State.CLOSING;
    } finally {
      lock.unlock();
    }
    if (!active) {
      return; // closed or fenced meanwhile: its futures were failed already
    }
    long backoffMs = Math.min(MAX_RETRY_BACKOFF_MS, RETRY_BACKOFF_MS << Math.min(attempt, 20));
    if (attempt == 1 || attempt % WARN_EVERY_ATTEMPTS == 0) {
      LOG.warn("object WAL upload of {} failed (attempt {}): {}; retrying in {} ms, appends are held until the"
          + " object storage answers again", key, attempt, cause.toString(), backoffMs);
    }
    scheduler.schedule(() -> upload(batch, attempt + 1), backoffMs, TimeUnit.MILLISECONDS);
  }

  private void acknowledge(Batch batch, String key) {
    List<Batch> uploads;
    lock.lock();
    try {
      if (state != State.STARTED && state != State.CLOSING) {
        return; // fenced or closed meanwhile: its futures were failed already
      }
      batch.durable = true;
      inflight--;
      batchKeysByLastOffset.computeIfAbsent(batch.lastOffset(), x -> new ArrayList<>()).add(key);
      while (!unacked.isEmpty() && unacked.peekFirst().durable) {
        Batch done = unacked.pollFirst();
        pendingBytes -= done.bytes;
        for (int i = 0; i < done.futures.size(); i++) {
          CompletableFuture<Long> f = done.futures.get(i);
          long offset = done.firstOffset + i;
          completions.add(() -> f.complete(offset));
        }
      }
      if (unacked.isEmpty()) {
        drained.signalAll();
      }
      uploads = startQueuedUploads();
    } finally {
      lock.unlock();
    }
    runCompletions();
    uploads.forEach(b -> upload(b, 1));
  }

  /** Takes sealed batches off the queue while upload slots are free (lock held); the caller uploads them. */
  private List<Batch> startQueuedUploads() {
    List<Batch> startable = new ArrayList<>();
    while (inflight < options.maxInflightUploads() && !sealed.isEmpty()) {
      inflight++;
      startable.add(sealed.poll());
    }
    return startable;
  }

  private void fence(long newerEpoch) {
    terminate(State.FENCED, new WalFencedException("object WAL of node " + options.nodeId() + ": epoch " + newerEpoch
        + " has taken over from this writer's epoch " + options.epoch() + "; nothing more can be appended or trimmed"));
  }

  private void terminate(State to, WalException error) {
    boolean lostAppends;
    lock.lock();
    try {
      if (state == State.FENCED || state == State.CLOSED) {
        return;
      }
      state = to;
      terminal = error;
      if (open != null) {
        open.timer.cancel(false);
        unacked.add(open);
        open = null;
      }
      lostAppends = !unacked.isEmpty();
      for (Batch b : unacked) {
        b.futures.forEach(f -> completions.add(() -> f.completeExceptionally(error)));
      }
      unacked.clear();
      sealed.clear();
      pendingBytes = 0;
      drained.signalAll();
    } finally {
      lock.unlock();
    }
    if (to != State.CLOSED || lostAppends) {
      LOG.warn("{}", error.getMessage());
    }
    runCompletions();
  }

  private void runCompletions() {
    while (!completions.isEmpty()) {
      if (!completing.compareAndSet(false, true)) {
        return; // another thread is completing, in order; it will see what we queued
      }
      try {
        Runnable r;
        while ((r = completions.poll()) != null) {
          r.run();
        }
      } finally {
        completing.set(false);
      }
    }
  }

  private WalException notWritable() {
    if (terminal != null) {
      return terminal instanceof WalFencedException f ? new WalFencedException(f.getMessage())
          : new WalException(terminal.getMessage(), terminal);
    }
    return new WalException("object WAL of node " + options.nodeId() + " is not open for writes (state " + state + ")");
  }

  // ---------------------------------------------------------------- trim and deletion

  @Override
  public CompletableFuture<Void> trim(long walOffset) {
    long target;
    lock.lock();
    try {
      if (state != State.STARTED) {
        return CompletableFuture.failedFuture(notWritable());
      }
      target = Math.min(walOffset, nextOffset);
      if (target <= trimOffset) {
        return CompletableFuture.completedFuture(null);
      }
      trimOffset = target;
    } finally {
      lock.unlock();
    }
    String key = WalObjectFormat.trimKey(options.nodeId(), target);
    return storage.put(key, WalObjectFormat.encodeMarker(options.epoch(), target))
        .handle((v, error) -> {
          if (error != null) {
            throw new WalException("cannot write WAL trim marker " + key + ": " + unwrap(error), unwrap(error));
          }
          lock.lock();
          try {
            trimMarkers.put(target, key);
            long durable = trimMarkers.lastKey();
            Map<Long, String> older = trimMarkers.headMap(durable);
            deleteQueue.addAll(older.values());
            older.clear();
            Map<Long, List<String>> below = batchKeysByLastOffset.headMap(durable);
            below.values().forEach(deleteQueue::addAll);
            below.clear();
          } finally {
            lock.unlock();
          }
          deleteInBackground();
          return null;
        });
  }

  /** Deletes queued keys, one request of at most 1000 keys at a time. */
  private void deleteInBackground() {
    List<String> keys = new ArrayList<>();
    lock.lock();
    try {
      if (deleting || deleteQueue.isEmpty()) {
        return;
      }
      deleting = true;
      while (keys.size() < DELETE_BATCH_KEYS && !deleteQueue.isEmpty()) {
        keys.add(deleteQueue.poll());
      }
    } finally {
      lock.unlock();
    }
    storage.delete(keys).whenComplete((v, error) -> {
      if (error != null) {
        LOG.warn("deleting {} obsolete WAL objects failed ({}); recovery deletes them later", keys.size(),
            unwrap(error).toString());
      }
      lock.lock();
      try {
        deleting = false;
      } finally {
        lock.unlock();
      }
      deleteInBackground();
    });
  }

  // ---------------------------------------------------------------- close

  @Override
  public void close() {
    List<Batch> uploads = List.of();
    lock.lock();
    try {
      if (state == State.STARTED) {
        uploads = sealOpen();
        state = State.CLOSING;
      }
    } finally {
      lock.unlock();
    }
    uploads.forEach(b -> upload(b, 1));
    lock.lock();
    try {
      long deadline = clock.millis() + options.appendTimeoutMs();
      while (state == State.CLOSING && !unacked.isEmpty()) {
        long waitMs = deadline - clock.millis();
        if (waitMs <= 0) {
          break;
        }
        drained.await(waitMs, TimeUnit.MILLISECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      lock.unlock();
    }
    terminate(State.CLOSED, new WalException("object WAL of node " + options.nodeId()
        + " closed before the record was durable"));
  }

  // ---------------------------------------------------------------- helpers

  private static long newestFence(List<ObjectInfo> fences) {
    long newest = -1;
    for (ObjectInfo info : fences) {
      String name = info.key().substring(info.key().lastIndexOf('/') + 1);
      if (name.length() == 20 && name.chars().allMatch(Character::isDigit)) {
        newest = Math.max(newest, Long.parseLong(name));
      }
    }
    return newest;
  }

  private static <T> T await(CompletableFuture<T> future, String what) {
    try {
      return future.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new WalException("interrupted while trying to " + what);
    } catch (ExecutionException e) {
      throw new WalException("object WAL could not " + what + ": " + e.getCause(), e.getCause());
    }
  }

  private static Throwable unwrap(Throwable error) {
    return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
  }
}
