package io.tidemark.broker.cleaner;

import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.partition.Partitions;
import io.tidemark.stream.api.StreamRewriter;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.BufferSupplier;
import org.apache.kafka.common.utils.internals.CloseableIterator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka's log cleaner for compacted topics ({@code cleanup.policy=compact}), on streams. The data of
 * a partition's stream falls in three parts: the <em>clean</em> part below the partition's
 * checkpoint ({@link PartitionLog#cleanedOffset()}, kept in its snapshot so it survives a crash and
 * a move), the <em>dirty</em> part above it up to the <em>cleanable end</em>, and the rest. The
 * cleanable end is the end of the partition's data committed to object storage, in stream objects
 * or in stream-set objects of any node ({@link StreamRewriter#pieces}), at least
 * {@code min.compaction.lag.ms} ago and ending at or below the last stable offset (as Kafka,
 * nothing of an undecided transaction is cleaned): the active tail (WAL, log cache) is never
 * touched, so appends and reads never wait. Data is uploaded at least every
 * {@code stream.upload.interval.ms}, which bounds the part never cleaned as Kafka's
 * {@code segment.ms} bounds its active segment. Transactions are cleaned with Kafka's rules ({@link CleanedTransactions}).
 *
 * <p>A pass over one partition is due when dirty bytes reach {@code min.cleanable.dirty.ratio} of
 * the cleanable bytes, or the oldest dirty object is older than {@code max.compaction.lag.ms}. It
 * (1) reads the dirty part from the checkpoint and records each key's latest offset in a
 * {@link KeyOffsetMap} of {@code kafka.log.cleaner.dedupe.buffer.bytes}, stopping where the map is
 * full (markers and aborted transactions' records are left out of it); (2) rewrites
 * every object from the partition's start up to the map's end, a group of at most
 * {@code kafka.log.cleaner.max.rewrite.bytes} at a time (the memory bound), with
 * {@link CompactedBatches}, each group one atomic replacement; (3) when every group succeeded, moves
 * the checkpoint to the map's end. A failed group leaves its objects as they were and the
 * checkpoint where it was, so the next pass redoes the work (the log is correct either way: a
 * group is either old or cleaned). Offsets never change; consumers see gaps, as in Kafka.
 *
 * <p>Bounds: at most {@code log.cleaner.threads} passes at a time (Kafka's key; one partition per
 * pass, each on a {@code kafka-log-cleaner-thread-<n>}), each with a key map of
 * {@code kafka.log.cleaner.dedupe.buffer.bytes} divided by the thread count (as Kafka divides its
 * dedupe buffer), so memory is the whole key map plus one group per thread; a run (all partitions)
 * stops starting passes after {@code kafka.log.cleaner.max.bytes.per.run} bytes read, and a
 * partition's pass is never split. The thread count changes at run time as Kafka's dynamic
 * {@code log.cleaner.threads} (at least 1, at least half and at most
 * double the current count, at most {@value #MAX_THREADS}; {@link #dynamicConfig}); the next run uses the new count. A partition moved away while being cleaned loses
 * the race safely: its replacement commits fail or replace data with an equally valid cleaning.
 */
public final class LogCleaner implements AutoCloseable {

  /** Kafka's dynamic key for the cleaner's thread count. */
  public static final String THREADS_KEY = "log.cleaner.threads";
  /** Most cleaner threads. */
  public static final int MAX_THREADS = 64;

  private static final Logger log = LoggerFactory.getLogger(LogCleaner.class);
  private static final int READ_CHUNK_BYTES = 1024 * 1024;
  private static final long PASS_TIMEOUT_MINUTES = 10;

  /** The cleaner's node-wide bounds. */
  public record Limits(long dedupeBufferBytes, long maxRewriteBytes, long maxBytesPerRun) {}

  /** What one run did, summed over its partitions (for tests, metrics and the benchmark). */
  public record RunReport(int partitionsCleaned, long bytesRead, long bytesWritten, long recordsDropped, List<String> failures) {}

  private final Partitions partitions;
  private final Function<TopicPartition, CleanerPolicy> policies;
  private final StreamRewriter rewriter;
  private final Time time;
  private final Limits limits;
  private final AtomicLong bytesCleaned = new AtomicLong();
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "log-cleaner");
    t.setDaemon(true);
    return t;
  });

  private final int configuredThreads;
  private volatile int threads;
  private final java.util.concurrent.atomic.AtomicInteger threadIds = new java.util.concurrent.atomic.AtomicInteger();
  /** Runs the passes of a run; its size follows {@link #threads}. Its queue holds at most one task per open partition. */
  private final java.util.concurrent.ThreadPoolExecutor passes;

  public LogCleaner(Partitions partitions, Function<TopicPartition, CleanerPolicy> policies, StreamRewriter rewriter,
      Time time, Limits limits) {
    this(partitions, policies, rewriter, time, limits, 1);
  }

  public LogCleaner(Partitions partitions, Function<TopicPartition, CleanerPolicy> policies, StreamRewriter rewriter,
      Time time, Limits limits, int threads) {
    this.configuredThreads = threads;
    this.threads = threads;
    this.passes = new java.util.concurrent.ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS,
        new java.util.concurrent.LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(r, "kafka-log-cleaner-thread-" + threadIds.getAndIncrement());
          t.setDaemon(true);
          return t;
        });
    this.partitions = partitions;
    this.policies = policies;
    this.rewriter = rewriter;
    this.time = time;
    this.limits = limits;
  }

  public void start(long intervalMs) {
    scheduler.scheduleWithFixedDelay(() -> {
      try {
        runOnce();
      } catch (RuntimeException e) {
        log.warn("log cleaner run failed; the next run retries: {}", e.toString());
      }
    }, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
  }

  /** Bytes of object data the cleaner has read and rewritten since it started. */
  public long bytesCleaned() {
    return bytesCleaned.get();
  }

  /** Passes run at once now (Kafka's {@code log.cleaner.threads}). */
  public int threads() {
    return threads;
  }

  /**
   * One run over every open compacted partition that is due, its passes spread over the cleaner
   * threads; waits for it (call from one thread at a time).
   */
  public synchronized RunReport runOnce() {
    long mapBytes = Math.max(1024, limits.dedupeBufferBytes() / threads);
    RunTotals totals = new RunTotals();
    List<java.util.concurrent.Future<?>> started = new ArrayList<>();
    for (PartitionLog p : partitions.all()) {
      CleanerPolicy policy = policies.apply(p.topicPartition());
      if (policy == null || !policy.compacted()) {
        continue;
      }
      started.add(passes.submit(() -> {
        if (totals.read() >= limits.maxBytesPerRun()) {
          return;
        }
        try {
          totals.add(clean(p, policy, mapBytes).get(PASS_TIMEOUT_MINUTES, TimeUnit.MINUTES));
        } catch (Exception e) {
          Throwable cause = e.getCause() != null ? e.getCause() : e;
          totals.failed(p.topicPartition() + ": " + cause);
          log.warn("cleaning {} failed; its data is unchanged or cleaned in part, and the next pass redoes it: {}",
              p.topicPartition(), cause.toString());
        }
      }));
    }
    for (java.util.concurrent.Future<?> f : started) {
      try {
        f.get();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      } catch (java.util.concurrent.ExecutionException | java.util.concurrent.CancellationException e) {
        totals.failed(e.toString());
      }
    }
    return totals.report(bytesCleaned);
  }

  /** The sums of one run, added to by its passes on the cleaner threads. */
  private static final class RunTotals {
    private int cleaned;
    private long read;
    private long written;
    private long dropped;
    private final List<String> failures = new ArrayList<>();

    synchronized long read() {
      return read;
    }

    synchronized void add(PassReport r) {
      if (r != null) {
        cleaned++;
        read += r.bytesRead;
        written += r.bytesWritten;
        dropped += r.recordsDropped;
      }
    }

    synchronized void failed(String failure) {
      failures.add(failure);
    }

    synchronized RunReport report(AtomicLong bytesCleaned) {
      bytesCleaned.addAndGet(read);
      return new RunReport(cleaned, read, written, dropped, List.copyOf(failures));
    }
  }

  /** As Kafka's dynamic {@code log.cleaner.threads}, statically {@code kafka.log.cleaner.threads}. */
  public io.tidemark.broker.admin.DynamicThreadCount dynamicConfig() {
    return new io.tidemark.broker.admin.DynamicThreadCount(THREADS_KEY, "kafka.log.cleaner.threads", configuredThreads, MAX_THREADS,
        "Tidemark's bound", io.tidemark.broker.admin.DynamicThreadCount.Wording.LOG_CLEANER, this::threads, this::resize);
  }

  /** Runs the next runs' passes on {@code n} threads (1 to {@value #MAX_THREADS}). */
  public void resize(int n) {
    if (n < 1 || n > MAX_THREADS) {
      throw new IllegalArgumentException("log cleaner threads " + n + " outside 1.." + MAX_THREADS);
    }
    synchronized (passes) {
      if (n > passes.getMaximumPoolSize()) {
        passes.setMaximumPoolSize(n);
        passes.setCorePoolSize(n);
      } else {
        passes.setCorePoolSize(n);
        passes.setMaximumPoolSize(n);
      }
    }
    threads = n;
    log.info("log cleaner threads: {}", n);
  }

  private static final class PassReport {
    long bytesRead;
    long bytesWritten;
    long recordsDropped;
  }

  /** One pass over one partition, or null when none is due. */
  private CompletableFuture<PassReport> clean(PartitionLog p, CleanerPolicy policy, long mapBytes) {
    long streamId = p.location().dataStreamId();
    long now = time.milliseconds();
    long started = System.nanoTime();
    return rewriter.pieces(streamId).thenCompose(all -> {
      List<StreamRewriter.Piece> cleanable = new ArrayList<>();
      for (StreamRewriter.Piece piece : all) {
        if (piece.committedAtMs() > now - policy.minCompactionLagMs() || piece.endOffset() > p.lastStableOffset()) {
          break;
        }
        cleanable.add(piece);
      }
      if (cleanable.isEmpty()) {
        return CompletableFuture.completedFuture(null);
      }
      long firstDirty = Math.max(p.cleanedOffset(), cleanable.getFirst().startOffset());
      long cleanableEnd = cleanable.getLast().endOffset();
      if (firstDirty >= cleanableEnd || !due(cleanable, firstDirty, now, policy)) {
        return CompletableFuture.completedFuture(null);
      }
      KeyOffsetMap map = new KeyOffsetMap(mapBytes);
      // below the last stable offset every transaction is decided: the index says which were aborted
      List<long[]> aborted = p.abortedTransactionRanges(0, cleanableEnd);
      return buildMap(p, map, new CleanedTransactions(aborted), firstDirty, cleanableEnd).thenCompose(mapEnd -> {
        if (mapEnd <= firstDirty) {
          log.warn("cleaning {} makes no progress at offset {}: the next batch does not fit the key map of {} bytes "
              + "(kafka.log.cleaner.dedupe.buffer.bytes divided by log.cleaner.threads)", p.topicPartition(), firstDirty, mapBytes);
          return CompletableFuture.completedFuture(null);
        }
        CleanedTransactions txns = new CleanedTransactions(aborted);
        List<List<StreamRewriter.Piece>> groups = groups(cleanable, mapEnd);
        PassReport report = new PassReport();
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (List<StreamRewriter.Piece> group : groups) {
          chain = chain.thenCompose(v -> rewriter.rewrite(streamId, group, batches -> {
            CompactedBatches.Outcome o = CompactedBatches.clean(batches, map, txns, firstDirty, mapEnd, now,
                policy.deleteRetentionMs());
            report.recordsDropped += o.recordsDropped();
            return o.batches();
          }).thenAccept(r -> {
            report.bytesRead += r.bytesRead();
            report.bytesWritten += r.bytesWritten();
          }));
        }
        return chain.thenCompose(v -> p.recordCleaned(mapEnd, txns.emptyAbortedMarkers())).thenApply(v -> {
          log.info("cleaned {} up to offset {} in {} ms: {} pieces in {} groups, {} bytes read, {} written, {} records dropped",
              p.topicPartition(), mapEnd, (System.nanoTime() - started) / 1_000_000,
              groups.stream().mapToInt(List::size).sum(), groups.size(), report.bytesRead, report.bytesWritten,
              report.recordsDropped);
          return report;
        });
      });
    });
  }

  /** Due by dirty ratio (object bytes) or by the age of the oldest dirty object. Pure. */
  static boolean due(List<StreamRewriter.Piece> cleanable, long firstDirty, long nowMs, CleanerPolicy policy) {
    long clean = 0;
    long dirty = 0;
    long oldestDirty = Long.MAX_VALUE;
    for (StreamRewriter.Piece piece : cleanable) {
      if (piece.endOffset() <= firstDirty) {
        clean += piece.sizeBytes();
      } else {
        dirty += piece.sizeBytes();
        oldestDirty = Math.min(oldestDirty, piece.committedAtMs());
      }
    }
    double ratio = clean + dirty == 0 ? 0 : (double) dirty / (clean + dirty);
    return ratio >= policy.minCleanableDirtyRatio() || nowMs - oldestDirty >= policy.maxCompactionLagMs();
  }

  /** Consecutive pieces from the start up to the one holding {@code mapEnd - 1}, in groups within the rewrite bound. */
  private List<List<StreamRewriter.Piece>> groups(List<StreamRewriter.Piece> cleanable, long mapEnd) {
    List<List<StreamRewriter.Piece>> groups = new ArrayList<>();
    List<StreamRewriter.Piece> current = new ArrayList<>();
    long bytes = 0;
    for (StreamRewriter.Piece piece : cleanable) {
      if (piece.startOffset() >= mapEnd) {
        break;
      }
      if (!current.isEmpty() && (bytes + piece.sizeBytes() > limits.maxRewriteBytes()
          || current.size() == StreamRewriter.MAX_PIECES_PER_REWRITE)) {
        groups.add(current);
        current = new ArrayList<>();
        bytes = 0;
      }
      current.add(piece);
      bytes += piece.sizeBytes();
    }
    if (!current.isEmpty()) {
      groups.add(current);
    }
    return groups;
  }

  /**
   * Reads from {@code from} and puts every keyed record's offset in the map, batch by batch, leaving
   * out markers and the batches of aborted transactions; returns the offset after the last batch
   * taken: {@code end}, or where the map is full.
   */
  private CompletableFuture<Long> buildMap(PartitionLog p, KeyOffsetMap map, CleanedTransactions txns, long from, long end) {
    if (from >= end) {
      return CompletableFuture.completedFuture(from);
    }
    return p.read(from, READ_CHUNK_BYTES).thenCompose(r -> {
      long next = from;
      for (ByteBuffer stored : r.batches()) {
        Iterator<MutableRecordBatch> it = MemoryRecords.readableRecords(stored.duplicate()).batches().iterator();
        MutableRecordBatch b = it.next();
        if (b.lastOffset() < from) {
          continue;
        }
        if (b.baseOffset() >= end) {
          return CompletableFuture.completedFuture(next);
        }
        if (b.isControlBatch() || (b.isTransactional() && txns.abortedMarker(b.producerId(), b.baseOffset()) >= 0)) {
          next = b.lastOffset() + 1;
          continue;
        }
        int count = b.countOrNull() == null ? (int) (b.lastOffset() - b.baseOffset() + 1) : b.countOrNull();
        if (map.remaining() < count) {
          return CompletableFuture.completedFuture(b.baseOffset());
        }
        try (CloseableIterator<Record> records = b.streamingIterator(BufferSupplier.NO_CACHING)) {
          while (records.hasNext()) {
            Record rec = records.next();
            if (rec.hasKey()) {
              byte[] key = new byte[rec.keySize()];
              rec.key().duplicate().get(key);
              map.put(key, rec.offset());
            }
          }
        }
        next = b.lastOffset() + 1;
      }
      return next <= from ? CompletableFuture.completedFuture(from) : buildMap(p, map, txns, next, end);
    });
  }

  @Override
  public void close() {
    scheduler.shutdownNow();
    passes.shutdownNow();
  }
}
