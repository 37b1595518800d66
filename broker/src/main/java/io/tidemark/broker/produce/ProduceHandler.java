package io.tidemark.broker.produce;

import io.tidemark.broker.BrokerConfig;
import io.tidemark.broker.group.GroupApis;
import io.tidemark.broker.metrics.BrokerMeters;
import io.tidemark.broker.partition.AppendResult;
import io.tidemark.broker.partition.LogSettings;
import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.partition.Partitions;
import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.protocol.CloseConnectionException;
import io.tidemark.broker.protocol.ErrorMapping;
import io.tidemark.broker.protocol.RequestContext;
import io.tidemark.broker.record.ProducedBatch;
import io.tidemark.broker.record.RecordBatches;
import io.tidemark.broker.record.Recompression;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.broker.topic.TopicRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ProduceRequest;

/**
 * Produce (v3–13, advertised from v0 for librdkafka): per partition, validates the batch (CRC,
 * framing, size, codec), recompresses it when the topic's {@code compression.type} names another
 * codec ({@link Recompression}) and appends it to the partition, answering with its base offset once
 * durable. acks=1 and acks=all both wait for the write-ahead log (there are no follower replicas
 * to wait for: durability comes from the WAL and object storage). acks=0 gets no response; if
 * any partition failed the connection is closed instead, which is how such a client learns.
 *
 * <p>Backpressure: while storage is full (object storage unreachable, WAL or log cache full) appends
 * wait, so requests stay in flight, the connection reaches its in-flight bound and the broker stops
 * reading the socket. A partition still waiting when the request's own {@code timeoutMs} has passed
 * is answered REQUEST_TIMED_OUT (retriable; the write itself may still complete, and an idempotent
 * producer's retry is then answered with the original offset), as Kafka answers from its purgatory.
 * An append storage refuses at once is answered REQUEST_TIMED_OUT at once (nothing was written).
 * The deadlines run on one timer wheel owned here; {@link #close()} stops it.
 *
 * <p>Transactions (KIP-890): the first transactional batch of a producer in a partition (no
 * transaction of that producer and epoch open there) is appended only once the transaction's
 * coordinator confirmed the partition is in the transaction (Produce v3–11: transactions V1
 * clients, which added it themselves) or added it (v12+: transactions V2 clients, which do not); the
 * partition's verification guard voids a confirmation overtaken by the producer's marker. A
 * producer's batches are appended to a partition in the order they arrived even when their
 * verifications finish out of order ({@link PartitionLog#appendInOrder}). Refusals
 * answer as Kafka's: TRANSACTION_ABORTABLE (not in the transaction; INVALID_TXN_STATE before v11),
 * INVALID_PRODUCER_EPOCH (fenced),
 * NOT_ENOUGH_REPLICAS (the coordinator could not be asked: retriable for every client).
 *
 * <p>Copies and thread hand-offs of a record's bytes from the socket to the WAL write, as built
 * (pinned by {@code ProducePathTest} in stream/ and broker/): the connection copies each request
 * frame once from Netty's buffer to the heap (copy 1; no request holds pooled memory), the batch is
 * validated and given its offsets in place in that frame, {@code PartitionLog} hands it to its
 * stream with {@code appendOwned} (no copy), the engine keeps it as it is when it fills its frame
 * but for at most an eighth (a request carrying one partition's batch) and sends it to the WAL with
 * its 37-byte stream header as two parts, and the block WAL copies both once into its aligned
 * write buffer (copy 2). So two copies, where the target is at most two; a request
 * carrying batches of several partitions adds the engine's own copy of each (three), so that a
 * cached batch never keeps a whole multi-partition frame alive. Thread hand-offs from the read
 * to the response: six (Netty event loop → engine loop → WAL writer → WAL syncer → engine loop →
 * engine ack thread → Netty event loop, which writes the response); the target of three is not
 * met yet (it needs the loop to hand the write to the WAL and take acknowledgements back without
 * the extra hops).
 *
 * <p>Lease: while {@link io.tidemark.broker.cluster.ClusterMetadata#leaseLost} names a reason (no
 * successful controller heartbeat within the lease, or this broker failed over), a partition is
 * answered NOT_LEADER_OR_FOLLOWER: before the append (nothing is written) and when a durable append
 * completes (the write stands, but is not acknowledged by a broker that may be a paused zombie whose
 * partitions moved).
 */
public final class ProduceHandler implements ApiHandler, AutoCloseable {

  private final TopicRegistry registry;
  private final Partitions partitions;
  /** Longest wait of a batch for its partition that is opening here ({@code kafka.produce.opening.wait.ms}; 0: none). */
  private volatile long openingWaitMs = BrokerConfig.PRODUCE_OPENING_WAIT_MS.defaultValue();
  private final HashedWheelTimer deadlines = new HashedWheelTimer(r -> {
    Thread t = new Thread(r, "produce-deadlines");
    t.setDaemon(true);
    return t;
  }, 10, TimeUnit.MILLISECONDS);

  private final BrokerMeters meters;
  /** The transaction coordinators' side of KIP-890 (null: transactional writes are not verified). */
  private volatile TransactionVerifier verifier;
  /** Produce requests waiting for their appends (the produce purgatory's size). */
  private final AtomicInteger waiting = new AtomicInteger();

  public ProduceHandler(TopicRegistry registry, Partitions partitions) {
    this(registry, partitions, BrokerMeters.noop());
  }

  /** Counts what it appends per topic into {@code meters}. */
  public ProduceHandler(TopicRegistry registry, Partitions partitions, BrokerMeters meters) {
    this.registry = registry;
    this.partitions = partitions;
    this.meters = meters;
  }

  /**
   * Asks a transaction's coordinator whether partitions are in a producer's open transaction
   * ({@code add} false) or adds them ({@code add} true); completes with the partitions that failed.
   */
  @FunctionalInterface
  public interface TransactionVerifier {
    CompletableFuture<java.util.Map<TopicPartition, Errors>> addOrVerify(String transactionalId, long producerId, short producerEpoch,
        java.util.Set<TopicPartition> partitions, boolean add);
  }

  /** From now on the first transactional batch of a producer in a partition is verified (v3–11) or added (v12+) with {@code v}. */
  public void verifyTransactionsWith(TransactionVerifier v) {
    this.verifier = v;
  }

  /** Sets the longest wait of a batch for its partition that is opening here (0: answer NOT_LEADER_OR_FOLLOWER at once). */
  public void openingWait(long ms) {
    this.openingWaitMs = ms;
  }

  /** Produce requests waiting for their appends to be durable (or for their timeout) now. */
  public int waiting() {
    return waiting.get();
  }

  @Override
  public void close() {
    deadlines.stop();
  }

  /**
   * The client id prefix of the broker's own services (table topics on other brokers append to their
   * control topic), which may produce to internal topics; Kafka's own admin client id plays this role.
   */
  public static final String INTERNAL_CLIENT_PREFIX = "__tidemark_internal";

  /**
   * Validates one partition's batch and starts its append (behind the producer's batches waiting for
   * their verification; a transactional one's first batch waits for {@code verified}); records the
   * batch's size in {@code sizes[0]}.
   */
  private CompletableFuture<AppendResult> startAppend(TopicPartition tp, ProduceRequestData.PartitionProduceData pd, short v,
      TransactionVerifier txnVerifier, java.util.Map<TopicPartition, PartitionLog> toVerify, long[] txnProducer,
      CompletableFuture<java.util.Map<TopicPartition, Object>> verified, long[] sizes) {
    try {
      PartitionLog log = partitions.require(tp);
      LogSettings settings = log.settings();
      ProducedBatch batch = RecordBatches.validateProduced(pd.records(), v, settings.maxMessageBytes(),
          settings.compacted(), settings.maxDecompressedRecordBytes());
      sizes[0] = ((long) batch.sizeBytes() << 32) | batch.recordCount();
      ProducedBatch stored = Recompression.toTopicCodec(batch, settings.compression(), settings.maxMessageBytes());
      Object guard = txnVerifier != null && batch.transactional() ? log.startVerification(batch.producerId(), batch.producerEpoch())
          : PartitionLog.UNVERIFIED;
      if (guard == PartitionLog.UNVERIFIED || guard == null) {
        // in order behind the producer's batches still waiting here for their verification
        return batch.idempotent() ? log.appendInOrder(batch.producerId(), CompletableFuture.completedFuture(guard),
            g -> log.append(stored, g)) : log.append(stored, guard);
      } else if (txnProducer[0] >= 0 && (txnProducer[0] != batch.producerId() || txnProducer[1] != batch.producerEpoch())) {
        return CompletableFuture.failedFuture(Errors.INVALID_PRODUCER_ID_MAPPING.exception(
            "transactional records of one request must come from one producer"));
      } else {
        txnProducer[0] = batch.producerId();
        txnProducer[1] = batch.producerEpoch();
        toVerify.put(tp, log);
        return log.appendInOrder(batch.producerId(), verified.thenApply(outcomes -> outcomes.get(tp)),
            outcome -> outcome instanceof Errors refused ? CompletableFuture.failedFuture(verificationError(refused, v))
                : log.append(stored, outcome, v >= 12));
      }
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** The group coordinator's log stays the broker's alone; other internal topics take their services' writes. */
  private static boolean internalWriter(RequestContext context, TopicInfo topic) {
    String clientId = context.header().clientId();
    return clientId != null && clientId.startsWith(INTERNAL_CLIENT_PREFIX) && !topic.name().equals(GroupApis.offsetsTopic());
  }

  @Override
  public CompletableFuture<ApiMessage> handle(RequestContext context, AbstractRequest request) {
    ProduceRequest req = (ProduceRequest) request;
    short v = req.version();
    short acks = req.acks();
    ProduceResponseData body = new ProduceResponseData();
    List<CompletableFuture<?>> waits = new ArrayList<>();
    String transactionalId = req.transactionalId();
    TransactionVerifier txnVerifier = transactionalId == null ? null : verifier;
    // partitions whose first transactional batch waits for the coordinator, and the one producer a request may carry
    java.util.Map<TopicPartition, PartitionLog> toVerify = new java.util.LinkedHashMap<>();
    long[] txnProducer = {-1, -1};
    // per partition verified: its verification guard, or the Errors its coordinator answered
    CompletableFuture<java.util.Map<TopicPartition, Object>> verified = new CompletableFuture<>();
    for (ProduceRequestData.TopicProduceData topicData : req.data().topicData()) {
      Optional<TopicInfo> topic = v >= 13 ? registry.topic(topicData.topicId()) : registry.topic(topicData.name());
      ProduceResponseData.TopicProduceResponse tr = new ProduceResponseData.TopicProduceResponse();
      if (v >= 13) {
        tr.setTopicId(topicData.topicId());
      } else {
        tr.setName(topicData.name());
      }
      body.responses().add(tr);
      BrokerMeters.TopicMeters topicMeters = topic.isPresent() ? meters.topic(topic.get().name()) : null;
      for (ProduceRequestData.PartitionProduceData pd : topicData.partitionData()) {
        ProduceResponseData.PartitionProduceResponse pr = new ProduceResponseData.PartitionProduceResponse()
            .setIndex(pd.index()).setBaseOffset(-1).setLogAppendTimeMs(-1).setLogStartOffset(-1);
        tr.partitionResponses().add(pr);
        if (acks != 0 && acks != 1 && acks != -1) {
          setError(pr, Errors.INVALID_REQUIRED_ACKS, "acks must be 0, 1 or -1, was " + acks, v);
          continue;
        }
        if (topic.isEmpty()) {
          setError(pr, v >= 13 ? Errors.UNKNOWN_TOPIC_ID : Errors.UNKNOWN_TOPIC_OR_PARTITION, "unknown topic", v);
          continue;
        }
        if (topic.get().internal() && !internalWriter(context, topic.get())) {
          setError(pr, Errors.INVALID_TOPIC_EXCEPTION, "cannot produce to internal topic " + topic.get().name(), v);
          continue;
        }
        if (pd.index() < 0 || pd.index() >= topic.get().partitions().size()) {
          setError(pr, Errors.UNKNOWN_TOPIC_OR_PARTITION, "partition " + pd.index() + " does not exist", v);
          continue;
        }
        TopicPartition tp = new TopicPartition(topic.get().name(), pd.index());
        String leaseLost = registry.metadata().leaseLost();
        if (leaseLost != null) {
          setError(pr, Errors.NOT_LEADER_OR_FOLLOWER, leaseLost, v); // nothing is written
          continue;
        }
        long[] sizes = {0}; // bytes (high half) and records (low half) of the batch as received, for the meters
        // while the partition opens here (a restart, a move or failover to this broker) a batch waits for it a little
        // rather than send the client away for a metadata refresh; in arrival order, also when the open just ended;
        // not a transactional batch (verified below, with the request's other partitions)
        CompletableFuture<Void> opening = transactionalId == null && openingWaitMs > 0 ? partitions.whenOpened(tp) : null;
        CompletableFuture<AppendResult> append;
        if (opening == null) {
          append = startAppend(tp, pd, v, txnVerifier, toVerify, txnProducer, verified, sizes);
        } else {
          append = opening.completeOnTimeout(null, openingWaitMs, TimeUnit.MILLISECONDS)
              .thenCompose(x -> startAppend(tp, pd, v, null, toVerify, txnProducer, verified, sizes));
        }
        waits.add(bounded(append, req.timeout(), acks).handle((r, e) -> {
          String lostSince = e == null ? registry.metadata().leaseLost() : null;
          if (e != null) {
            setError(pr, ErrorMapping.toErrors(e), ErrorMapping.message(e), v);
          } else if (lostSince != null) {
            // durable here, but this broker may have been failed over meanwhile: the client retries at the leader
            // (an idempotent producer's retry is answered with the original offset if the write survived)
            setError(pr, Errors.NOT_LEADER_OR_FOLLOWER, lostSince, v);
          } else {
            pr.setBaseOffset(r.baseOffset()).setLogAppendTimeMs(r.logAppendTimeMs()).setLogStartOffset(r.logStartOffset());
          }
          if (e == null) { // appended (durable), whether or not acknowledged
            topicMeters.produced((int) (sizes[0] >>> 32), (int) sizes[0]);
          }
          return null;
        }));
      }
    }
    if (toVerify.isEmpty()) {
      verified.complete(java.util.Map.of());
    } else {
      verify(txnVerifier, transactionalId, txnProducer[0], (short) txnProducer[1], toVerify, v >= 12,
          System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ADD_RETRY_MAX_MS)).whenComplete((outcomes, e) -> verified.complete(outcomes));
    }
    CompletableFuture<Void> all = CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new));
    if (!all.isDone()) {
      waiting.incrementAndGet();
      all.whenComplete((x, e) -> waiting.decrementAndGet());
    }
    return all.thenApply(x -> {
      if (acks == 0) {
        for (ProduceResponseData.TopicProduceResponse tr : body.responses()) {
          for (ProduceResponseData.PartitionProduceResponse pr : tr.partitionResponses()) {
            if (pr.errorCode() != Errors.NONE.code()) {
              throw new CloseConnectionException("acks=0 produce failed: " + Errors.forCode(pr.errorCode()) + " " + pr.errorMessage());
            }
          }
        }
        return null;
      }
      return body;
    });
  }

  /** How long a v12+ produce retries CONCURRENT_TRANSACTIONS when adding partitions (Kafka's add.partitions.to.txn.retry.backoff.max.ms). */
  static final long ADD_RETRY_MAX_MS = 100;
  private static final long ADD_RETRY_BACKOFF_MS = 20;

  /**
   * One attempt at verifying (or adding) {@code logs}' partitions: fresh guards first (a partition
   * whose producer has a transaction open there by now needs none), then the coordinator; when it
   * answers CONCURRENT_TRANSACTIONS to an add (the previous transaction is still completing) the
   * whole attempt is repeated after {@value #ADD_RETRY_BACKOFF_MS} ms until {@code deadlineNanos}, so
   * that a guard voided by that transaction's marker is never the one used. Completes with each
   * partition's guard or refusal; never fails.
   */
  private CompletableFuture<java.util.Map<TopicPartition, Object>> verify(TransactionVerifier txnVerifier, String transactionalId,
      long producerId, short epoch, java.util.Map<TopicPartition, PartitionLog> logs, boolean add, long deadlineNanos) {
    java.util.Map<TopicPartition, Object> outcomes = new java.util.HashMap<>();
    java.util.Set<TopicPartition> ask = new java.util.LinkedHashSet<>();
    logs.forEach((tp, log) -> {
      Object guard = log.startVerification(producerId, epoch);
      outcomes.put(tp, guard);
      if (guard != null) {
        ask.add(tp);
      }
    });
    if (ask.isEmpty()) {
      return CompletableFuture.completedFuture(outcomes);
    }
    CompletableFuture<java.util.Map<TopicPartition, Errors>> asked;
    try {
      asked = txnVerifier.addOrVerify(transactionalId, producerId, epoch, ask, add);
    } catch (RuntimeException e) {
      asked = CompletableFuture.failedFuture(e);
    }
    return asked.handle((failed, e) -> {
      java.util.Map<TopicPartition, Errors> refused = new java.util.HashMap<>();
      if (e != null) {
        ask.forEach(tp -> refused.put(tp, Errors.NETWORK_EXCEPTION));
      } else {
        refused.putAll(failed);
      }
      return refused;
    }).thenCompose(refused -> {
      if (add && refused.containsValue(Errors.CONCURRENT_TRANSACTIONS) && System.nanoTime() < deadlineNanos) {
        return CompletableFuture.supplyAsync(() -> null, CompletableFuture.delayedExecutor(ADD_RETRY_BACKOFF_MS, TimeUnit.MILLISECONDS))
            .thenCompose(x -> verify(txnVerifier, transactionalId, producerId, epoch, logs, add, deadlineNanos));
      }
      outcomes.putAll(refused);
      return CompletableFuture.completedFuture(outcomes);
    });
  }

  /** The coordinator's refusal of a partition as Kafka's produce answers it (ReplicaManager's mapping). */
  private static RuntimeException verificationError(Errors refused, short version) {
    return switch (refused) {
      case INVALID_TXN_STATE -> refused.exception("Partition was not added to the transaction");
      // not in the transaction: clients from Produce v11 on know the abortable error (KIP-890), older ones get INVALID_TXN_STATE
      case TRANSACTION_ABORTABLE -> version >= 11 ? refused.exception()
          : Errors.INVALID_TXN_STATE.exception("Partition was not added to the transaction");
      // retriable errors that older clients may not retry: NOT_ENOUGH_REPLICAS makes every client retry, without a metadata refresh
      case NETWORK_EXCEPTION, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR ->
          Errors.NOT_ENOUGH_REPLICAS.exception("Unable to verify the partition has been added to the transaction. Underlying error: "
              + refused);
      case CONCURRENT_TRANSACTIONS -> version >= 12 ? refused.exception()
          : Errors.NOT_ENOUGH_REPLICAS.exception("Unable to verify the partition has been added to the transaction. Underlying error: "
              + refused);
      default -> refused.exception();
    };
  }

  /** The append, or REQUEST_TIMED_OUT once {@code timeoutMs} passed without it (acks=0 and timeouts <= 0: unbounded). */
  CompletableFuture<AppendResult> bounded(CompletableFuture<AppendResult> append, int timeoutMs, short acks) {
    if (append.isDone() || timeoutMs <= 0 || acks == 0) {
      return append;
    }
    CompletableFuture<AppendResult> bounded = new CompletableFuture<>();
    Timeout deadline;
    try {
      deadline = deadlines.newTimeout(t -> bounded.completeExceptionally(new TimeoutException("the write was not durable "
          + "within the request's " + timeoutMs + " ms: storage is applying backpressure (object storage unreachable or "
          + "WAL full); it may still complete, retry")), timeoutMs, TimeUnit.MILLISECONDS);
    } catch (IllegalStateException stopped) {
      return append; // the broker is closing
    }
    append.whenComplete((r, e) -> {
      deadline.cancel();
      if (e != null) {
        bounded.completeExceptionally(e);
      } else {
        bounded.complete(r);
      }
    });
    return bounded;
  }

  private static void setError(ProduceResponseData.PartitionProduceResponse pr, Errors error, String message, short v) {
    pr.setErrorCode(error.code()).setBaseOffset(-1).setLogAppendTimeMs(-1).setLogStartOffset(-1);
    if (v >= 8) {
      pr.setErrorMessage(message);
    }
  }
}
