package io.tidemark.broker.fetch;

import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.partition.Partitions;
import io.tidemark.broker.metrics.BrokerMeters;
import io.tidemark.broker.partition.ReadResult;
import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.protocol.ErrorMapping;
import io.tidemark.broker.protocol.RequestContext;
import io.tidemark.broker.record.RecordBatches;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.broker.topic.TopicRegistry;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntSupplier;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.FetchMetadata;
import org.apache.kafka.common.requests.FetchRequest;

/**
 * Fetch (v4–18) for consumers: reads whole batches from each partition up to the high watermark
 * within the partition and response byte limits (the first partition with data always returns at
 * least one whole batch, KIP-74), long-polls while fewer than MinBytes are available (up to
 * MaxWaitMs, capped by {@code kafka.fetch.max.wait.ms}), and keeps incremental fetch sessions.
 * {@code read_uncommitted} reads up to the high watermark; {@code read_committed} up to the last
 * stable offset, with the aborted transactions of the range returned so that the client skips
 * their records (Kafka's behaviour). Every response carries the partition's last stable offset.
 * Follower fetches (replica id ≥ 0) are refused.
 */
public final class FetchHandler implements ApiHandler {

  private final TopicRegistry registry;
  private final Partitions partitions;
  private final FetchSessionCache sessions;
  private final DelayedFetches delayed;
  private final int maxWaitCapMs;
  private final BrokerMeters meters;

  public FetchHandler(TopicRegistry registry, Partitions partitions, int sessionSlots, int maxDelayed, int maxWaitCapMs,
      IntSupplier sessionIds) {
    this(registry, partitions, sessionSlots, maxDelayed, maxWaitCapMs, sessionIds, BrokerMeters.noop());
  }

  /** Counts the bytes and records it returns per topic into {@code meters}. */
  public FetchHandler(TopicRegistry registry, Partitions partitions, int sessionSlots, int maxDelayed, int maxWaitCapMs,
      IntSupplier sessionIds, BrokerMeters meters) {
    this.meters = meters;
    this.registry = registry;
    this.partitions = partitions;
    this.sessions = new FetchSessionCache(sessionSlots, sessionIds);
    this.delayed = new DelayedFetches(maxDelayed);
    this.maxWaitCapMs = maxWaitCapMs;
  }

  /** Wakes long-polling fetches; the topic lifecycle hands it to every partition. */
  public PartitionLog.AppendListener appendListener() {
    return delayed;
  }

  public void close() {
    delayed.close();
  }

  /** Fetches long-polling for data now (the fetch purgatory's size). */
  public int delayedFetches() {
    return delayed.waiting();
  }

  /** What one request reads: partitions in order, with their positions. */
  private record Plan(short version, int sessionId, FetchSessionCache.Session session, boolean incremental,
      LinkedHashMap<TopicIdPartition, FetchSessionCache.Entry> reads, int maxBytes, int minBytes, long maxWaitMs,
      boolean readCommitted) {}

  @Override
  public CompletableFuture<ApiMessage> handle(RequestContext context, AbstractRequest request) {
    FetchRequest req = (FetchRequest) request;
    short v = req.version();
    if (req.replicaId() >= 0) {
      return CompletableFuture.completedFuture(topLevelError(Errors.NOT_LEADER_OR_FOLLOWER));
    }
    Map<Uuid, String> names = registry.topicNamesById();
    Map<TopicIdPartition, FetchRequest.PartitionData> data = req.fetchData(names);
    List<TopicIdPartition> forgotten = req.forgottenTopics(names);
    FetchMetadata md = req.metadata();
    Plan plan;
    if (md.isFull()) {
      if (md.sessionId() != FetchMetadata.INVALID_SESSION_ID) {
        sessions.remove(md.sessionId());
      }
      LinkedHashMap<TopicIdPartition, FetchSessionCache.Entry> reads = new LinkedHashMap<>();
      data.forEach((tip, pd) -> reads.put(tip, new FetchSessionCache.Entry(pd.fetchOffset, pd.maxBytes,
          pd.currentLeaderEpoch.orElse(-1))));
      FetchSessionCache.Session session = md.epoch() == FetchMetadata.INITIAL_EPOCH && v >= 7 ? sessions.create() : null;
      if (session != null) {
        synchronized (session) {
          session.partitions.putAll(reads);
        }
      }
      plan = new Plan(v, session == null ? 0 : session.id, session, false, reads, req.maxBytes(), req.minBytes(), maxWait(req),
          committed(req));
    } else {
      FetchSessionCache.Session session = sessions.get(md.sessionId());
      if (session == null) {
        return CompletableFuture.completedFuture(topLevelError(Errors.FETCH_SESSION_ID_NOT_FOUND));
      }
      LinkedHashMap<TopicIdPartition, FetchSessionCache.Entry> reads;
      synchronized (session) {
        if (md.epoch() != session.nextEpoch) {
          return CompletableFuture.completedFuture(topLevelError(Errors.INVALID_FETCH_SESSION_EPOCH));
        }
        session.nextEpoch = FetchMetadata.nextEpoch(session.nextEpoch);
        for (TopicIdPartition f : forgotten) {
          session.partitions.remove(f);
          session.partitions.keySet().removeIf(k -> k.topicPartition().equals(f.topicPartition()));
        }
        data.forEach((tip, pd) -> {
          FetchSessionCache.Entry e = session.partitions.get(tip);
          if (e == null) {
            session.partitions.put(tip, new FetchSessionCache.Entry(pd.fetchOffset, pd.maxBytes, pd.currentLeaderEpoch.orElse(-1)));
          } else {
            e.fetchOffset = pd.fetchOffset;
            e.maxBytes = pd.maxBytes;
            e.currentLeaderEpoch = pd.currentLeaderEpoch.orElse(-1);
          }
        });
        reads = new LinkedHashMap<>(session.partitions);
      }
      plan = new Plan(v, session.id, session, true, reads, req.maxBytes(), req.minBytes(), maxWait(req), committed(req));
    }
    return read(plan).thenCompose(results -> {
      long bytes = results.values().stream().mapToLong(r -> r.records == null ? 0 : r.bytes).sum();
      boolean anyError = results.values().stream().anyMatch(r -> r.error != Errors.NONE);
      if (plan.maxWaitMs() <= 0 || bytes >= plan.minBytes() || anyError || plan.reads().isEmpty()) {
        return CompletableFuture.completedFuture(respond(plan, results));
      }
      return park(plan);
    });
  }

  private static boolean committed(FetchRequest req) {
    return req.isolationLevel() == org.apache.kafka.common.IsolationLevel.READ_COMMITTED;
  }

  private long maxWait(FetchRequest req) {
    return Math.min(Math.max(0, req.maxWait()), maxWaitCapMs);
  }

  /** One partition's read outcome. */
  private static final class PartitionRead {
    Errors error = Errors.NONE;
    long highWatermark = -1;
    long lastStableOffset = -1;
    long logStartOffset = -1;
    /**
     * read_committed: aborted transactions overlapping the records returned ({producer id, first offset}); null otherwise
     * and when the log read failed; empty for a partition refused before any log is read (unknown topic or partition), the
     * default of Kafka's answer built outside its log read.
     */
    List<long[]> aborted;
    List<ByteBuffer> records;
    int bytes;
  }

  private CompletableFuture<LinkedHashMap<TopicIdPartition, PartitionRead>> read(Plan plan) {
    LinkedHashMap<TopicIdPartition, CompletableFuture<PartitionRead>> futures = new LinkedHashMap<>();
    plan.reads().forEach((tip, entry) -> futures.put(tip, readOne(plan, tip, entry)));
    return CompletableFuture.allOf(futures.values().toArray(CompletableFuture[]::new)).thenApply(x -> {
      LinkedHashMap<TopicIdPartition, PartitionRead> out = new LinkedHashMap<>();
      long budget = plan.maxBytes() <= 0 ? Integer.MAX_VALUE : plan.maxBytes();
      boolean first = true;
      for (Map.Entry<TopicIdPartition, CompletableFuture<PartitionRead>> e : futures.entrySet()) {
        PartitionRead r = e.getValue().join();
        if (r.records != null && !r.records.isEmpty()) {
          List<ByteBuffer> kept = new ArrayList<>();
          int size = 0;
          for (ByteBuffer b : r.records) {
            if (!(first && kept.isEmpty()) && size + b.remaining() > budget) {
              break;
            }
            kept.add(b);
            size += b.remaining();
          }
          r.records = kept;
          r.bytes = size;
          budget = Math.max(0, budget - size);
          if (!kept.isEmpty()) {
            first = false;
          }
        }
        out.put(e.getKey(), r);
      }
      return out;
    });
  }

  private CompletableFuture<PartitionRead> readOne(Plan plan, TopicIdPartition tip, FetchSessionCache.Entry entry) {
    PartitionRead r = new PartitionRead();
    if (tip.topic() == null) {
      r.error = Errors.UNKNOWN_TOPIC_ID;
      r.aborted = List.of();
      return CompletableFuture.completedFuture(r);
    }
    Optional<TopicInfo> topic = registry.topic(tip.topic());
    if (topic.isEmpty() || tip.partition() < 0 || tip.partition() >= topic.get().partitions().size()) {
      r.error = Errors.UNKNOWN_TOPIC_OR_PARTITION;
      r.aborted = List.of();
      return CompletableFuture.completedFuture(r);
    }
    Optional<PartitionLog> log = partitions.get(new TopicPartition(tip.topic(), tip.partition()));
    if (log.isEmpty()) {
      r.error = Errors.NOT_LEADER_OR_FOLLOWER;
      return CompletableFuture.completedFuture(r);
    }
    PartitionLog p = log.get();
    if (entry.currentLeaderEpoch >= 0 && entry.currentLeaderEpoch != p.leaderEpoch()) {
      r.error = entry.currentLeaderEpoch < p.leaderEpoch() ? Errors.FENCED_LEADER_EPOCH : Errors.UNKNOWN_LEADER_EPOCH;
      return CompletableFuture.completedFuture(r);
    }
    r.highWatermark = p.highWatermark();
    r.lastStableOffset = p.lastStableOffset();
    r.logStartOffset = p.logStartOffset();
    CompletableFuture<io.tidemark.broker.partition.ReadResult> read = plan.readCommitted()
        ? p.readCommitted(entry.fetchOffset, Math.max(1, entry.maxBytes))
        : p.read(entry.fetchOffset, Math.max(1, entry.maxBytes));
    return read.handle((res, e) -> {
      if (e != null) { // as Kafka's failed log read (OFFSET_OUT_OF_RANGE...): no watermarks, no log start offset
        r.error = ErrorMapping.toErrors(e);
        r.highWatermark = -1;
        r.lastStableOffset = -1;
        r.logStartOffset = -1;
        return r;
      }
      r.highWatermark = res.highWatermark();
      r.lastStableOffset = Math.min(r.lastStableOffset, r.highWatermark);
      r.logStartOffset = res.logStartOffset();
      r.records = res.batches();
      r.bytes = res.sizeBytes();
      if (plan.readCommitted()) {
        r.aborted = res.batches().isEmpty() ? List.of()
            : p.abortedTransactions(entry.fetchOffset, RecordBatches.header(res.batches().get(res.batches().size() - 1)).lastOffset() + 1);
      }
      return r;
    });
  }

  private CompletableFuture<ApiMessage> park(Plan plan) {
    CompletableFuture<ApiMessage> result = new CompletableFuture<>();
    List<TopicPartition> tps = plan.reads().keySet().stream().filter(t -> t.topic() != null).map(TopicIdPartition::topicPartition).toList();
    Waiter waiter = new Waiter(plan, result, tps);
    if (!delayed.park(waiter, tps, plan.maxWaitMs())) {
      return read(plan).thenApply(r -> respond(plan, r));
    }
    waiter.wake(false); // close the race with appends that landed before parking
    return result;
  }

  /** A parked fetch: re-reads when woken by an append, answers when MinBytes are there or time is up. */
  private final class Waiter implements DelayedFetches.Waiter {
    private final Plan plan;
    private final CompletableFuture<ApiMessage> result;
    private final List<TopicPartition> tps;
    private final AtomicBoolean reading = new AtomicBoolean();
    private final AtomicBoolean finished = new AtomicBoolean();
    private volatile boolean again;
    private volatile boolean expired;

    Waiter(Plan plan, CompletableFuture<ApiMessage> result, List<TopicPartition> tps) {
      this.plan = plan;
      this.result = result;
      this.tps = tps;
    }

    @Override
    public boolean completed() {
      return result.isDone();
    }

    @Override
    public void wake(boolean timeout) {
      if (result.isDone()) {
        return;
      }
      if (timeout) {
        expired = true;
      } else if (!hasNewData()) {
        return;
      }
      again = true;
      if (!reading.compareAndSet(false, true)) {
        return;
      }
      again = false;
      read(plan).whenComplete((results, e) -> {
        if (e != null) {
          finish(null, e);
        } else {
          long bytes = results.values().stream().mapToLong(r -> r.records == null ? 0 : r.bytes).sum();
          boolean anyError = results.values().stream().anyMatch(r -> r.error != Errors.NONE);
          if (expired || bytes >= plan.minBytes() || anyError) {
            finish(results, null);
          }
        }
        reading.set(false);
        if (again && !result.isDone()) {
          wake(expired);
        }
      });
    }

    private boolean hasNewData() {
      for (Map.Entry<TopicIdPartition, FetchSessionCache.Entry> e : plan.reads().entrySet()) {
        if (e.getKey().topic() == null) {
          continue;
        }
        Optional<PartitionLog> p = partitions.get(e.getKey().topicPartition());
        if (p.isEmpty() || p.get().highWatermark() > e.getValue().fetchOffset) {
          return true;
        }
      }
      return false;
    }

    private void finish(LinkedHashMap<TopicIdPartition, PartitionRead> results, Throwable error) {
      if (!finished.compareAndSet(false, true)) {
        return; // the timer and an append may both get here; the first one answers
      }
      delayed.unpark(this, tps);
      if (error != null) {
        result.completeExceptionally(error);
      } else {
        result.complete(respond(plan, results));
      }
    }
  }

  private FetchResponseData respond(Plan plan, LinkedHashMap<TopicIdPartition, PartitionRead> results) {
    short v = plan.version();
    FetchResponseData body = new FetchResponseData().setErrorCode(Errors.NONE.code()).setSessionId(plan.sessionId());
    Map<String, FetchResponseData.FetchableTopicResponse> topics = new LinkedHashMap<>();
    for (Map.Entry<TopicIdPartition, PartitionRead> e : results.entrySet()) {
      TopicIdPartition tip = e.getKey();
      PartitionRead r = e.getValue();
      if (plan.session() != null && !include(plan, tip, r)) {
        continue;
      }
      String key = v >= 13 ? tip.topicId().toString() : tip.topic();
      FetchResponseData.FetchableTopicResponse tr = topics.computeIfAbsent(key, k -> {
        FetchResponseData.FetchableTopicResponse t = new FetchResponseData.FetchableTopicResponse();
        if (v >= 13) {
          t.setTopicId(tip.topicId());
        } else {
          t.setTopic(tip.topic());
        }
        body.responses().add(t);
        return t;
      });
      FetchResponseData.PartitionData pd = new FetchResponseData.PartitionData()
          .setPartitionIndex(tip.partition())
          .setErrorCode(r.error.code())
          .setHighWatermark(r.highWatermark)
          .setLastStableOffset(r.lastStableOffset)
          .setLogStartOffset(r.logStartOffset)
          .setPreferredReadReplica(-1)
          .setAbortedTransactions(abortedTransactions(r))
          .setRecords(r.records == null ? RecordBatches.empty() : RecordBatches.concat(r.records));
      tr.partitions().add(pd);
      if (r.records != null && !r.records.isEmpty()) {
        meters.topic(tip.topic()).fetched(r.bytes, recordCount(r.records));
      }
    }
    return body;
  }

  /** Offset of the record count in a v2 record batch header. */
  private static final int RECORDS_COUNT_OFFSET = 57;

  /** The records in {@code batches}, read from their headers (a batch too short for a header counts none). */
  private static long recordCount(List<ByteBuffer> batches) {
    long n = 0;
    for (ByteBuffer b : batches) {
      if (b.remaining() >= RECORDS_COUNT_OFFSET + 4) {
        n += b.getInt(b.position() + RECORDS_COUNT_OFFSET);
      }
    }
    return n;
  }

  private static List<FetchResponseData.AbortedTransaction> abortedTransactions(PartitionRead r) {
    if (r.aborted == null) {
      return null;
    }
    List<FetchResponseData.AbortedTransaction> out = new ArrayList<>(r.aborted.size());
    for (long[] a : r.aborted) {
      out.add(new FetchResponseData.AbortedTransaction().setProducerId(a[0]).setFirstOffset(a[1]));
    }
    return out;
  }

  /** For sessions: remembers what is sent; in incremental responses, leaves out unchanged partitions. */
  private static boolean include(Plan plan, TopicIdPartition tip, PartitionRead r) {
    FetchSessionCache.Session s = plan.session();
    synchronized (s) {
      FetchSessionCache.Entry e = s.partitions.get(tip);
      if (e == null) {
        return !plan.incremental();
      }
      boolean changed = r.error != Errors.NONE || (r.records != null && !r.records.isEmpty())
          || r.highWatermark != e.sentHighWatermark || r.logStartOffset != e.sentLogStartOffset;
      e.sentHighWatermark = r.highWatermark;
      e.sentLogStartOffset = r.logStartOffset;
      return !plan.incremental() || changed;
    }
  }

  private static FetchResponseData topLevelError(Errors error) {
    return new FetchResponseData().setErrorCode(error.code()).setSessionId(0);
  }
}
