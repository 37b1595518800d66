package io.tidemark.stream.engine;

import io.tidemark.stream.api.StreamRewriter;
import io.tidemark.stream.compaction.CompactionConfig;
import io.tidemark.stream.compaction.ObjectStreamRewriter;

import io.tidemark.stream.api.AppendBackpressureException;
import io.tidemark.stream.api.FetchResult;
import io.tidemark.stream.api.OffsetOutOfRangeException;
import io.tidemark.stream.api.Stream;
import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.api.StreamClosedException;
import io.tidemark.stream.api.StreamException;
import io.tidemark.stream.api.StreamFencedException;
import io.tidemark.stream.api.StreamStore;
import io.tidemark.stream.cache.LogCache;
import io.tidemark.stream.cache.LogCache.UploadSnapshot;
import io.tidemark.stream.metadata.NodeFencedException;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.ObjectManager;
import io.tidemark.stream.metadata.StreamManager;
import io.tidemark.stream.metadata.StreamMetadata;
import io.tidemark.stream.metadata.StreamMetadata.StreamState;
import io.tidemark.stream.object.CorruptBatchException;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.object.StreamBatchCodec;
import io.tidemark.stream.object.StreamRecordBatch;
import io.tidemark.stream.objectstore.ObjectStorage;
import io.tidemark.stream.time.Scheduler;
import io.tidemark.stream.wal.WalException;
import io.tidemark.stream.wal.WalFullException;
import io.tidemark.stream.wal.WalRecord;
import io.tidemark.stream.wal.WriteAheadLog;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.Set;

/**
 * The storage engine of one node: streams over this node's {@link WriteAheadLog}, a bounded
 * {@link LogCache}, shared {@link ObjectStorage}, and the metadata authority
 * ({@link StreamManager} + {@link ObjectManager}).
 *
 * <p><b>Append</b>: an append is first admitted on the caller's thread: when appends already
 * waiting for space hold {@code stream.append.waiting.max.bytes}, it is refused at once with an
 * already failed future ({@link AppendBackpressureException}: nothing was written and no offset
 * was assigned, so the caller may retry it as if it never happened). An admitted append gets its
 * offset on the loop (call order) and waits in the admission queue until the cache can reserve its
 * bytes and the WAL accepts it; a full cache or a full WAL is backpressure (the append waits, for
 * as long as it takes, with bounded memory), never an error. Once the WAL reports it durable, it is
 * put in the cache in WAL order and only then acknowledged. The loop never blocks: the WAL refuses
 * a record it cannot queue at once (see {@link WriteAheadLog}), and the loop offers it again when
 * an earlier WAL write completes.
 *
 * <p><b>Upload</b> (one at a time): when the cache holds {@code stream.upload.threshold.bytes} not
 * yet uploaded, on the upload interval, for a flush, when appends wait for space or when the WAL
 * wants a trim, every not-yet-uploaded batch is taken, written as one stream-set object plus stream
 * objects for large streams, committed, and then the WAL is trimmed below the oldest batch still
 * not uploaded. Closing one stream uploads only that stream's batches (with those of the other
 * streams closing at that moment: a partition closing its two streams uploads one object). A failed attempt is
 * reconciled with the metadata (a commit may have succeeded; a stream may have been fenced or be
 * unable ever to commit) and retried with backoff doubling up to
 * {@code stream.upload.retry.backoff.max.ms}, without end: an outage of the object storage or of
 * the controller fills the cache and the WAL (backpressure, a warning per attempt, {@link #health()}
 * says so) and the engine resumes on its own when they answer again.
 *
 * <p><b>Recovery</b> ({@link #start()}): the WAL's records above each stream's committed end
 * are uploaded and committed, the WAL is trimmed, the streams this node still holds open are
 * closed; then the engine serves. Records that do not continue a stream's committed end (a gap
 * after a failed WAL write) or belong to streams this node no longer holds are logged and dropped.
 * Memory: the live part of the WAL is at most what the cache held unuploaded (every acknowledged
 * batch stays cached until uploaded, and the WAL is trimmed after each upload), so recovery holds
 * about {@code stream.cache.size.bytes} and uploads it in chunks of the upload threshold.
 *
 * <p>States: CREATED → RECOVERING → SERVING → CLOSING → CLOSED; FAILED only when the node was
 * fenced (a newer epoch of this node exists: restart it), the WAL itself failed (an I/O error), or
 * start-up could not read the WAL; never on a transient error of the object storage or the
 * controller (recovery's uploads wait for them too, rather than failing the start), and never for
 * lack of space or time (a full WAL or cache is backpressure, above). FAILED is final for this
 * instance, not for the process: {@link #onFailed()} tells the owner, which closes the engine and
 * starts a new one on the same WAL (the server's {@code NodeSupervisor} restarts the node
 * in-process); its recovery uploads every acknowledged record, so a failed WAL write costs the
 * clients a retry, never a record. {@link #health()} reports
 * the state, whether appends are stalled (outstanding, and none acknowledged for
 * {@code stream.append.stall.ms}) and since when uploads fail.
 *
 * <p>What blocks, what is bounded, what a client sees: nothing here blocks a thread. Held bytes are
 * bounded three times: {@code stream.cache.size.bytes} (acknowledged and reserved batches),
 * {@code wal.max.pending.bytes} (accepted by the WAL, not yet durable; each such record also holds
 * its cache reservation, so the smaller of the two binds) and {@code stream.append.waiting.max.bytes}
 * (admitted, waiting for either). The WAL's live part is at most the cache's unuploaded bytes plus
 * its pending bytes, so a block WAL of {@code wal.capacity.bytes} at least that large never fills
 * before the cache (a smaller one asks for early uploads, {@link WriteAheadLog#trimWanted()}); the
 * defaults keep these relations ({@code EngineDefaultsTest}). Time is bounded by the caller: the broker answers a produce still
 * waiting after the request's {@code timeoutMs}, or refused at once, with REQUEST_TIMED_OUT, which
 * Kafka clients retry on their own (an idempotent producer's retry of a write that did complete is
 * answered with its original offset). While appends wait the broker's connections reach their
 * in-flight bound and stop reading their sockets.
 *
 * <p>Threading: the engine has one owner. Only its loop thread changes engine and stream state:
 * the lifecycle ({@link State}, through {@link #transition}, which throws
 * {@link IllegalStateException} naming the current state on a step the lifecycle does not have),
 * every stream's state ({@code EngineStream.transition}, likewise) and offsets, the admission
 * queue, the in-flight WAL writes, the upload state and the health fields. Callers and completions
 * (WAL writes, uploads, metadata answers) hand work to the loop rather than touch state; every
 * mutation asserts that it runs on the owning thread ({@code assert ownsState()}, checked in the
 * test suite, which runs with {@code -ea}; {@code EngineOwnershipTest}). Only the admission byte
 * count is shared with callers (an atomic). Once {@link #halt} has seen the loop thread end, the
 * halting thread owns what is left (it fails what still waits). Acknowledgements complete on a separate single
 * thread (in order); encoding of objects runs on an upload thread; cold reads run on the object
 * storage's threads. Timers (upload interval, retry backoff) and time come from the injected
 * {@link Scheduler} ({@link Builder#timing}; a {@code DeterministicScheduler} runs them on virtual
 * time), or from the given timer and clock.
 */
public final class StreamEngine implements StreamStore {

  private static final System.Logger LOG = System.getLogger(StreamEngine.class.getName());

  /** The engine's lifecycle (see the class comment); CLOSED and FAILED are final. */
  public enum State {
    CREATED, RECOVERING, SERVING, CLOSING, CLOSED, FAILED;

    /** Whether the lifecycle has the step from this state to {@code next}. */
    boolean canMoveTo(State next) {
      return switch (this) {
        case CREATED -> next == RECOVERING || next == CLOSED;
        case RECOVERING -> next == SERVING || next == CLOSED || next == FAILED;
        case SERVING -> next == CLOSING || next == CLOSED || next == FAILED;
        case CLOSING -> next == CLOSED || next == FAILED;
        case CLOSED, FAILED -> false;
      };
    }
  }

  private static final class PendingAppend {
    final EngineStream stream;
    final StreamRecordBatch record;
    /** The batch's codec header; the WAL record is this header followed by the record's payload (not joined). */
    final ByteBuffer header;
    final CompletableFuture<Long> future;
    boolean done;
    long walOffset;
    Throwable error;

    PendingAppend(EngineStream stream, StreamRecordBatch record, ByteBuffer header, CompletableFuture<Long> future) {
      this.stream = stream;
      this.record = record;
      this.header = header;
      this.future = future;
    }

    long sizeBytes() {
      return record.encodedBytes();
    }
  }

  private record FlushRequest(long walOffset, CompletableFuture<Void> future) {}

  private final NodeRef node;
  private final WriteAheadLog wal;
  private final StreamManager streamManager;
  private final ObjectManager objectManager;
  private final StreamEngineConfig config;
  /** Time and timers of the engine (upload interval, retry backoff): injected, or the system clock on a timer thread. */
  private final Scheduler scheduler;
  /** The engine's own timer thread when none was given (shut down by {@link #halt}); null otherwise. */
  private final ScheduledExecutorService ownedTimer;
  private final ColdReader coldReader;
  private final LogCache cache;
  private final Uploader uploader;
  private final StreamRewriter rewriter;
  private final ExecutorService loop;
  /** Longest wait of {@link #halt} for the loop thread to end before failing the closes still waiting. */
  private static final long HALT_AWAIT_MS = 2_000;
  private final ExecutorService ackExecutor;
  private final ExecutorService uploadExecutor;
  private final Map<Long, EngineStream> openStreams = new ConcurrentHashMap<>();

  private final LongSupplier clockMs;
  /** Written only by {@link #transition} on the owning thread; read by any thread. */
  private volatile State state = State.CREATED;
  /**
   * The thread that owns the engine's and the streams' state: the loop thread (set as it starts),
   * and, once the loop thread has ended in {@link #halt}, the halting thread.
   */
  private volatile Thread owner;
  /** Guards {@link #start()}'s "call once" (the state itself changes on the loop). */
  private final java.util.concurrent.atomic.AtomicBoolean started = new java.util.concurrent.atomic.AtomicBoolean();
  private volatile Throwable failure;
  /** Completes once, with the cause, when the engine enters FAILED (see {@link #onFailed()}). */
  private final CompletableFuture<Throwable> failed = new CompletableFuture<>();
  /** Bytes of appends admitted but not yet handed to the WAL (mailbox and admission queue); callers read it. */
  private final AtomicLong waitingBytes = new AtomicLong();
  /** Appends handed to the WAL and not yet completed (written by the loop). */
  private volatile int inflightCount;
  /** When an append was last acknowledged, or appends started to be outstanding again (written by the loop). */
  private volatile long lastProgressMs;
  /** Since when uploads fail without a success in between; -1 while they succeed. */
  private volatile long uploadFailingSinceMs = -1;
  private volatile String lastUploadError = "";

  // loop-owned
  private final ArrayDeque<PendingAppend> admission = new ArrayDeque<>();
  private final ArrayDeque<PendingAppend> inflight = new ArrayDeque<>();
  private final List<FlushRequest> flushRequests = new ArrayList<>();
  private long confirmedWalOffset = -1;
  private final Map<Long, List<CompletableFuture<Void>>> streamFlushes = new HashMap<>();
  /** Streams closing on this node (loop-owned): a per-stream upload takes their batches too, so that closing together uploads once. */
  private final Set<Long> closingStreams = new java.util.HashSet<>();
  private boolean uploading;
  private boolean forceUpload;
  private boolean walRetryScheduled;
  private Scheduler.Timer intervalTask;

  private StreamEngine(Builder b) {
    this.node = Objects.requireNonNull(b.node, "node");
    this.wal = Objects.requireNonNull(b.wal, "wal");
    ObjectStorage storage = Objects.requireNonNull(b.storage, "storage");
    this.streamManager = Objects.requireNonNull(b.streamManager, "streamManager");
    this.objectManager = Objects.requireNonNull(b.objectManager, "objectManager");
    this.config = b.config;
    this.clockMs = b.clockMs != null ? b.clockMs : b.timing != null ? b.timing::nowMs : System::currentTimeMillis;
    boolean ownsTimer = b.timing == null && b.scheduler == null;
    this.ownedTimer = ownsTimer
        ? Executors.newSingleThreadScheduledExecutor(named("tidemark-engine-timer-" + node.nodeId())) : null;
    this.scheduler = b.timing != null ? b.timing : Scheduler.of(ownsTimer ? ownedTimer : b.scheduler, clockMs);
    this.coldReader = b.coldReader != null ? b.coldReader
        : new ObjectColdReader(objectManager, storage, b.keys, config.coldReadObjectsMax());
    this.cache = new LogCache(config.cacheSizeBytes());
    java.util.concurrent.ThreadFactory loopThreads = named("tidemark-engine-loop-" + node.nodeId());
    this.loop = Executors.newSingleThreadExecutor(runnable -> {
      Thread thread = loopThreads.newThread(runnable);
      owner = thread; // a replaced loop thread (after a task threw) takes over
      return thread;
    });
    this.ackExecutor = Executors.newSingleThreadExecutor(named("tidemark-engine-ack-" + node.nodeId()));
    this.uploadExecutor = Executors.newSingleThreadExecutor(named("tidemark-engine-upload-" + node.nodeId()));
    this.uploader = new Uploader(node, objectManager, storage, b.keys, config, uploadExecutor, scheduler);
    this.rewriter = new ObjectStreamRewriter(node, objectManager, streamManager, storage, b.keys, CompactionConfig.defaults(),
        cache::dropUploaded);
  }

  /**
   * Rewrites committed objects in place (the log cleaner's seam); never touches the WAL. Once a
   * rewrite is committed, the log cache forgets the uploaded batches it replaced, so reads see the
   * rewritten data.
   */
  @Override
  public Optional<StreamRewriter> rewriter() {
    return Optional.of(rewriter);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Collaborators and settings of an engine; node, WAL, storage and both metadata SPIs are required. */
  public static final class Builder {
    private NodeRef node;
    private WriteAheadLog wal;
    private ObjectStorage storage;
    private StreamManager streamManager;
    private ObjectManager objectManager;
    private ObjectKeys keys = ObjectKeys.defaults();
    private StreamEngineConfig config = StreamEngineConfig.defaults();
    private ScheduledExecutorService scheduler;
    private Scheduler timing;
    private ColdReader coldReader;
    private LongSupplier clockMs;

    public Builder node(NodeRef node) { this.node = node; return this; }
    public Builder wal(WriteAheadLog wal) { this.wal = wal; return this; }
    public Builder objectStorage(ObjectStorage storage) { this.storage = storage; return this; }
    public Builder streamManager(StreamManager streamManager) { this.streamManager = streamManager; return this; }
    public Builder objectManager(ObjectManager objectManager) { this.objectManager = objectManager; return this; }
    public Builder objectKeys(ObjectKeys keys) { this.keys = keys; return this; }
    public Builder config(StreamEngineConfig config) { this.config = config; return this; }
    /** Timer for the upload interval and retry backoff (default: an own single thread). */
    public Builder scheduler(ScheduledExecutorService scheduler) { this.scheduler = scheduler; return this; }
    /**
     * Time and timers as a {@link Scheduler} (a {@code DeterministicScheduler} in tests): replaces
     * {@link #scheduler(ScheduledExecutorService)}, and is the clock unless {@link #clock} is set.
     */
    public Builder timing(Scheduler timing) { this.timing = Objects.requireNonNull(timing, "timing"); return this; }
    /** Reader of committed data below the cache (default: {@link ObjectColdReader}). */
    public Builder coldReader(ColdReader coldReader) { this.coldReader = coldReader; return this; }
    /** Milliseconds for stall detection and the health report (default: the system clock). */
    public Builder clock(LongSupplier clockMs) { this.clockMs = Objects.requireNonNull(clockMs, "clockMs"); return this; }

    public StreamEngine build() {
      return new StreamEngine(this);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Lifecycle

  /**
   * Recovers the WAL (uploads and commits what it holds above the committed offsets, trims it,
   * closes the streams this node held open) and starts serving. Call once.
   */
  public CompletableFuture<Void> start() {
    if (state != State.CREATED || !started.compareAndSet(false, true)) {
      return CompletableFuture.failedFuture(new IllegalStateException("engine is " + state + ", not CREATED"));
    }
    long[] phases = new long[4];
    phases[0] = System.nanoTime();
    CompletableFuture<Void> result = new CompletableFuture<>();
    CompletableFuture.supplyAsync(() -> {
      transition(State.CREATED, State.RECOVERING);
      return readWal();
    }, loop)
        .thenCompose(recovered -> {
          phases[1] = System.nanoTime();
          return uploadRecovered(recovered);
        })
        .thenCompose(v -> {
          phases[2] = System.nanoTime();
          return closeOpeningStreams();
        })
        .thenRunAsync(() -> {
          phases[3] = System.nanoTime();
          LOG.log(System.Logger.Level.INFO, "node " + node.nodeId() + " recovered its WAL in "
              + (phases[3] - phases[0]) / 1_000_000 + " ms (read " + (phases[1] - phases[0]) / 1_000_000
              + " ms, upload and commit " + (phases[2] - phases[1]) / 1_000_000 + " ms, closing the streams it held "
              + (phases[3] - phases[2]) / 1_000_000 + " ms)");
          transition(State.RECOVERING, State.SERVING);
          intervalTask = scheduler.scheduleWithFixedDelay(() -> onLoop(this::onUploadInterval),
              config.uploadIntervalMs(), config.uploadIntervalMs(), TimeUnit.MILLISECONDS);
        }, loop)
        .whenComplete((v, error) -> {
          if (error == null) {
            result.complete(null);
            return;
          }
          // FAILED (on the loop) before the caller hears of it; a halted engine just reports the error
          try {
            loop.execute(() -> {
              fail(unwrap(error));
              result.completeExceptionally(error);
            });
          } catch (java.util.concurrent.RejectedExecutionException halted) {
            result.completeExceptionally(error);
          }
        });
    return result;
  }

  /** The node this engine runs as. */
  public NodeRef node() {
    return node;
  }

  /** Closes every open stream (uploading their data), stops, and closes the WAL. */
  @Override
  public void close() {
    if (state == State.CLOSED) {
      return;
    }
    if (state == State.SERVING && closingOnLoop()) {
      List<CompletableFuture<Void>> closes = new ArrayList<>();
      closes.add(flush()); // first: one upload for every stream, so that the closes below find nothing left
      openStreams.values().forEach(s -> closes.add(closeStream(s)));
      try {
        CompletableFuture.allOf(closes.toArray(CompletableFuture[]::new)).get(config.closeTimeoutMs(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (ExecutionException | TimeoutException e) {
        LOG.log(System.Logger.Level.WARNING, "closing streams of node " + node.nodeId() + " failed; their data stays "
            + "in the WAL and is recovered at the next start", e);
      }
    }
    halt();
    wal.close();
  }

  /** Moves SERVING to CLOSING on the loop; false when the engine was not serving there (or the loop is gone). */
  private boolean closingOnLoop() {
    CompletableFuture<Boolean> closing = new CompletableFuture<>();
    execute(() -> {
      boolean serving = state == State.SERVING;
      if (serving) {
        transition(State.SERVING, State.CLOSING);
      }
      closing.complete(serving);
    }, closing);
    try {
      return closing.get(config.closeTimeoutMs(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException | TimeoutException e) {
      return false;
    }
  }

  /**
   * Stops every thread at once without uploading anything (as a crash would); for tests, fatal
   * errors and a node whose epoch failed over while it lives. Appends, flushes, stream closes and
   * drains still waiting fail with {@link StreamClosedException} rather than never completing (a broker
   * closing its partitions after the halt must not wait for them).
   */
  public void halt() {
    if (ownsState()) {
      toClosed(); // halted by a task on the loop itself
    }
    if (intervalTask != null) {
      intervalTask.cancel(false);
    }
    loop.shutdownNow();
    uploadExecutor.shutdownNow();
    ackExecutor.shutdown();
    if (ownedTimer != null) {
      ownedTimer.shutdownNow();
    }
    if (!Thread.currentThread().getName().startsWith("tidemark-engine-loop-")) {
      try {
        // the loop owns the streams' state: read it only once the loop thread ended (bounded: a halt never hangs)
        boolean ended = loop.awaitTermination(HALT_AWAIT_MS, TimeUnit.MILLISECONDS);
        // the loop thread has ended (or is stuck in a task past the bound): this thread takes the state over
        owner = Thread.currentThread();
        toClosed();
        if (ended) {
          StreamException reason = notServing();
          for (ArrayDeque<PendingAppend> queue : List.of(admission, inflight)) {
            queue.forEach(p -> p.future.completeExceptionally(reason));
          }
          streamFlushes.values().forEach(list -> list.forEach(f -> f.completeExceptionally(reason)));
          flushRequests.forEach(r -> r.future().completeExceptionally(reason));
          for (EngineStream stream : openStreams.values()) {
            stream.drainWaiters.forEach(w -> w.completeExceptionally(notServing()));
            if (stream.closeFuture != null) {
              stream.closeFuture.completeExceptionally(notServing());
            }
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    State current = state;
    if (!ownsState() && current != State.CLOSED && current != State.FAILED) {
      // Halted from another engine's loop thread (which must not wait for this loop) or interrupted while
      // waiting: the one write of the state off its owner. The loop was shut down above, so at most the task
      // it is running still runs, and callers must see CLOSED now.
      state = State.CLOSED;
    }
  }

  private void toClosed() {
    State current = state;
    if (current != State.CLOSED && current != State.FAILED) {
      transition(current, State.CLOSED);
    }
  }

  /**
   * Moves the engine from {@code from} to {@code to}. Only the owning thread (the loop) changes
   * the engine's state, and this asserts it (tests run with {@code -ea}).
   *
   * @throws IllegalStateException naming the current state when it is not {@code from} or the
   *     lifecycle has no such step
   */
  void transition(State from, State to) {
    assert ownsState() : "engine of node " + node.nodeId() + " changed from " + from + " to " + to + " on thread "
        + Thread.currentThread().getName() + ", not on its loop thread";
    State current = state;
    if (current != from || !from.canMoveTo(to)) {
      throw new IllegalStateException("engine of node " + node.nodeId() + " cannot move from " + from + " to " + to
          + ": it is " + current);
    }
    state = to;
  }

  private String offLoop() {
    return "engine state of node " + node.nodeId() + " changed on thread " + Thread.currentThread().getName()
        + ", not on its loop thread";
  }

  /** Whether the calling thread owns the engine's and its streams' state (the loop thread; after a halt, the halting one). */
  boolean ownsState() {
    return Thread.currentThread() == owner;
  }

  /**
   * Runs {@code task} on the loop; the future completes after it ran (exceptionally with what it
   * threw, or when the engine was halted and the task never runs).
   */
  CompletableFuture<Void> runOnLoop(Runnable task) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    execute(() -> {
      try {
        task.run();
        done.complete(null);
      } catch (RuntimeException | Error e) {
        done.completeExceptionally(e);
      }
    }, done);
    return done;
  }

  // ---------------------------------------------------------------------------------------------
  // StreamStore

  @Override
  public CompletableFuture<Long> createStream(Map<String, String> tags) {
    if (state != State.SERVING) {
      return CompletableFuture.failedFuture(notServing());
    }
    return streamManager.createStream(node, tags);
  }

  @Override
  public CompletableFuture<Stream> openStream(long streamId, long epoch) {
    if (state != State.SERVING) {
      return CompletableFuture.failedFuture(notServing());
    }
    EngineStream existing = openStreams.get(streamId);
    if (existing != null && existing.epoch() == epoch && existing.state() == EngineStream.State.OPEN) {
      return CompletableFuture.completedFuture(existing);
    }
    if (existing != null && epoch < existing.epoch()) {
      return CompletableFuture.failedFuture(new StreamFencedException("cannot open stream " + streamId + " with epoch "
          + epoch + ": it is open on this node with the newer epoch " + existing.epoch()));
    }
    CompletableFuture<Void> previous = existing == null ? CompletableFuture.completedFuture(null)
        : closeStream(existing).exceptionally(e -> null);
    return previous.thenCompose(v -> streamManager.openStream(node, streamId, epoch))
        .thenApplyAsync(meta -> {
          EngineStream stream = new EngineStream(this, streamId, meta.epoch(), meta.startOffset(), meta.endOffset());
          openStreams.put(streamId, stream);
          return (Stream) stream;
        }, loop);
  }

  @Override
  public Optional<Stream> stream(long streamId) {
    EngineStream s = openStreams.get(streamId);
    return s != null && s.state() == EngineStream.State.OPEN ? Optional.of(s) : Optional.empty();
  }

  /**
   * Uploads and commits every batch acknowledged so far (of all streams); completes when done.
   */
  public CompletableFuture<Void> flush() {
    CompletableFuture<Void> future = new CompletableFuture<>();
    execute(() -> {
      if (state == State.FAILED) {
        future.completeExceptionally(notServing()); // nothing uploads any more: the next engine's recovery will
        return;
      }
      flushRequests.add(new FlushRequest(confirmedWalOffset, future));
      maybeUpload();
    }, future);
    return future;
  }

  /**
   * Uploads and commits the acknowledged batches of one stream only (not those of the others);
   * completes when none of its batches is left unuploaded. Runs on the loop.
   */
  private CompletableFuture<Void> flushStream(long streamId) {
    CompletableFuture<Void> future = new CompletableFuture<>();
    execute(() -> {
      if (!cache.hasUnuploaded(streamId)) {
        future.complete(null);
        return;
      }
      if (state == State.FAILED) {
        // nothing uploads any more (a stream close must not wait for it): the next engine's recovery uploads it
        future.completeExceptionally(notServing());
        return;
      }
      streamFlushes.computeIfAbsent(streamId, id -> new ArrayList<>()).add(future);
      maybeUpload();
    }, future);
    return future;
  }

  /**
   * What the engine tells about itself, for the node's health and readiness endpoints.
   *
   * @param state the lifecycle state
   * @param failure why it FAILED (empty otherwise): the node was fenced or the WAL failed
   * @param appendsStalled appends are outstanding and none was acknowledged for {@code stream.append.stall.ms}
   * @param uploadFailingForMs how long uploads have failed without a success in between (0 while they succeed)
   * @param lastUploadError the last upload error while they fail (empty otherwise)
   * @param unuploadedBytes acknowledged bytes not yet in object storage
   */
  public record Health(State state, String failure, boolean appendsStalled, long uploadFailingForMs,
      String lastUploadError, long unuploadedBytes) {

    /** False once the engine failed for good (fenced node, failed WAL): only a restart helps. */
    public boolean live() {
      return state != State.FAILED;
    }

    /** True while the engine acknowledges appends: serving and not stalled. */
    public boolean acceptingAppends() {
      return state == State.SERVING && !appendsStalled;
    }
  }

  /** The current health (any thread). */
  public Health health() {
    long now = clockMs.getAsLong();
    boolean outstanding = waitingBytes.get() > 0 || inflightCount > 0;
    boolean stalled = outstanding && now - lastProgressMs >= config.appendStallMs();
    long failingSince = uploadFailingSinceMs;
    Throwable failed = failure;
    return new Health(state, failed == null ? "" : String.valueOf(failed), stalled,
        failingSince < 0 ? 0 : Math.max(1, now - failingSince), lastUploadError, cache.unuploadedBytes());
  }

  /** Bytes of acknowledged batches not yet uploaded. */
  public long unuploadedBytes() {
    return cache.unuploadedBytes();
  }

  /** Bytes held by the log cache (batches plus reservations). */
  public long cacheUsedBytes() {
    return cache.usedBytes();
  }

  // ---------------------------------------------------------------------------------------------
  // Append path (called by EngineStream; runs on the loop)

  /**
   * Admits an append on the caller's thread (see the class comment): refused at once, with nothing
   * assigned, when the engine does not serve, the stream is not open, or appends waiting for space
   * already hold their bound; otherwise handed to the loop, which assigns its offset.
   */
  CompletableFuture<Long> append(EngineStream stream, int recordCount, ByteBuffer payload) {
    if (state != State.SERVING) {
      return CompletableFuture.failedFuture(notServing());
    }
    if (stream.state() != EngineStream.State.OPEN) {
      return CompletableFuture.failedFuture(streamUnusable(stream));
    }
    long size = StreamBatchCodec.HEADER_BYTES + payload.remaining();
    long waiting = waitingBytes.getAndAdd(size);
    if (waiting > 0 && waiting + size > config.appendWaitingMaxBytes()) {
      waitingBytes.addAndGet(-size);
      return CompletableFuture.failedFuture(new AppendBackpressureException("appends waiting for log cache or WAL "
          + "space on node " + node.nodeId() + " already hold " + waiting + " bytes (limit "
          + config.appendWaitingMaxBytes() + "); nothing was written to stream " + stream.streamId()
          + ", retry once earlier appends complete"));
    }
    CompletableFuture<Long> future = new CompletableFuture<>();
    try {
      loop.execute(() -> admit(stream, recordCount, payload, size, future));
    } catch (java.util.concurrent.RejectedExecutionException e) {
      waitingBytes.addAndGet(-size);
      future.completeExceptionally(notServing());
    }
    return future;
  }

  private void admit(EngineStream stream, int recordCount, ByteBuffer payload, long size, CompletableFuture<Long> future) {
    assert ownsState() : offLoop();
    if (state != State.SERVING || stream.state() != EngineStream.State.OPEN) {
      waitingBytes.addAndGet(-size);
      future.completeExceptionally(state != State.SERVING ? notServing() : streamUnusable(stream));
      return;
    }
    if (admission.isEmpty() && inflight.isEmpty()) {
      lastProgressMs = clockMs.getAsLong(); // outstanding again after a pause: the stall clock starts now
    }
    StreamRecordBatch record = new StreamRecordBatch(stream.streamId(), stream.epoch(), stream.nextAssignedOffset,
        recordCount, payload);
    stream.nextAssignedOffset += recordCount;
    stream.pendingAppends++;
    PendingAppend pending = new PendingAppend(stream, record, StreamBatchCodec.encodeHeader(record), future);
    admission.addLast(pending);
    drainAdmission();
  }

  /**
   * Moves appends from the admission queue to the WAL while the cache can reserve their bytes and
   * the WAL accepts them; never blocks. A full cache starts an upload; a full WAL is tried again
   * when one of the writes in flight completes.
   */
  private void drainAdmission() {
    assert ownsState() : offLoop();
    while (!admission.isEmpty()) {
      PendingAppend head = admission.peekFirst();
      if (!cache.tryReserve(head.sizeBytes())) {
        if (!uploading && cache.unuploadedBytes() > 0) {
          startUpload(null);
        }
        return;
      }
      CompletableFuture<Long> written;
      try {
        written = wal.append(head.header, head.record.payload());
      } catch (RuntimeException e) {
        written = CompletableFuture.failedFuture(e);
      }
      if (refusedForSpace(written)) {
        cache.releaseReservation(head.sizeBytes());
        if (inflight.isEmpty()) {
          retryWalLater(); // nothing in flight will wake us (a WAL that refuses while empty breaks its contract)
        }
        return;
      }
      admission.pollFirst();
      waitingBytes.addAndGet(-head.sizeBytes());
      inflight.addLast(head);
      inflightCount = inflight.size();
      written.whenComplete((walOffset, error) -> onLoop(() -> onWalWritten(head, walOffset, error)));
    }
  }

  private static boolean refusedForSpace(CompletableFuture<Long> written) {
    if (!written.isCompletedExceptionally()) {
      return false;
    }
    return written.handle((v, e) -> unwrap(e) instanceof WalFullException).join();
  }

  private void retryWalLater() {
    if (walRetryScheduled) {
      return;
    }
    walRetryScheduled = true;
    try {
      scheduler.schedule(() -> onLoop(() -> {
        walRetryScheduled = false;
        drainAdmission();
      }), 10, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException halted) {
      walRetryScheduled = false; // the engine is stopping
    }
  }

  private void onWalWritten(PendingAppend pending, Long walOffset, Throwable error) {
    assert ownsState() : offLoop();
    pending.done = true;
    pending.error = error;
    pending.walOffset = walOffset == null ? -1 : walOffset;
    while (!inflight.isEmpty() && inflight.peekFirst().done) {
      PendingAppend head = inflight.pollFirst();
      EngineStream stream = head.stream;
      boolean usable = stream.state() == EngineStream.State.OPEN || stream.state() == EngineStream.State.CLOSING;
      if (head.error == null && usable && state != State.FAILED) {
        cache.put(head.record, head.walOffset);
        confirmedWalOffset = head.walOffset;
        stream.confirmedNextOffset = head.record.nextOffset();
        lastProgressMs = clockMs.getAsLong();
        long base = head.record.baseOffset();
        ackExecutor.execute(() -> head.future.complete(base));
      } else {
        cache.releaseReservation(head.sizeBytes());
        // a storage error, never a raw WAL exception: the broker answers it with a retriable error (KAFKA_STORAGE_ERROR)
        Throwable reason = head.error != null ? new StreamException("WAL write of " + stream + " failed: "
            + unwrap(head.error).getMessage() + "; nothing of it is acknowledged", unwrap(head.error))
            : streamUnusable(stream);
        if (head.error != null && usable) {
          stream.failure = "WAL write failed: " + unwrap(head.error);
          stream.transition(stream.state(), EngineStream.State.FAILED);
          LOG.log(System.Logger.Level.ERROR, "WAL write of " + stream + " failed; the stream stops", reason);
        }
        ackExecutor.execute(() -> head.future.completeExceptionally(reason));
      }
      appendFinished(stream);
    }
    inflightCount = inflight.size();
    if (!wal.healthy() && state == State.SERVING) {
      fail(new WalException("the WAL of node " + node.nodeId() + " failed: " + (error == null ? "" : unwrap(error))));
      return;
    }
    drainAdmission();
    maybeUpload();
  }

  private void appendFinished(EngineStream stream) {
    assert ownsState() : offLoop();
    stream.pendingAppends--;
    if (stream.pendingAppends == 0 && !stream.drainWaiters.isEmpty()) {
      List<CompletableFuture<Void>> waiters = new ArrayList<>(stream.drainWaiters);
      stream.drainWaiters.clear();
      // Through the ack thread, behind the acknowledgements already handed to it: a close completes
      // only after every earlier append's future has.
      for (CompletableFuture<Void> w : waiters) {
        try {
          ackExecutor.execute(() -> w.complete(null));
        } catch (java.util.concurrent.RejectedExecutionException e) {
          w.complete(null);
        }
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Upload (loop)

  private void onUploadInterval() {
    assert ownsState() : offLoop();
    if (cache.unuploadedBytes() > 0) {
      forceUpload = true;
      maybeUpload();
    }
  }

  private void maybeUpload() {
    assert ownsState() : offLoop();
    if (uploading || (state != State.SERVING && state != State.CLOSING)) {
      return;
    }
    boolean unuploaded = cache.unuploadedBytes() > 0;
    boolean due = cache.unuploadedBytes() >= config.uploadThresholdBytes() || forceUpload
        || !flushRequests.isEmpty() || (unuploaded && (!admission.isEmpty() || wal.trimWanted()));
    if (due) {
      startUpload(null);
    } else if (!streamFlushes.isEmpty()) {
      Set<Long> ids = new java.util.HashSet<>(streamFlushes.keySet());
      for (long id : closingStreams) {
        if (cache.hasUnuploaded(id)) {
          ids.add(id);
        }
      }
      startUpload(ids);
    }
  }

  /** Uploads the unuploaded batches of {@code streamIds} (null: of every stream). */
  private void startUpload(Set<Long> streamIds) {
    assert ownsState() : offLoop();
    if (streamIds == null) {
      forceUpload = false;
    }
    UploadSnapshot snapshot = cache.takeUploadSnapshot(streamIds);
    if (snapshot.isEmpty()) {
      completeFlushes();
      return;
    }
    uploading = true;
    SortedMap<Long, List<StreamRecordBatch>> byStream = new TreeMap<>();
    Map<Long, Long> epochs = new HashMap<>();
    snapshot.entriesByStream().forEach((streamId, entries) -> {
      List<StreamRecordBatch> batches = new ArrayList<>(entries.size());
      entries.forEach(e -> batches.add(e.batch()));
      byStream.put(streamId, batches);
      epochs.put(streamId, batches.getLast().epoch());
    });
    uploadWithRetry(new Uploader.Batches(byStream, epochs), 0,
        (streamId, fenced, reason) -> onLoop(() -> dropStream(streamId, fenced, reason)))
        .whenCompleteAsync((v, error) -> onUploaded(snapshot, byStream, error), loop);
  }

  private void onUploaded(UploadSnapshot snapshot, SortedMap<Long, List<StreamRecordBatch>> byStream, Throwable error) {
    assert ownsState() : offLoop();
    uploading = false;
    if (error != null) {
      cache.returnSnapshot(snapshot);
      fail(unwrap(error));
      return;
    }
    cache.markUploaded(snapshot);
    byStream.forEach((streamId, batches) -> {
      EngineStream stream = openStreams.get(streamId);
      if (stream != null) {
        stream.committedEndOffset = Math.max(stream.committedEndOffset, batches.getLast().nextOffset());
      }
    });
    long trimTo = cache.uploadedWalOffset(confirmedWalOffset + 1);
    wal.trim(trimTo).whenComplete((v, e) -> {
      if (e != null) {
        LOG.log(System.Logger.Level.WARNING, "WAL trim to " + trimTo + " failed; the next upload trims further", e);
      }
    });
    completeFlushes();
    drainAdmission();
    maybeUpload();
  }

  /** Completes the flushes whose batches are all committed now (global ones by WAL offset, per stream by the cache). */
  private void completeFlushes() {
    assert ownsState() : offLoop();
    long uploadedBelow = cache.uploadedWalOffset(confirmedWalOffset + 1);
    flushRequests.removeIf(request -> {
      if (request.walOffset() < uploadedBelow) {
        request.future().complete(null);
        return true;
      }
      return false;
    });
    streamFlushes.entrySet().removeIf(e -> {
      if (cache.hasUnuploaded(e.getKey())) {
        return false;
      }
      e.getValue().forEach(f -> f.complete(null));
      return true;
    });
  }

  /** Told when a stream's batches can never be committed by this node (fenced, or a gap); on the loop. */
  @FunctionalInterface
  private interface StreamDrop {
    void drop(long streamId, boolean fenced, String reason);
  }

  /**
   * Uploads {@code batches} until it succeeds: after a failure, asks the metadata which streams
   * are still ours and how far each is committed (a commit with an unknown outcome may have
   * succeeded), keeps what is still to commit, drops what never can be (reported to
   * {@code onDrop}) and tries again after a backoff. Only a fenced node or a halted engine ends it.
   */
  private CompletableFuture<Void> uploadWithRetry(Uploader.Batches batches, int attempt, StreamDrop onDrop) {
    if (state == State.CLOSED || state == State.FAILED) {
      return CompletableFuture.failedFuture(notServing());
    }
    return uploader.upload(batches).handle((v, error) -> error).thenCompose(error -> {
      if (error == null) {
        uploadSucceeded();
        return CompletableFuture.<Void>completedFuture(null);
      }
      Throwable cause = unwrap(error);
      if (cause instanceof NodeFencedException) {
        return CompletableFuture.<Void>failedFuture(cause);
      }
      long backoffMs = Math.min(config.uploadRetryBackoffMaxMs(), 100L << Math.min(attempt, 20));
      uploadFailed(attempt, cause, backoffMs);
      List<Long> ids = new ArrayList<>(batches.byStream().keySet());
      return streamManager.getStreams(ids)
          .handle((metas, metaError) -> metaError != null ? batches : remainingAfter(batches, metas, onDrop))
          .thenCompose(next -> {
            if (next.byStream().isEmpty()) {
              uploadSucceeded();
              return CompletableFuture.<Void>completedFuture(null);
            }
            CompletableFuture<Void> delay = new CompletableFuture<>();
            try {
              scheduler.schedule(() -> delay.complete(null), backoffMs, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.RejectedExecutionException e) {
              return CompletableFuture.<Void>failedFuture(notServing());
            }
            return delay.thenCompose(v -> uploadWithRetry(next, attempt + 1, onDrop));
          });
    });
  }

  /**
   * What of {@code batches} is still to commit, per the metadata: streams no longer held by this
   * node at the batches' epoch are dropped, as are streams whose committed end lies before the
   * batches (a gap no commit can bridge); batches at or below a stream's committed end are done.
   */
  private Uploader.Batches remainingAfter(Uploader.Batches batches, List<StreamMetadata> metas, StreamDrop onDrop) {
    Map<Long, StreamMetadata> byId = new HashMap<>();
    metas.forEach(m -> byId.put(m.streamId(), m));
    SortedMap<Long, List<StreamRecordBatch>> remaining = new TreeMap<>();
    batches.byStream().forEach((streamId, list) -> {
      StreamMetadata meta = byId.get(streamId);
      long epoch = batches.epochs().get(streamId);
      if (meta == null || meta.state() != StreamState.OPEN || meta.ownerNodeId() != node.nodeId()
          || meta.epoch() != epoch) {
        onDrop.drop(streamId, true, "no longer held by node " + node.nodeId() + " at epoch " + epoch + " (" + meta + ")");
        return;
      }
      List<StreamRecordBatch> left = list.stream().filter(b -> b.nextOffset() > meta.endOffset()).toList();
      if (left.isEmpty()) {
        return;
      }
      if (left.getFirst().baseOffset() != meta.endOffset()) {
        onDrop.drop(streamId, false, "unable to commit: its committed end " + meta.endOffset() + " does not reach the batches to upload, which "
            + "start at " + left.getFirst().baseOffset());
        return;
      }
      remaining.put(streamId, left);
    });
    return new Uploader.Batches(remaining, batches.epochs());
  }

  private void uploadFailed(int attempt, Throwable cause, long backoffMs) {
    onLoop(() -> uploadFailedOnLoop(attempt, cause, backoffMs));
  }

  private void uploadFailedOnLoop(int attempt, Throwable cause, long backoffMs) {
    assert ownsState() : offLoop();
    long now = clockMs.getAsLong();
    if (uploadFailingSinceMs < 0) {
      uploadFailingSinceMs = now;
    }
    lastUploadError = String.valueOf(cause);
    LOG.log(System.Logger.Level.WARNING, "upload attempt " + (attempt + 1) + " of node " + node.nodeId()
        + " failed: " + cause + "; uploads have failed for " + (now - uploadFailingSinceMs) + " ms, "
        + cache.unuploadedBytes() + " bytes wait in the log cache; reconciling and retrying in " + backoffMs + " ms");
  }

  private void uploadSucceeded() {
    onLoop(this::uploadSucceededOnLoop);
  }

  private void uploadSucceededOnLoop() {
    assert ownsState() : offLoop();
    if (uploadFailingSinceMs >= 0) {
      LOG.log(System.Logger.Level.INFO, "uploads of node " + node.nodeId() + " succeed again after "
          + (clockMs.getAsLong() - uploadFailingSinceMs) + " ms of failures");
    }
    uploadFailingSinceMs = -1;
    lastUploadError = "";
  }

  /** The batches of the stream can never be committed from here: it stops (fenced, or failed after a gap). */
  private void dropStream(long streamId, boolean fenced, String reason) {
    assert ownsState() : offLoop();
    EngineStream stream = openStreams.remove(streamId);
    LOG.log(System.Logger.Level.WARNING, "stream " + streamId + " is " + reason + "; dropping its unuploaded batches");
    if (stream != null) {
      if (stream.state() == EngineStream.State.OPEN || stream.state() == EngineStream.State.CLOSING) {
        stream.failure = reason;
        stream.transition(stream.state(), fenced ? EngineStream.State.FENCED : EngineStream.State.FAILED);
      }
    }
    cache.removeStream(streamId);
    List<CompletableFuture<Void>> waiting = streamFlushes.remove(streamId);
    if (waiting != null) {
      waiting.forEach(f -> f.completeExceptionally(new StreamFencedException("stream " + streamId + " is " + reason)));
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Fetch, trim, close (called by EngineStream)

  CompletableFuture<FetchResult> fetch(EngineStream stream, long startOffset, long endOffset, int maxBytes) {
    if (stream.state() == EngineStream.State.FENCED || stream.state() == EngineStream.State.CLOSED) {
      return CompletableFuture.failedFuture(streamUnusable(stream));
    }
    long first = stream.startOffset;
    long next = stream.confirmedNextOffset;
    if (startOffset < first || startOffset > next) {
      return CompletableFuture.failedFuture(new OffsetOutOfRangeException("offset " + startOffset + " of stream "
          + stream.streamId() + " is outside its readable range [" + first + ", " + next + ")"));
    }
    long end = Math.min(endOffset, next);
    if (startOffset >= end) {
      return CompletableFuture.completedFuture(new FetchResult(List.of(), false));
    }
    long streamId = stream.streamId();
    long cachedFrom = cache.firstOffset(streamId);
    if (cachedFrom >= 0 && startOffset >= cachedFrom) {
      List<StreamBatch> hot = cache.read(streamId, startOffset, end, maxBytes);
      if (!hot.isEmpty()) {
        return CompletableFuture.completedFuture(new FetchResult(hot, false));
      }
    }
    long coldEnd = cachedFrom > startOffset ? Math.min(end, cachedFrom) : end;
    return coldReader.read(streamId, startOffset, coldEnd, maxBytes).thenApply(cold -> {
      List<StreamBatch> batches = new ArrayList<>(cold);
      long reached = cold.isEmpty() ? startOffset : cold.getLast().nextOffset();
      long bytes = 0;
      for (StreamBatch b : cold) {
        bytes += b.payload().remaining();
      }
      if (!cold.isEmpty() && reached >= coldEnd && reached < end && bytes < maxBytes) {
        batches.addAll(cache.read(streamId, reached, end, maxBytes - bytes));
      }
      return new FetchResult(batches, true);
    });
  }

  CompletableFuture<Void> trim(EngineStream stream, long newStartOffset) {
    if (stream.state() != EngineStream.State.OPEN) {
      return CompletableFuture.failedFuture(streamUnusable(stream));
    }
    if (newStartOffset > stream.confirmedNextOffset) {
      return CompletableFuture.failedFuture(new OffsetOutOfRangeException("cannot trim stream " + stream.streamId()
          + " to " + newStartOffset + ": beyond its next offset " + stream.confirmedNextOffset));
    }
    if (newStartOffset <= stream.startOffset) {
      return CompletableFuture.completedFuture(null);
    }
    CompletableFuture<Void> uploaded = newStartOffset > stream.committedEndOffset ? flushStream(stream.streamId())
        : CompletableFuture.completedFuture(null);
    return uploaded.thenCompose(v -> streamManager.trimStream(node, stream.streamId(), stream.epoch(), newStartOffset))
        .thenCompose(v -> runOnLoop(() -> stream.startOffset = Math.max(stream.startOffset, newStartOffset)));
  }

  CompletableFuture<Void> closeStream(EngineStream stream) {
    CompletableFuture<CompletableFuture<Void>> started = new CompletableFuture<>();
    execute(() -> {
      if (stream.closeFuture != null) {
        started.complete(stream.closeFuture);
        return;
      }
      CompletableFuture<Void> drained = new CompletableFuture<>();
      if (stream.state() == EngineStream.State.OPEN) {
        stream.transition(EngineStream.State.OPEN, EngineStream.State.CLOSING);
        closingStreams.add(stream.streamId());
      }
      if (stream.pendingAppends == 0) {
        drained.complete(null);
      } else {
        stream.drainWaiters.add(drained);
      }
      stream.closeFuture = drained
          .thenComposeAsync(v -> stream.state() == EngineStream.State.CLOSING ? flushStream(stream.streamId())
              : CompletableFuture.completedFuture(null), loop)
          .thenCompose(v -> stream.state() == EngineStream.State.CLOSING
              ? streamManager.closeStream(node, stream.streamId(), stream.epoch())
              : CompletableFuture.completedFuture(null))
          .whenCompleteAsync((v, error) -> {
            if (stream.state() == EngineStream.State.CLOSING) {
              stream.transition(EngineStream.State.CLOSING, EngineStream.State.CLOSED);
            }
            openStreams.remove(stream.streamId(), stream);
            closingStreams.remove(stream.streamId());
            cache.removeStream(stream.streamId());
          }, loop);
      started.complete(stream.closeFuture);
    }, started);
    return started.thenCompose(f -> f);
  }

  // ---------------------------------------------------------------------------------------------
  // Recovery (during start)

  private record Recovered(SortedMap<Long, List<StreamRecordBatch>> byStream, long lastWalOffset) {}

  private Recovered readWal() {
    SortedMap<Long, List<StreamRecordBatch>> byStream = new TreeMap<>();
    long last = -1;
    int records = 0;
    Iterator<WalRecord> it = wal.recover();
    while (it.hasNext()) {
      WalRecord record = it.next();
      last = Math.max(last, record.walOffset());
      try {
        StreamRecordBatch batch = StreamBatchCodec.decode(record.payload().duplicate());
        byStream.computeIfAbsent(batch.streamId(), k -> new ArrayList<>()).add(batch);
        records++;
      } catch (CorruptBatchException e) {
        LOG.log(System.Logger.Level.ERROR, "WAL record at " + record.walOffset() + " is not a stream batch ("
            + e.getMessage() + "); skipped");
      }
    }
    wal.start();
    LOG.log(System.Logger.Level.INFO, "node " + node.nodeId() + " recovered " + records + " WAL records of "
        + byStream.size() + " streams");
    return new Recovered(byStream, last);
  }

  private CompletableFuture<Void> uploadRecovered(Recovered recovered) {
    if (recovered.byStream().isEmpty()) {
      return recovered.lastWalOffset() >= 0 ? wal.trim(recovered.lastWalOffset() + 1)
          : CompletableFuture.completedFuture(null);
    }
    return streamManager.getStreams(new ArrayList<>(recovered.byStream().keySet())).thenCompose(metas -> {
      Map<Long, StreamMetadata> byId = new HashMap<>();
      metas.forEach(m -> byId.put(m.streamId(), m));
      List<Uploader.Batches> chunks = new ArrayList<>();
      SortedMap<Long, List<StreamRecordBatch>> chunk = new TreeMap<>();
      Map<Long, Long> epochs = new HashMap<>();
      long chunkBytes = 0;
      for (Map.Entry<Long, List<StreamRecordBatch>> e : recovered.byStream().entrySet()) {
        StreamMetadata meta = byId.get(e.getKey());
        List<StreamRecordBatch> tail = recoverableTail(e.getKey(), e.getValue(), meta);
        if (tail.isEmpty()) {
          continue;
        }
        epochs.put(e.getKey(), meta.epoch());
        for (StreamRecordBatch b : tail) {
          chunk.computeIfAbsent(b.streamId(), k -> new ArrayList<>()).add(b);
          chunkBytes += b.encodedBytes();
          if (chunkBytes >= config.uploadThresholdBytes()) {
            chunks.add(new Uploader.Batches(chunk, epochs));
            chunk = new TreeMap<>();
            chunkBytes = 0;
          }
        }
      }
      if (!chunk.isEmpty()) {
        chunks.add(new Uploader.Batches(chunk, epochs));
      }
      CompletableFuture<Void> sequence = CompletableFuture.completedFuture(null);
      for (Uploader.Batches c : chunks) {
        sequence = sequence.thenCompose(v -> uploadWithRetry(c, 0, (streamId, fenced, reason) -> LOG.log(
            System.Logger.Level.WARNING, "recovered batches of stream " + streamId + " not uploaded: " + reason)));
      }
      return sequence.thenCompose(v -> wal.trim(recovered.lastWalOffset() + 1));
    });
  }

  /** The batches of one stream that continue its committed end without a gap and that this node may commit. */
  private List<StreamRecordBatch> recoverableTail(long streamId, List<StreamRecordBatch> batches, StreamMetadata meta) {
    if (meta == null || meta.state() != StreamState.OPEN || meta.ownerNodeId() != node.nodeId()) {
      LOG.log(System.Logger.Level.WARNING, "WAL holds " + batches.size() + " batches of stream " + streamId
          + " which node " + node.nodeId() + " no longer holds (" + meta + "); not recovered");
      return List.of();
    }
    List<StreamRecordBatch> tail = new ArrayList<>();
    long expected = meta.endOffset();
    for (StreamRecordBatch b : batches) {
      if (b.nextOffset() <= expected && tail.isEmpty()) {
        continue;
      }
      if (b.baseOffset() != expected) {
        LOG.log(System.Logger.Level.ERROR, "WAL batches of stream " + streamId + " jump from offset " + expected
            + " to " + b.baseOffset() + "; recovering only up to " + expected);
        break;
      }
      tail.add(b);
      expected = b.nextOffset();
    }
    return tail;
  }

  /** Rounds of {@link #closeOpeningStreams}: a loaded controller that times out some closes gets more rounds. */
  static final int RECOVERY_CLOSE_ATTEMPTS = 10;

  private CompletableFuture<Void> closeOpeningStreams() {
    return closeOpeningStreams(0);
  }

  /**
   * Closes the streams the metadata still shows open on this node (its previous epochs'). A round
   * whose closes did not all succeed (the controller timed out under load) is followed by another
   * after a backoff, which asks again which are still open, up to {@value #RECOVERY_CLOSE_ATTEMPTS}
   * rounds; a fenced node or a stopped engine ends it at once.
   */
  private CompletableFuture<Void> closeOpeningStreams(int attempt) {
    return streamManager.getOpeningStreams(node).thenCompose(opening -> {
      if (attempt == 0) {
        LOG.log(System.Logger.Level.INFO, "node " + node.nodeId() + " closes the " + opening.size()
            + " streams its previous epochs held open");
      }
      List<CompletableFuture<Void>> closes = new ArrayList<>();
      for (StreamMetadata meta : opening) {
        closes.add(streamManager.closeStream(node, meta.streamId(), meta.epoch()));
      }
      return CompletableFuture.allOf(closes.toArray(CompletableFuture[]::new));
    }).handle((v, error) -> error).thenCompose(error -> {
      if (error == null) {
        return CompletableFuture.<Void>completedFuture(null);
      }
      Throwable cause = unwrap(error);
      if (cause instanceof NodeFencedException || attempt + 1 >= RECOVERY_CLOSE_ATTEMPTS
          || state == State.CLOSED || state == State.FAILED) {
        return CompletableFuture.<Void>failedFuture(cause);
      }
      long backoffMs = Math.min(config.uploadRetryBackoffMaxMs(), 100L << Math.min(attempt, 20));
      LOG.log(System.Logger.Level.WARNING, "node " + node.nodeId() + " could not close every stream its previous "
          + "epochs held (" + cause + "); asking again in " + backoffMs + " ms");
      CompletableFuture<Void> delay = new CompletableFuture<>();
      try {
        scheduler.schedule(() -> delay.complete(null), backoffMs, TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.RejectedExecutionException e) {
        return CompletableFuture.<Void>failedFuture(notServing());
      }
      return delay.thenCompose(x -> closeOpeningStreams(attempt + 1));
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers

  /** Enters FAILED; on the loop only. */
  private void fail(Throwable error) {
    assert ownsState() : "engine of node " + node.nodeId() + " failed on thread " + Thread.currentThread().getName();
    if (state == State.FAILED || state == State.CLOSED) {
      return;
    }
    failure = error;
    transition(state, State.FAILED);
    LOG.log(System.Logger.Level.ERROR, "stream engine of node " + node.nodeId() + " failed; the node must start "
        + "again to recover from its WAL (the server's supervisor does so in-process; /health reports it)", error);
    try {
      loop.execute(() -> {
        StreamException reason = notServing();
        admission.forEach(p -> {
          waitingBytes.addAndGet(-p.sizeBytes());
          ackExecutor.execute(() -> p.future.completeExceptionally(reason));
          appendFinished(p.stream);
        });
        admission.clear();
        streamFlushes.values().forEach(list -> list.forEach(f -> f.completeExceptionally(reason)));
        streamFlushes.clear();
        flushRequests.forEach(r -> r.future().completeExceptionally(reason));
        flushRequests.clear();
      });
    } catch (java.util.concurrent.RejectedExecutionException ignored) {
      // already halted
    }
    // on a thread of its own: whoever is told may close this engine, which waits for the loop (maybe the caller)
    Thread.ofPlatform().daemon().name("tidemark-engine-failed-" + node.nodeId()).start(() -> failed.complete(error));
  }

  /**
   * Completes once, with the cause, when this engine FAILED (the WAL itself failed, the node was
   * fenced, or start-up could not read the WAL). Nothing in the engine heals that: the owner closes
   * it and starts a new engine on the same WAL, whose recovery uploads every acknowledged record
   * (the server's {@code NodeSupervisor} does so in-process). Never completes for a clean close.
   */
  public CompletionStage<Throwable> onFailed() {
    return failed.copy();
  }

  private StreamException notServing() {
    return new StreamClosedException("stream engine of node " + node.nodeId() + " is " + state
        + (failure != null ? " (" + failure + ")" : ""));
  }

  private static StreamException streamUnusable(EngineStream stream) {
    return switch (stream.state()) {
      case FENCED -> new StreamFencedException(stream + " was opened with a newer epoch elsewhere");
      case FAILED -> new StreamClosedException(stream + " failed: " + stream.failure);
      default -> new StreamClosedException(stream + " is not open");
    };
  }

  private void execute(Runnable task, CompletableFuture<?> onReject) {
    try {
      loop.execute(task);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      onReject.completeExceptionally(notServing());
    }
  }

  /** Hands {@code task} to the loop; dropped when the engine was halted (a crash loses in-flight work by design). */
  private void onLoop(Runnable task) {
    try {
      loop.execute(task);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      LOG.log(System.Logger.Level.DEBUG, "engine of node " + node.nodeId() + " halted; dropping a completion");
    }
  }

  private static Throwable unwrap(Throwable error) {
    Throwable t = error;
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  private static java.util.concurrent.ThreadFactory named(String name) {
    return runnable -> {
      Thread thread = new Thread(runnable, name);
      thread.setDaemon(true);
      return thread;
    };
  }
}
