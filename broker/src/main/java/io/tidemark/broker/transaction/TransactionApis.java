package io.tidemark.broker.transaction;

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
 * The transaction APIs (transactions V1, Kafka's protocol): InitProducerId with a transactional
 * id (v0–5), AddPartitionsToTxn (v0–3, the client path), AddOffsetsToTxn (v0–4), EndTxn (v0–4),
 * DescribeTransactions (v0), ListTransactions (v0–2). Each is answered only by the coordinator
 * of its transactional id: the leader of the id's {@code __transaction_state} partition, once
 * that partition is open and loaded here (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE or
 * COORDINATOR_LOAD_IN_PROGRESS otherwise, so that clients look it up again). Translates requests
 * to {@link TransactionCoordinator} calls and back; holds no state of its own.
 */
public final class TransactionApis implements AutoCloseable {

  private final TopicRegistry registry;
  private final Partitions partitions;
  private final int nodeId;
  private final TransactionLog txnLog;
  private final TransactionCoordinator coordinator;
  private final String offsetsTopic;
  private final java.util.function.ToIntFunction<String> offsetsPartitionFor;
  private final MarkerClient markerClient = new MarkerClient();
  private final Time time;

  /**
   * @param localMarkers writes markers into partitions led here
   * @param broker where another broker listens, by node id
   * @param offsetsPartitionFor the {@code __consumer_offsets} partition of a group (AddOffsetsToTxn)
   */
  public TransactionApis(TopicRegistry registry, Partitions partitions, int nodeId, int logPartitions, Time time,
      TransactionCoordinator.Settings settings, LongSupplier newProducerId, LocalMarkers localMarkers,
      java.util.function.IntFunction<Optional<io.tidemark.broker.cluster.ClusterView.Node>> broker, String offsetsTopic,
      java.util.function.ToIntFunction<String> offsetsPartitionFor) {
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
      return broker.apply(leader).map(node -> markerClient.send(node, tp, pid, epoch, coordinatorEpoch, commit))
          .orElse(CompletableFuture.completedFuture(Errors.LEADER_NOT_AVAILABLE));
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
    return coordinator.addPartitions(d.v3AndBelowTransactionalId(), d.v3AndBelowProducerId(), d.v3AndBelowProducerEpoch(), asked)
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
    return coordinator.addPartitions(d.transactionalId(), d.producerId(), d.producerEpoch(), Set.of(offsets)).handle((x, e) ->
        body.setErrorCode(e == null ? Errors.NONE.code() : forVersion(ErrorMapping.toErrors(e), request.version(), 2).code()));
  }

  public CompletableFuture<ApiMessage> endTxn(RequestContext ctx, AbstractRequest request) {
    EndTxnRequestData d = ((EndTxnRequest) request).data();
    EndTxnResponseData body = new EndTxnResponseData().setProducerId(-1).setProducerEpoch((short) -1);
    Errors gate = check(d.transactionalId());
    if (gate != Errors.NONE) {
      return CompletableFuture.completedFuture(body.setErrorCode(gate.code()));
    }
    return coordinator.endTransaction(d.transactionalId(), d.producerId(), d.producerEpoch(), d.committed()).handle((x, e) ->
        body.setErrorCode(e == null ? Errors.NONE.code() : forVersion(ErrorMapping.toErrors(e), request.version(), 2).code()));
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
    markerClient.close();
  }
}
