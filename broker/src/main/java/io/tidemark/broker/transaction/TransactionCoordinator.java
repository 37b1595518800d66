package io.tidemark.broker.transaction;

import io.tidemark.broker.partition.PartitionLog;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transaction coordinator of this node, Kafka's protocol: it owns the transactional ids kept
 * in the partitions of {@code __transaction_state} led here (found with FindCoordinator key type
 * TRANSACTION), hands out producer ids and epochs (InitProducerId, fencing the previous holder of
 * a transactional id, KIP-360 recovery), records the partitions of each transaction
 * (AddPartitionsToTxn, AddOffsetsToTxn), and ends it (EndTxn, or a timeout): it writes
 * PREPARE_COMMIT or PREPARE_ABORT, answers, writes the markers into every partition of the
 * transaction (led here or on other brokers, through {@link MarkerRouter}), then writes
 * COMPLETE_COMMIT or COMPLETE_ABORT. Every state is durable in {@link TransactionLog} before it
 * is current or answered ({@link TransactionState} lists the transitions); a transactional id with
 * a write in flight answers CONCURRENT_TRANSACTIONS, as Kafka's does.
 *
 * <p>Moves and restarts: when a partition of {@code __transaction_state} opens here its ids are
 * loaded from the log and transactions caught in PREPARE_* get their markers written again
 * (markers are idempotent); when it closes here its ids are dropped and any marker work for them
 * stops (the new coordinator redoes it). The coordinator epoch written into markers is the leader
 * epoch of that partition, so a stale coordinator's marker is refused by the data partition.
 *
 * <p>Threading: one owner thread ({@code txn-coordinator}) runs every state change, timer and
 * marker completion; callers get futures. Bounded: at most {@code maxTransactionalIds} ids, one
 * marker in flight per partition of a transaction, marker retries stop when the id leaves.
 */
public final class TransactionCoordinator implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(TransactionCoordinator.class);
  private static final long MAX_RETRY_BACKOFF_MS = 1000;

  /** Settings of the coordinator. */
  public record Settings(int maxTimeoutMs, int abortCheckIntervalMs, int maxTransactionalIds) {}

  /** Where markers go: the data partition's leader, wherever it is; completes with that partition's error. */
  @FunctionalInterface
  public interface MarkerRouter {
    CompletableFuture<Errors> write(TopicPartition tp, long producerId, short producerEpoch, int coordinatorEpoch, boolean commit);
  }

  /** What DescribeTransactions and ListTransactions show of one transactional id. */
  public record View(String transactionalId, String state, long producerId, short producerEpoch, int timeoutMs,
      long startTimestampMs, Set<TopicPartition> partitions) {}

  /** One transactional id held here (owner thread). */
  private static final class Txn {
    TransactionMetadata current;
    boolean writing;
    Set<TopicPartition> markersLeft = Set.of();

    Txn(TransactionMetadata current) {
      this.current = current;
    }
  }

  private final Settings settings;
  private final Time time;
  private final TransactionLog txnLog;
  private final LongSupplier newProducerId;
  private final MarkerRouter markers;
  private final Predicate<String> topicExists;
  private final ScheduledExecutorService owner = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "txn-coordinator");
    t.setDaemon(true);
    return t;
  });
  private final Map<String, Txn> txns = new java.util.HashMap<>();
  /** Loads of partitions open here, by partition (owner thread writes; the request gate reads). */
  private final Map<Integer, CompletableFuture<Void>> loads = new ConcurrentHashMap<>();
  /** The leader epoch of each partition of the log open here: the coordinator epoch of its markers. */
  private final Map<Integer, Integer> coordinatorEpochs = new ConcurrentHashMap<>();

  TransactionCoordinator(Settings settings, Time time, TransactionLog txnLog, LongSupplier newProducerId, MarkerRouter markers,
      Predicate<String> topicExists) {
    this.settings = settings;
    this.time = time;
    this.txnLog = txnLog;
    this.newProducerId = newProducerId;
    this.markers = markers;
    this.topicExists = topicExists;
    owner.scheduleWithFixedDelay(this::abortTimedOut, settings.abortCheckIntervalMs(), settings.abortCheckIntervalMs(),
        TimeUnit.MILLISECONDS);
  }

  private <T> CompletableFuture<T> call(Callable<CompletableFuture<T>> work) {
    CompletableFuture<T> result = new CompletableFuture<>();
    try {
      owner.execute(() -> {
        try {
          work.call().whenComplete((v, e) -> {
            if (e != null) {
              result.completeExceptionally(e);
            } else {
              result.complete(v);
            }
          });
        } catch (Exception e) {
          result.completeExceptionally(e);
        }
      });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      result.completeExceptionally(new TransactionException(Errors.COORDINATOR_NOT_AVAILABLE, "the coordinator is closed"));
    }
    return result;
  }

  private static <T> CompletableFuture<T> refuse(Errors error, String message) {
    return CompletableFuture.failedFuture(new TransactionException(error, message));
  }

  // ---------------------------------------------------------------- loading

  /** Loads every partition of the log open here (start-up); completes when all loads started so far are done. */
  CompletableFuture<Void> load() {
    return call(() -> {
      for (int p = 0; p < txnLog.partitionCount(); p++) {
        if (!loads.containsKey(p)) {
          txnLog.open(p).ifPresent(this::startLoad);
        }
      }
      return CompletableFuture.allOf(loads.values().toArray(CompletableFuture[]::new));
    });
  }

  void partitionOpened(int partition) {
    owner.execute(() -> txnLog.open(partition).ifPresent(this::startLoad));
  }

  void partitionClosed(int partition) {
    owner.execute(() -> {
      loads.remove(partition);
      coordinatorEpochs.remove(partition);
      unload(partition);
    });
  }

  /** Whether the ids of {@code partition} are being loaded here. */
  boolean loading(int partition) {
    CompletableFuture<Void> f = loads.get(partition);
    return f != null && !f.isDone();
  }

  private void startLoad(PartitionLog partitionLog) {
    int partition = partitionLog.topicPartition().partition();
    CompletableFuture<Void> load = new CompletableFuture<>();
    loads.put(partition, load);
    coordinatorEpochs.put(partition, partitionLog.leaderEpoch());
    unload(partition);
    attemptLoad(partitionLog, load, 1);
  }

  /**
   * One attempt to load {@code partitionLog}'s transactional ids for {@code load}. A failed attempt
   * applied nothing; the partition stays loading (its ids answer COORDINATOR_LOAD_IN_PROGRESS, never
   * as unknown, which would let a producer start over at a new id and strand an open transaction)
   * and is tried again after a backoff while it stays open here. On the owner thread.
   */
  private void attemptLoad(PartitionLog partitionLog, CompletableFuture<Void> load, int attempt) {
    int partition = partitionLog.topicPartition().partition();
    txnLog.load(partitionLog).whenComplete((loaded, e) -> owner.execute(() -> {
      if (loads.get(partition) != load) {
        return; // closed (or reopened) meanwhile
      }
      if (e != null) {
        long backoff = io.tidemark.broker.group.LoadRetry.schedule(owner, attempt, () -> loads.get(partition) == load,
            () -> attemptLoad(partitionLog, load, attempt + 1));
        log.warn("loading the transactions of {} failed (attempt {}); their requests answer COORDINATOR_LOAD_IN_PROGRESS, "
            + "trying again in {} ms: {}", partitionLog.topicPartition(), attempt, backoff, e.toString());
        return;
      }
      int resumed = 0;
      for (TransactionMetadata m : loaded.values()) {
        Txn t = new Txn(m);
        txns.put(m.transactionalId(), t);
        if (m.state() == TransactionState.PREPARE_COMMIT || m.state() == TransactionState.PREPARE_ABORT) {
          startMarkers(t);
          resumed++;
        }
      }
      log.info("loaded {} transactional ids of {} ({} transactions completing their markers)", loaded.size(),
          partitionLog.topicPartition(), resumed);
      load.complete(null);
    }));
  }

  private void unload(int partition) {
    txns.keySet().removeIf(id -> txnLog.partitionFor(id) == partition);
  }

  // ---------------------------------------------------------------- writes

  /** Writes {@code next} for {@code t}; it becomes current once durable, if {@code t} is still held here. */
  private CompletableFuture<TransactionMetadata> write(Txn t, TransactionMetadata next) {
    t.writing = true;
    return txnLog.append(next).handleAsync((v, e) -> {
      t.writing = false;
      if (txns.get(next.transactionalId()) != t) {
        throw new TransactionException(Errors.NOT_COORDINATOR, "transactional id " + next.transactionalId() + " moved away");
      }
      if (e != null) {
        Errors error = io.tidemark.broker.protocol.ErrorMapping.toErrors(e);
        throw new TransactionException(error == Errors.NOT_COORDINATOR ? error : Errors.COORDINATOR_NOT_AVAILABLE,
            "state of transactional id " + next.transactionalId() + " not written: " + io.tidemark.broker.protocol.ErrorMapping.message(e));
      }
      t.current = next;
      return next;
    }, owner);
  }

  // ---------------------------------------------------------------- InitProducerId

  /**
   * InitProducerId with a transactional id: a new producer id at epoch 0, or the id's producer id
   * with its epoch bumped (fencing the older producer); an open transaction is aborted first
   * (answered CONCURRENT_TRANSACTIONS, the client retries). With {@code expectedProducerId} ≥ 0
   * (KIP-360), the caller must hold the current or previous epoch of that producer id.
   */
  CompletableFuture<long[]> initProducerId(String id, int timeoutMs, long expectedProducerId, short expectedEpoch) {
    if (timeoutMs <= 0 || timeoutMs > settings.maxTimeoutMs()) {
      return refuse(Errors.INVALID_TRANSACTION_TIMEOUT, "transaction.timeout.ms " + timeoutMs + " is not in (0, "
          + settings.maxTimeoutMs() + "] (kafka.transaction.max.timeout.ms)");
    }
    return call(() -> {
      long now = time.milliseconds();
      Txn t = txns.get(id);
      if (t == null) {
        if (txns.size() >= settings.maxTransactionalIds()) {
          return refuse(Errors.COORDINATOR_NOT_AVAILABLE, "this coordinator holds " + txns.size()
              + " transactional ids (kafka.transaction.max.ids); no new one is accepted");
        }
        Txn created = new Txn(null);
        txns.put(id, created);
        TransactionMetadata first = new TransactionMetadata(id, newProducerId.getAsLong(), (short) 0, (short) -1, timeoutMs,
            TransactionState.EMPTY, Set.of(), -1, now);
        return write(created, first).handle((m, e) -> {
          if (e != null) {
            if (txns.get(id) == created && created.current == null) {
              txns.remove(id);
            }
            throw e instanceof java.util.concurrent.CompletionException ce ? ce : new java.util.concurrent.CompletionException(e);
          }
          return new long[] {m.producerId(), m.producerEpoch()};
        });
      }
      if (t.writing) {
        return refuse(Errors.CONCURRENT_TRANSACTIONS, "transactional id " + id + " is being updated");
      }
      TransactionMetadata m = t.current;
      boolean retryAfterRotation = expectedProducerId >= 0 && expectedProducerId == m.prevProducerId()
          && TransactionMetadata.epochExhausted(expectedEpoch) && expectedEpoch == m.lastProducerEpoch();
      if (expectedProducerId >= 0 && !retryAfterRotation && (expectedProducerId != m.producerId()
          || (expectedEpoch != m.producerEpoch() && expectedEpoch != m.lastProducerEpoch()))) {
        return refuse(Errors.PRODUCER_FENCED, "producer " + expectedProducerId + " epoch " + expectedEpoch + " is not the current "
            + "producer of " + id + " (" + m.producerId() + " epoch " + m.producerEpoch() + ")");
      }
      switch (m.state()) {
        case PREPARE_COMMIT, PREPARE_ABORT -> {
          return refuse(Errors.CONCURRENT_TRANSACTIONS, "transaction of " + id + " is completing (" + m.state().displayName() + ")");
        }
        case ONGOING -> {
          fenceAndAbort(t, "a new producer initialized transactional id " + id);
          return refuse(Errors.CONCURRENT_TRANSACTIONS, "the open transaction of " + id + " is being aborted");
        }
        default -> {
          TransactionMetadata next;
          if (m.producerEpoch() >= Short.MAX_VALUE - 1) {
            next = m.withProducer(newProducerId.getAsLong(), (short) 0, (short) -1, timeoutMs);
          } else {
            next = m.withProducer(m.producerId(), (short) (m.producerEpoch() + 1), m.producerEpoch(), timeoutMs);
          }
          return write(t, next.to(TransactionState.EMPTY, now).cleared())
              .thenApply(w -> new long[] {w.producerId(), w.producerEpoch()});
        }
      }
    });
  }

  /** The error when {@code producerId}/{@code epoch} are not the id's current producer, or null. */
  private static Errors producerCheck(Txn t, String id, long producerId, short epoch) {
    if (t == null || t.current == null || t.current.producerId() != producerId) {
      return Errors.INVALID_PRODUCER_ID_MAPPING;
    }
    if (t.current.producerEpoch() != epoch) {
      return Errors.PRODUCER_FENCED;
    }
    return t.writing ? Errors.CONCURRENT_TRANSACTIONS : null;
  }

  // ---------------------------------------------------------------- AddPartitionsToTxn / AddOffsetsToTxn

  /**
   * Adds partitions to the id's transaction (starting one if none is open). {@code v2}: added by a
   * partition leader for a transactions V2 client (Produce v12+, TxnOffsetCommit v5+), which marks
   * the transaction as V2 (its timeout or fencing then bumps the epoch twice, as Kafka's does).
   */
  CompletableFuture<Void> addPartitions(String id, long producerId, short epoch, Set<TopicPartition> partitions, boolean v2) {
    return call(() -> {
      Txn t = txns.get(id);
      Errors error = producerCheck(t, id, producerId, epoch);
      if (error != null) {
        return refuse(error, "producer " + producerId + " epoch " + epoch + " cannot add partitions to " + id);
      }
      TransactionMetadata m = t.current;
      if (m.state() == TransactionState.PREPARE_COMMIT || m.state() == TransactionState.PREPARE_ABORT) {
        return refuse(Errors.CONCURRENT_TRANSACTIONS, "the previous transaction of " + id + " is completing");
      }
      if (m.state() == TransactionState.ONGOING && m.partitions().containsAll(partitions)) {
        return CompletableFuture.completedFuture(null);
      }
      long now = time.milliseconds();
      Set<TopicPartition> all = new LinkedHashSet<>(m.partitions());
      all.addAll(partitions);
      long start = m.state() == TransactionState.ONGOING ? m.startTimestampMs() : now;
      return write(t, m.withPartitions(all, start).withVersion(v2, m.prevProducerId(), -1).to(TransactionState.ONGOING, now))
          .thenApply(w -> null);
    });
  }

  /**
   * Whether each partition is in the id's open transaction of that producer (KIP-890's
   * verification, asked by a partition leader before the first transactional write of a producer
   * there): NONE when it is, TRANSACTION_ABORTABLE when not (Kafka 4.x's answer, which the leader
   * turns into INVALID_TXN_STATE for clients too old to know it); the whole call fails with
   * INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED or CONCURRENT_TRANSACTIONS as Kafka's does.
   */
  CompletableFuture<Map<TopicPartition, Errors>> verifyPartitions(String id, long producerId, short epoch,
      Set<TopicPartition> partitions) {
    return call(() -> {
      Txn t = txns.get(id);
      Errors error = producerCheck(t, id, producerId, epoch);
      if (error == Errors.CONCURRENT_TRANSACTIONS) {
        error = null; // a write in flight does not change which partitions the open transaction has
      }
      if (error != null) {
        return refuse(error, "producer " + producerId + " epoch " + epoch + " has no transaction of " + id + " to verify");
      }
      TransactionMetadata m = t.current;
      if (m.state() == TransactionState.PREPARE_COMMIT || m.state() == TransactionState.PREPARE_ABORT) {
        return refuse(Errors.CONCURRENT_TRANSACTIONS, "the transaction of " + id + " is completing");
      }
      Map<TopicPartition, Errors> out = new java.util.LinkedHashMap<>();
      for (TopicPartition tp : partitions) {
        out.put(tp, m.state() == TransactionState.ONGOING && m.partitions().contains(tp) ? Errors.NONE
            : Errors.TRANSACTION_ABORTABLE);
      }
      return CompletableFuture.completedFuture(out);
    });
  }

  // ---------------------------------------------------------------- EndTxn

  /**
   * Ends the id's open transaction: answered once PREPARE_* is durable; markers follow. Completes
   * with the producer id and epoch the client continues with: -1/-1 for transactions V1
   * ({@code v2} false: EndTxn v0–4); for V2 (EndTxn v5+) the epoch bumped by one, or a new producer id
   * at epoch 0 once the epochs of the old one are exhausted (see {@link #endTransactionV2}).
   */
  CompletableFuture<long[]> endTransaction(String id, long producerId, short epoch, boolean commit, boolean v2) {
    if (v2) {
      return endTransactionV2(id, producerId, epoch, commit);
    }
    return call(() -> {
      Txn t = txns.get(id);
      Errors error = producerCheck(t, id, producerId, epoch);
      if (error != null) {
        return refuse(error, "producer " + producerId + " epoch " + epoch + " cannot end the transaction of " + id);
      }
      TransactionMetadata m = t.current;
      TransactionState prepare = commit ? TransactionState.PREPARE_COMMIT : TransactionState.PREPARE_ABORT;
      TransactionState complete = commit ? TransactionState.COMPLETE_COMMIT : TransactionState.COMPLETE_ABORT;
      if (m.state() == TransactionState.ONGOING) {
        return write(t, m.withVersion(false, m.prevProducerId(), -1).to(prepare, time.milliseconds())).thenApply(w -> {
          startMarkers(t);
          return NO_PRODUCER;
        });
      }
      if (m.state() == prepare) {
        return refuse(Errors.CONCURRENT_TRANSACTIONS, "the transaction of " + id + " is completing");
      }
      if (m.state() == complete) {
        return CompletableFuture.completedFuture(NO_PRODUCER); // a retried EndTxn
      }
      return refuse(Errors.INVALID_TXN_STATE, "transaction of " + id + " is " + m.state().displayName() + "; cannot "
          + (commit ? "commit" : "abort"));
    });
  }

  private static final long[] NO_PRODUCER = {-1, -1};

  /**
   * EndTxn with transactions V2 (KIP-890 part 2), Kafka's rules: every end bumps the epoch (the
   * markers carry the bumped epoch, so a late write of the ended transaction is refused by the
   * partitions); an epoch reaching {@code Short.MAX_VALUE - 1} is the last of its producer id, and
   * the completion moves the id to a new producer id at epoch 0. A retry is recognised by its epoch
   * (one below the current, or the last epoch of the previous producer id after a rotation) and
   * answered with the current producer: NONE once complete, CONCURRENT_TRANSACTIONS while
   * completing. An abort with no transaction open is allowed (it only bumps the epoch).
   *
   * <pre>
   *                 abort: retry | current   commit: retry | current
   * Empty                 FENCED | bump              FENCED | INVALID_TXN_STATE
   * CompleteAbort         NONE   | bump              INVALID_TXN_STATE
   * CompleteCommit        INVALID_TXN_STATE | bump   NONE   | INVALID_TXN_STATE
   * </pre>
   */
  private CompletableFuture<long[]> endTransactionV2(String id, long producerId, short epoch, boolean commit) {
    return call(() -> {
      Txn t = txns.get(id);
      if (t == null || t.current == null) {
        return refuse(Errors.INVALID_PRODUCER_ID_MAPPING, "no producer for transactional id " + id);
      }
      TransactionMetadata m = t.current;
      boolean retryOnOverflow = m.prevProducerId() == producerId && epoch == Short.MAX_VALUE - 1 && m.producerEpoch() == 0;
      boolean retryOnBump = m.producerEpoch() == epoch + 1;
      if (m.producerId() != producerId && !retryOnOverflow) {
        return refuse(Errors.INVALID_PRODUCER_ID_MAPPING, "producer " + producerId + " is not the producer of " + id);
      }
      boolean validEpoch = switch (m.state()) {
        case ONGOING, EMPTY -> epoch == m.producerEpoch();
        case PREPARE_COMMIT, PREPARE_ABORT -> retryOnBump;
        case COMPLETE_COMMIT, COMPLETE_ABORT -> retryOnBump || retryOnOverflow || epoch == m.producerEpoch();
      };
      if (!validEpoch) {
        return refuse(Errors.PRODUCER_FENCED, "producer " + producerId + " epoch " + epoch + " is not the current producer of "
            + id + " (" + m.producerId() + " epoch " + m.producerEpoch() + ")");
      }
      if (t.writing) {
        return refuse(Errors.CONCURRENT_TRANSACTIONS, "transactional id " + id + " is being updated");
      }
      boolean retry = retryOnBump || retryOnOverflow;
      long[] current = {m.producerId(), m.producerEpoch()};
      String invalid = "transaction of " + id + " is " + m.state().displayName() + "; cannot " + (commit ? "commit" : "abort")
          + (retry ? " (a retry)" : "");
      return switch (m.state()) {
        case ONGOING -> prepareV2(t, commit ? TransactionState.PREPARE_COMMIT : TransactionState.PREPARE_ABORT, false);
        case COMPLETE_COMMIT -> commit ? (retry ? CompletableFuture.completedFuture(current) : refuse(Errors.INVALID_TXN_STATE, invalid))
            : (retry ? refuse(Errors.INVALID_TXN_STATE, invalid) : prepareV2(t, TransactionState.PREPARE_ABORT, true));
        case COMPLETE_ABORT -> !commit ? (retry ? CompletableFuture.completedFuture(current)
            : prepareV2(t, TransactionState.PREPARE_ABORT, true)) : refuse(Errors.INVALID_TXN_STATE, invalid);
        case PREPARE_COMMIT -> commit ? refuse(Errors.CONCURRENT_TRANSACTIONS, "the transaction of " + id + " is completing")
            : refuse(Errors.INVALID_TXN_STATE, invalid);
        case PREPARE_ABORT -> !commit ? refuse(Errors.CONCURRENT_TRANSACTIONS, "the transaction of " + id + " is completing")
            : refuse(Errors.INVALID_TXN_STATE, invalid);
        case EMPTY -> !commit ? prepareV2(t, TransactionState.PREPARE_ABORT, true) : refuse(Errors.INVALID_TXN_STATE, invalid);
      };
    });
  }

  /** Writes PREPARE_* with the epoch bumped (and a next producer id when the epochs run out); answers the producer to continue with. */
  private CompletableFuture<long[]> prepareV2(Txn t, TransactionState prepare, boolean nothingAdded) {
    TransactionMetadata m = t.current;
    long now = time.milliseconds();
    long nextProducerId = TransactionMetadata.epochExhausted(m.producerEpoch()) ? newProducerId.getAsLong() : -1;
    // Kafka lets an abort through at Short.MAX_VALUE (a broken state) rather than overflow
    short bumped = m.producerEpoch() == Short.MAX_VALUE ? m.producerEpoch() : (short) (m.producerEpoch() + 1);
    TransactionMetadata next = m.withProducer(m.producerId(), bumped, m.producerEpoch(), m.timeoutMs())
        .withPartitions(m.partitions(), nothingAdded ? now : m.startTimestampMs())
        .withVersion(true, m.prevProducerId(), nextProducerId).to(prepare, now);
    return write(t, next).thenApply(w -> {
      startMarkers(t);
      return nextProducerId >= 0 ? new long[] {nextProducerId, 0} : new long[] {w.producerId(), w.producerEpoch()};
    });
  }

  // ---------------------------------------------------------------- timeouts and fencing

  private void abortTimedOut() {
    long now = time.milliseconds();
    for (Txn t : new ArrayList<>(txns.values())) {
      TransactionMetadata m = t.current;
      if (m != null && !t.writing && m.state() == TransactionState.ONGOING && m.startTimestampMs() + m.timeoutMs() < now) {
        fenceAndAbort(t, "transaction of " + m.transactionalId() + " timed out after " + m.timeoutMs() + " ms");
      }
    }
  }

  /** Aborts the open transaction with the producer epoch bumped, so the producer that held it is fenced. */
  private void fenceAndAbort(Txn t, String reason) {
    TransactionMetadata m = t.current;
    short epoch = m.producerEpoch() < Short.MAX_VALUE - 1 ? (short) (m.producerEpoch() + 1) : m.producerEpoch();
    TransactionMetadata next = m.withProducer(m.producerId(), epoch, m.producerEpoch(), m.timeoutMs());
    if (m.v2()) {
      // V2, as Kafka: the fencing epoch, then the abort's own bump; the fenced producer cannot recover with its old epoch
      short aborted = epoch == Short.MAX_VALUE ? epoch : (short) (epoch + 1);
      next = m.withProducer(m.producerId(), aborted, epoch, m.timeoutMs());
    }
    next = next.to(TransactionState.PREPARE_ABORT, time.milliseconds());
    log.info("aborting: {}", reason);
    write(t, next).whenComplete((w, e) -> {
      if (e != null) {
        log.warn("could not abort the transaction of {} ({}); trying again later", m.transactionalId(), e.getMessage());
      } else {
        startMarkers(t);
      }
    });
  }

  // ---------------------------------------------------------------- markers

  private void startMarkers(Txn t) {
    TransactionMetadata m = t.current;
    t.markersLeft = new HashSet<>(m.partitions());
    if (t.markersLeft.isEmpty()) {
      complete(t, m, 0);
      return;
    }
    for (TopicPartition tp : m.partitions()) {
      sendMarker(t, m, tp, 0);
    }
  }

  private void sendMarker(Txn t, TransactionMetadata m, TopicPartition tp, int attempt) {
    if (txns.get(m.transactionalId()) != t || t.current != m) {
      return; // moved away, or already past this state
    }
    Integer coordinatorEpoch = coordinatorEpochs.get(txnLog.partitionFor(m.transactionalId()));
    if (coordinatorEpoch == null) {
      return;
    }
    boolean commit = m.state() == TransactionState.PREPARE_COMMIT;
    CompletableFuture<Errors> sent;
    try {
      sent = markers.write(tp, m.producerId(), m.producerEpoch(), coordinatorEpoch, commit);
    } catch (RuntimeException e) {
      sent = CompletableFuture.failedFuture(e);
    }
    sent.whenCompleteAsync((error, e) -> {
      if (txns.get(m.transactionalId()) != t || t.current != m) {
        return;
      }
      Errors outcome = e != null ? io.tidemark.broker.protocol.ErrorMapping.toErrors(e) : error;
      boolean done = switch (outcome) {
        case NONE -> true;
        // the partition already saw a newer producer epoch or coordinator: this transaction's marker is moot there
        case INVALID_PRODUCER_EPOCH, PRODUCER_FENCED, TRANSACTION_COORDINATOR_FENCED -> true;
        case UNKNOWN_TOPIC_OR_PARTITION -> !topicExists.test(tp.topic()); // deleted topic: nothing to mark
        default -> false;
      };
      if (!done) {
        long backoff = Math.min(MAX_RETRY_BACKOFF_MS, 50L << Math.min(attempt, 5));
        if (attempt % 20 == 19) {
          log.warn("marker for {} of transaction {} still not written after {} attempts: {}", tp, m.transactionalId(),
              attempt + 1, outcome);
        }
        owner.schedule(() -> sendMarker(t, m, tp, attempt + 1), backoff, TimeUnit.MILLISECONDS);
        return;
      }
      t.markersLeft.remove(tp);
      if (t.markersLeft.isEmpty()) {
        complete(t, m, 0);
      }
    }, owner);
  }

  private void complete(Txn t, TransactionMetadata m, int attempt) {
    if (txns.get(m.transactionalId()) != t || t.current != m) {
      return;
    }
    TransactionState done = m.state() == TransactionState.PREPARE_COMMIT ? TransactionState.COMPLETE_COMMIT
        : TransactionState.COMPLETE_ABORT;
    TransactionMetadata completed = m.to(done, time.milliseconds()).cleared();
    if (m.v2() && m.nextProducerId() >= 0) { // the bump exhausted the epochs: the id continues with the new producer id
      completed = completed.withProducer(m.nextProducerId(), (short) 0, m.lastProducerEpoch(), m.timeoutMs())
          .withVersion(true, m.producerId(), -1);
    }
    write(t, completed).whenComplete((w, e) -> {
      if (e != null && txns.get(m.transactionalId()) == t) {
        owner.schedule(() -> complete(t, m, attempt + 1), Math.min(MAX_RETRY_BACKOFF_MS, 50L << Math.min(attempt, 5)),
            TimeUnit.MILLISECONDS);
      }
    });
  }

  // ---------------------------------------------------------------- views

  /** The ids asked, as held here (absent ids are missing from the map). */
  CompletableFuture<Map<String, View>> describe(List<String> ids) {
    return call(() -> {
      Map<String, View> out = new java.util.LinkedHashMap<>();
      for (String id : ids) {
        Txn t = txns.get(id);
        if (t != null && t.current != null) {
          out.put(id, view(t.current));
        }
      }
      return CompletableFuture.completedFuture(out);
    });
  }

  /** Every id held here. */
  CompletableFuture<List<View>> list() {
    return call(() -> CompletableFuture.completedFuture(txns.values().stream().filter(t -> t.current != null)
        .map(t -> view(t.current)).toList()));
  }

  private static View view(TransactionMetadata m) {
    return new View(m.transactionalId(), m.state().displayName(), m.producerId(), m.producerEpoch(), m.timeoutMs(),
        m.startTimestampMs(), m.partitions());
  }

  @Override
  public void close() {
    owner.shutdownNow();
  }
}
