package io.tidemark.broker.transaction;

import io.tidemark.broker.cluster.InterBrokerClient;
import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.partition.Partitions;
import io.tidemark.broker.protocol.ErrorMapping;
import io.tidemark.broker.protocol.RequestContext;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.broker.topic.TopicRegistry;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.AddOffsetsToTxnRequestData;
import org.apache.kafka.common.message.AddOffsetsToTxnResponseData;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData;
import org.apache.kafka.common.message.DescribeTransactionsResponseData;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.EndTxnResponseData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.message.ListTransactionsRequestData;
import org.apache.kafka.common.message.ListTransactionsResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AddOffsetsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.DescribeTransactionsRequest;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.ListTransactionsRequest;
import org.apache.kafka.common.utils.Time;

/**
 * The transaction APIs (transactions V1 and V2, Kafka's protocol): InitProducerId with a
 * transactional id (v0–5), AddPartitionsToTxn (v0–3 from clients; v4–5 from partition leaders,
 * batched by transaction, to verify or add partitions: KIP-890), AddOffsetsToTxn (v0–4), EndTxn
 * (v0–4, and v5 for transactions V2: the epoch is bumped and the producer to continue with
 * answered), DescribeTransactions (v0), ListTransactions (v0–2). Each is answered only by the coordinator
 * of its transactional id: the leader of the id's {@code __transaction_state} partition, once
 * that partition is open and loaded here (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE or
 * COORDINATOR_LOAD_IN_PROGRESS otherwise, so that clients look it up again). Translates requests
 * to {@link TransactionCoordinator} calls and back; holds no state of its own.
 *
 * <p>Leader side of KIP-890 ({@link #addOrVerify}, used by Produce and TxnOffsetCommit): before the
 * first transactional write of a producer into a partition, its leader asks the transaction's
 * coordinator (here directly, or with AddPartitionsToTxn v5 over the inter-broker listener)
 * whether the partition is in the transaction (V1 clients: verify only) or to add it (V2 clients).
 */
public final class TransactionApis implements AutoCloseable {

  private final TopicRegistry registry;
  private final Partitions partitions;
  private final int nodeId;
  private final TransactionLog txnLog;
  private final TransactionCoordinator coordinator;
  private final String offsetsTopic;
  private final java.util.function.ToIntFunction<String> offsetsPartitionFor;
  private final InterBrokerClient interBroker;
  private final MarkerClient markerClient;
  private final Time time;

  /**
   * @param localMarkers writes markers into partitions led here
   * @param interBroker reaches the other brokers on their inter-broker listener (markers, verification); owned from here on
   * @param offsetsPartitionFor the {@code __consumer_offsets} partition of a group (AddOffsetsToTxn)
   */
  public TransactionApis(TopicRegistry registry, Partitions partitions, int nodeId, int logPartitions, Time time,
      TransactionCoordinator.Settings settings, LongSupplier newProducerId, LocalMarkers localMarkers,
      InterBrokerClient interBroker, String offsetsTopic, java.util.function.ToIntFunction<String> offsetsPartitionFor) {
    this.interBroker = interBroker;
    this.markerClient = new MarkerClient(interBroker);
    this.registry = registry;
    this.partitions = partitions;
    this.nodeId = nodeId;
    this.offsetsTopic = offsetsTopic;
    this.offsetsPartitionFor = offsetsPartitionFor;
    this.time = time;
    this.txnLog = new TransactionLog(partitions, logPartitions, time);
    TransactionCoordinator.MarkerRouter router = (tp, pid, epoch, coordinatorEpoch, commit) -> {
      int leader = leaderOf(tp);
      if (leader < 0) {
        return CompletableFuture.completedFuture(registry.topic(tp.topic()).isEmpty() ? Errors.UNKNOWN_TOPIC_OR_PARTITION
            : Errors.LEADER_NOT_AVAILABLE);
      }
      if (leader == nodeId) {
        return localMarkers.write(tp, pid, epoch, coordinatorEpoch, commit);
      }
      return markerClient.send(leader, tp, pid, epoch, coordinatorEpoch, commit);
    };
    this.coordinator = new TransactionCoordinator(settings, time, txnLog, newProducerId, router,
        topic -> registry.topic(topic).isPresent());
    partitions.addListener(new Partitions.Listener() {
      @Override
      public void opened(PartitionLog log) {
        if (log.topicPartition().topic().equals(TransactionLog.TOPIC)) {
          coordinator.partitionOpened(log.topicPartition().partition());
        }
      }

      @Override
      public void closed(PartitionLog log) {
        if (log.topicPartition().topic().equals(TransactionLog.TOPIC)) {
          coordinator.partitionClosed(log.topicPartition().partition());
        }
      }
    });
  }

  public static String stateTopic() {
    return TransactionLog.TOPIC;
  }

  /** Loads the ids of every log partition open here (start-up). */
  public CompletableFuture<Void> load() {
    return coordinator.load();
  }

  private int leaderOf(TopicPartition tp) {
    return registry.topic(tp.topic()).filter(t -> tp.partition() >= 0 && tp.partition() < t.partitions().size())
        .map(t -> t.partitions().get(tp.partition()).leader()).orElse(-1);
  }

  /** The node coordinating {@code transactionalId}, when its log partition has a leader. */
  public Optional<Integer> coordinatorOf(String transactionalId) {
    int p = txnLog.partitionFor(transactionalId);
    return registry.topic(TransactionLog.TOPIC).filter(t -> p < t.partitions().size()).map(t -> t.partitions().get(p).leader())
        .filter(l -> l >= 0);
  }

  /** The error for an id not coordinated here now, or NONE. */
  private Errors check(String transactionalId) {
    Optional<Integer> leader = coordinatorOf(transactionalId);
    if (leader.isEmpty()) {
      return Errors.COORDINATOR_NOT_AVAILABLE;
    }
    if (leader.get() != nodeId) {
      return Errors.NOT_COORDINATOR;
    }
    int p = txnLog.partitionFor(transactionalId);
    if (partitions.get(new TopicPartition(TransactionLog.TOPIC, p)).isEmpty()) {
      return Errors.COORDINATOR_NOT_AVAILABLE;
    }
    return coordinator.loading(p) ? Errors.COORDINATOR_LOAD_IN_PROGRESS : Errors.NONE;
  }

  /** Kafka answers older clients INVALID_PRODUCER_EPOCH where newer ones get PRODUCER_FENCED. */
  private static Errors forVersion(Errors e, short version, int fencedSince) {
    return e == Errors.PRODUCER_FENCED && version < fencedSince ? Errors.INVALID_PRODUCER_EPOCH : e;
  }

  public CompletableFuture<ApiMessage> initProducerId(RequestContext ctx, AbstractRequest request) {
    InitProducerIdRequestData d = ((InitProducerIdRequest) request).data();
    InitProducerIdResponseData body = new InitProducerIdResponseData().setProducerId(-1).setProducerEpoch((short) -1);
    if (d.transactionalId().isEmpty()) {
      return CompletableFuture.completedFuture(body.setErrorCode(Errors.INVALID_REQUEST.code()));
    }
    Errors gate = check(d.transactionalId());
    if (gate != Errors.NONE) {
      return CompletableFuture.completedFuture(body.setErrorCode(gate.code()));
    }
    long pid = request.version() >= 3 ? d.producerId() : -1;
    short epoch = request.version() >= 3 ? d.producerEpoch() : -1;
    return coordinator.initProducerId(d.transactionalId(), d.transactionTimeoutMs(), pid, epoch).handle((r, e) -> {
      if (e != null) {
        return body.setErrorCode(forVersion(ErrorMapping.toErrors(e), request.version(), 4).code());
      }
      return body.setErrorCode(Errors.NONE.code()).setProducerId(r[0]).setProducerEpoch((short) r[1]);
    });
  }

  public CompletableFuture<ApiMessage> addPartitionsToTxn(RequestContext ctx, AbstractRequest request) {
    AddPartitionsToTxnRequestData d = ((AddPartitionsToTxnRequest) request).data();
    short v = request.version();
    if (v >= 4) {
      return addPartitionsForBrokers(d);
    }
    Set<TopicPartition> asked = new LinkedHashSet<>();
    for (AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic t : d.v3AndBelowTopics()) {
      for (int p : t.partitions()) {
        asked.add(new TopicPartition(t.name(), p));
      }
    }
    Map<TopicPartition, Errors> errors = new HashMap<>();
    Errors gate = check(d.v3AndBelowTransactionalId());
    Set<TopicPartition> unknown = new LinkedHashSet<>();
    for (TopicPartition tp : asked) {
      Optional<TopicInfo> t = registry.topic(tp.topic());
      if (t.isEmpty() || tp.partition() < 0 || tp.partition() >= t.get().partitions().size()) {
        unknown.add(tp);
      }
    }
    if (gate != Errors.NONE || !unknown.isEmpty()) {
      for (TopicPartition tp : asked) {
        errors.put(tp, gate != Errors.NONE ? gate : unknown.contains(tp) ? Errors.UNKNOWN_TOPIC_OR_PARTITION
            : Errors.OPERATION_NOT_ATTEMPTED);
      }
      return CompletableFuture.completedFuture(addPartitionsResponse(errors));
    }
    return coordinator.addPartitions(d.v3AndBelowTransactionalId(), d.v3AndBelowProducerId(), d.v3AndBelowProducerEpoch(), asked,
            false)
        .handle((x, e) -> {
          Errors error = e == null ? Errors.NONE : forVersion(ErrorMapping.toErrors(e), v, 2);
          asked.forEach(tp -> errors.put(tp, error));
          return addPartitionsResponse(errors);
        });
  }

  private static ApiMessage addPartitionsResponse(Map<TopicPartition, Errors> errors) {
    return new AddPartitionsToTxnResponseData().setResultsByTopicV3AndBelow(
        AddPartitionsToTxnResponse.resultForTransaction(AddPartitionsToTxnResponse.V3_AND_BELOW_TXN_ID, errors).topicResults());
  }

  /**
   * AddPartitionsToTxn v4+ (from partition leaders, CLUSTER_ACTION checked in front): per
   * transaction, verify only (every partition answered NONE or INVALID_TXN_STATE) or add the
   * partitions (transactions V2); a transaction that cannot be served here has its error on all of
   * its partitions. The top-level error stays NONE.
   */
  private CompletableFuture<ApiMessage> addPartitionsForBrokers(AddPartitionsToTxnRequestData d) {
    List<CompletableFuture<AddPartitionsToTxnResponseData.AddPartitionsToTxnResult>> results = new java.util.ArrayList<>();
    for (AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction txn : d.transactions()) {
      String id = txn.transactionalId();
      Set<TopicPartition> asked = new LinkedHashSet<>(AddPartitionsToTxnRequest.getPartitions(txn.topics()));
      Errors gate = check(id);
      Set<TopicPartition> unknown = new LinkedHashSet<>();
      asked.stream().filter(tp -> registry.topic(tp.topic()).filter(t -> tp.partition() >= 0 && tp.partition() < t.partitions().size())
          .isEmpty()).forEach(unknown::add);
      if (gate == Errors.NONE && !unknown.isEmpty()) {
        Map<TopicPartition, Errors> errors = new HashMap<>();
        asked.forEach(tp -> errors.put(tp, unknown.contains(tp) ? Errors.UNKNOWN_TOPIC_OR_PARTITION : Errors.OPERATION_NOT_ATTEMPTED));
        results.add(CompletableFuture.completedFuture(AddPartitionsToTxnResponse.resultForTransaction(id, errors)));
        continue;
      }
      CompletableFuture<Map<TopicPartition, Errors>> answered = gate != Errors.NONE ? CompletableFuture.failedFuture(
          new TransactionException(gate, "transactional id " + id + " is not coordinated here now"))
          : txn.verifyOnly() ? coordinator.verifyPartitions(id, txn.producerId(), txn.producerEpoch(), asked)
          : coordinator.addPartitions(id, txn.producerId(), txn.producerEpoch(), asked, true).thenApply(x -> Map.of());
      results.add(answered.handle((errors, e) -> {
        Map<TopicPartition, Errors> all = new HashMap<>();
        Errors whole = e == null ? Errors.NONE : ErrorMapping.toErrors(e);
        asked.forEach(tp -> all.put(tp, e != null ? whole : errors.getOrDefault(tp, Errors.NONE)));
        return AddPartitionsToTxnResponse.resultForTransaction(id, all);
      }));
    }
    return CompletableFuture.allOf(results.toArray(CompletableFuture[]::new)).thenApply(x -> {
      AddPartitionsToTxnResponseData body = new AddPartitionsToTxnResponseData().setErrorCode(Errors.NONE.code());
      results.forEach(r -> body.resultsByTransaction().add(r.join()));
      return body;
    });
  }

  /** How long a leader retries CONCURRENT_TRANSACTIONS when adding a partition (Kafka's add.partitions.to.txn.retry.backoff.max.ms). */
  private static final long ADD_RETRY_MAX_MS = 100;
  private static final long ADD_RETRY_BACKOFF_MS = 20;

  /**
   * The leader's side of KIP-890: asks the coordinator of {@code transactionalId} whether
   * {@code partitions} are in the producer's open transaction ({@code add} false, transactions V1
   * clients) or adds them ({@code add} true, V2 clients; CONCURRENT_TRANSACTIONS, common while the
   * previous transaction completes, is retried for up to {@value #ADD_RETRY_MAX_MS} ms). Completes with
   * the partitions that failed, with the errors of Kafka's AddPartitionsToTxnManager:
   * PRODUCER_FENCED as INVALID_PRODUCER_EPOCH, an unreachable coordinator as NETWORK_EXCEPTION or
   * the coordinator errors, a refused inter-broker authorization as INVALID_TXN_STATE. A coordinator
   * that does not know AddPartitionsToTxn v4 means no verification (an empty answer), as in Kafka.
   */
  public CompletableFuture<Map<TopicPartition, Errors>> addOrVerify(String transactionalId, long producerId, short producerEpoch,
      Set<TopicPartition> partitions, boolean add) {
    long deadline = time.milliseconds() + ADD_RETRY_MAX_MS;
    return addOrVerifyOnce(transactionalId, producerId, producerEpoch, partitions, add)
        .thenCompose(errors -> retryConcurrent(errors, deadline, transactionalId, producerId, producerEpoch, partitions, add));
  }

  private CompletableFuture<Map<TopicPartition, Errors>> retryConcurrent(Map<TopicPartition, Errors> errors, long deadline,
      String id, long producerId, short epoch, Set<TopicPartition> partitions, boolean add) {
    if (!add || !errors.containsValue(Errors.CONCURRENT_TRANSACTIONS) || time.milliseconds() >= deadline) {
      return CompletableFuture.completedFuture(errors);
    }
    java.util.concurrent.Executor later = CompletableFuture.delayedExecutor(ADD_RETRY_BACKOFF_MS, java.util.concurrent.TimeUnit.MILLISECONDS);
    return CompletableFuture.supplyAsync(() -> null, later)
        .thenCompose(x -> addOrVerifyOnce(id, producerId, epoch, partitions, add))
        .thenCompose(next -> retryConcurrent(next, deadline, id, producerId, epoch, partitions, add));
  }

  private CompletableFuture<Map<TopicPartition, Errors>> addOrVerifyOnce(String id, long producerId, short epoch,
      Set<TopicPartition> partitions, boolean add) {
    Optional<Integer> coordinatorNode = coordinatorOf(id);
    if (coordinatorNode.isEmpty()) {
      return CompletableFuture.completedFuture(all(partitions, Errors.COORDINATOR_NOT_AVAILABLE));
    }
    CompletableFuture<Map<TopicPartition, Errors>> answered;
    if (coordinatorNode.get() == nodeId) {
      Errors gate = check(id);
      if (gate != Errors.NONE) {
        return CompletableFuture.completedFuture(all(partitions, gate));
      }
      answered = (add ? coordinator.addPartitions(id, producerId, epoch, partitions, true).thenApply(x -> Map.<TopicPartition, Errors>of())
          : coordinator.verifyPartitions(id, producerId, epoch, partitions))
          .exceptionally(e -> all(partitions, ErrorMapping.toErrors(e)));
    } else {
      AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection topics = new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection();
      for (TopicPartition tp : partitions) {
        AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic t = topics.find(tp.topic());
        if (t == null) {
          t = new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName(tp.topic());
          topics.add(t);
        }
        t.partitions().add(tp.partition());
      }
      AddPartitionsToTxnRequestData.AddPartitionsToTxnTransactionCollection txns = new AddPartitionsToTxnRequestData.AddPartitionsToTxnTransactionCollection();
      txns.add(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction().setTransactionalId(id).setProducerId(producerId)
          .setProducerEpoch(epoch).setVerifyOnly(!add).setTopics(topics));
      answered = interBroker.send(coordinatorNode.get(), AddPartitionsToTxnRequest.Builder.forBroker(txns)).handle((r, e) -> {
        if (e != null) {
          Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
          return cause instanceof org.apache.kafka.common.errors.UnsupportedVersionException ? Map.<TopicPartition, Errors>of()
              : all(partitions, Errors.NETWORK_EXCEPTION);
        }
        AddPartitionsToTxnResponseData data = ((AddPartitionsToTxnResponse) r).data();
        if (data.errorCode() != Errors.NONE.code()) {
          Errors top = Errors.forCode(data.errorCode());
          return all(partitions, top == Errors.CLUSTER_AUTHORIZATION_FAILED ? Errors.INVALID_TXN_STATE : top);
        }
        AddPartitionsToTxnResponseData.AddPartitionsToTxnResult result = data.resultsByTransaction().find(id);
        return result == null ? all(partitions, Errors.UNKNOWN_SERVER_ERROR) : AddPartitionsToTxnResponse.errorsForTransaction(result.topicResults());
      });
    }
    return answered.thenApply(errors -> {
      Map<TopicPartition, Errors> failed = new HashMap<>();
      errors.forEach((tp, e) -> {
        if (e != Errors.NONE) {
          failed.put(tp, e == Errors.PRODUCER_FENCED ? Errors.INVALID_PRODUCER_EPOCH : e); // producers expect it here
        }
      });
      return failed;
    });
  }

  private static Map<TopicPartition, Errors> all(Set<TopicPartition> partitions, Errors error) {
    Map<TopicPartition, Errors> out = new HashMap<>();
    partitions.forEach(tp -> out.put(tp, error));
    return out;
  }

  /**
   * TxnOffsetCommit behind KIP-890 on the group coordinator: the group's offsets partition must be
   * in the transaction (v0–4: verified, after the client's AddOffsetsToTxn) or is added to it (v5+,
   * transactions V2, which sends no AddOffsetsToTxn) before {@code inner} commits; a failure answers
   * every partition, with the errors Kafka's group coordinator answers (coordinator trouble as
   * COORDINATOR_NOT_AVAILABLE, so that the client retries).
   */
  public io.tidemark.broker.protocol.ApiHandler txnOffsetCommitInTransaction(io.tidemark.broker.protocol.ApiHandler inner) {
    return (ctx, request) -> {
      var d = ((org.apache.kafka.common.requests.TxnOffsetCommitRequest) request).data();
      TopicPartition offsets = new TopicPartition(offsetsTopic, offsetsPartitionFor.applyAsInt(d.groupId()));
      boolean add = request.version() >= 5;
      return addOrVerify(d.transactionalId(), d.producerId(), d.producerEpoch(), Set.of(offsets), add).thenCompose(errors -> {
        Errors e = errors.get(offsets);
        if (e == null) {
          return inner.handle(ctx, request);
        }
        Errors answer = switch (e) {
          case NETWORK_EXCEPTION, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR -> Errors.COORDINATOR_NOT_AVAILABLE;
          case CONCURRENT_TRANSACTIONS -> add ? e : Errors.COORDINATOR_NOT_AVAILABLE;
          default -> e;
        };
        return CompletableFuture.completedFuture((ApiMessage) request.getErrorResponse(0, answer.exception()).data());
      });
    };
  }

  public CompletableFuture<ApiMessage> addOffsetsToTxn(RequestContext ctx, AbstractRequest request) {
    AddOffsetsToTxnRequestData d = ((AddOffsetsToTxnRequest) request).data();
    AddOffsetsToTxnResponseData body = new AddOffsetsToTxnResponseData();
    Errors gate = check(d.transactionalId());
    if (gate != Errors.NONE) {
      return CompletableFuture.completedFuture(body.setErrorCode(gate.code()));
    }
    if (d.groupId() == null || d.groupId().isEmpty()) {
      return CompletableFuture.completedFuture(body.setErrorCode(Errors.INVALID_GROUP_ID.code()));
    }
    TopicPartition offsets = new TopicPartition(offsetsTopic, offsetsPartitionFor.applyAsInt(d.groupId()));
    return coordinator.addPartitions(d.transactionalId(), d.producerId(), d.producerEpoch(), Set.of(offsets), false).handle((x, e) ->
        body.setErrorCode(e == null ? Errors.NONE.code() : forVersion(ErrorMapping.toErrors(e), request.version(), 2).code()));
  }

  public CompletableFuture<ApiMessage> endTxn(RequestContext ctx, AbstractRequest request) {
    EndTxnRequestData d = ((EndTxnRequest) request).data();
    EndTxnResponseData body = new EndTxnResponseData().setProducerId(-1).setProducerEpoch((short) -1);
    Errors gate = check(d.transactionalId());
    if (gate != Errors.NONE) {
      return CompletableFuture.completedFuture(body.setErrorCode(gate.code()));
    }
    return coordinator.endTransaction(d.transactionalId(), d.producerId(), d.producerEpoch(), d.committed(), request.version() >= 5)
        .handle((next, e) -> e != null ? body.setErrorCode(forVersion(ErrorMapping.toErrors(e), request.version(), 2).code())
            : body.setErrorCode(Errors.NONE.code()).setProducerId(next[0]).setProducerEpoch((short) next[1]));
  }

  public CompletableFuture<ApiMessage> describeTransactions(RequestContext ctx, AbstractRequest request) {
    List<String> ids = ((DescribeTransactionsRequest) request).data().transactionalIds();
    DescribeTransactionsResponseData body = new DescribeTransactionsResponseData();
    List<String> here = ids.stream().filter(id -> check(id) == Errors.NONE).toList();
    return coordinator.describe(here).thenApply(found -> {
      for (String id : ids) {
        DescribeTransactionsResponseData.TransactionState s = new DescribeTransactionsResponseData.TransactionState()
            .setTransactionalId(id).setProducerId(0).setProducerEpoch((short) 0).setTransactionState("") // 0s unless found, as Kafka
            .setTransactionStartTimeMs(-1);
        Errors gate = check(id);
        TransactionCoordinator.View view = found.get(id);
        if (gate != Errors.NONE && !here.contains(id)) {
          s.setErrorCode(gate.code());
        } else if (view == null) {
          s.setErrorCode(Errors.TRANSACTIONAL_ID_NOT_FOUND.code());
        } else {
          s.setErrorCode(Errors.NONE.code()).setTransactionState(view.state()).setProducerId(view.producerId())
              .setProducerEpoch(view.producerEpoch()).setTransactionTimeoutMs(view.timeoutMs())
              .setTransactionStartTimeMs(view.startTimestampMs());
          Map<String, DescribeTransactionsResponseData.TopicData> topics = new java.util.LinkedHashMap<>();
          for (TopicPartition tp : view.partitions()) {
            topics.computeIfAbsent(tp.topic(), n -> {
              DescribeTransactionsResponseData.TopicData t = new DescribeTransactionsResponseData.TopicData().setTopic(n);
              s.topics().add(t);
              return t;
            }).partitions().add(tp.partition());
          }
        }
        body.transactionStates().add(s);
      }
      return body;
    });
  }

  public CompletableFuture<ApiMessage> listTransactions(RequestContext ctx, AbstractRequest request) {
    ListTransactionsRequestData d = ((ListTransactionsRequest) request).data();
    short v = request.version();
    ListTransactionsResponseData body = new ListTransactionsResponseData().setErrorCode(Errors.NONE.code());
    Pattern pattern;
    try {
      pattern = v >= 2 && d.transactionalIdPattern() != null && !d.transactionalIdPattern().isEmpty()
          ? Pattern.compile(d.transactionalIdPattern()) : null;
    } catch (PatternSyntaxException e) {
      return CompletableFuture.completedFuture(body.setErrorCode(Errors.INVALID_REGULAR_EXPRESSION.code()));
    }
    Set<String> unknownStates = new LinkedHashSet<>();
    for (String s : d.stateFilters()) {
      if (TransactionState.byDisplayName(s) == null) {
        unknownStates.add(s);
      }
    }
    body.setUnknownStateFilters(List.copyOf(unknownStates));
    long now = time.milliseconds();
    return coordinator.list().thenApply(views -> {
      for (TransactionCoordinator.View view : views) {
        if (!d.stateFilters().isEmpty() && d.stateFilters().stream().noneMatch(s -> s.equalsIgnoreCase(view.state()))) {
          continue;
        }
        if (!d.producerIdFilters().isEmpty() && !d.producerIdFilters().contains(view.producerId())) {
          continue;
        }
        if (v >= 1 && d.durationFilter() >= 0 && (view.startTimestampMs() < 0 || now - view.startTimestampMs() < d.durationFilter())) {
          continue;
        }
        if (pattern != null && !pattern.matcher(view.transactionalId()).matches()) {
          continue;
        }
        body.transactionStates().add(new ListTransactionsResponseData.TransactionState().setTransactionalId(view.transactionalId())
            .setProducerId(view.producerId()).setTransactionState(view.state()));
      }
      return body;
    });
  }

  @Override
  public void close() {
    coordinator.close();
    interBroker.close();
  }
}
