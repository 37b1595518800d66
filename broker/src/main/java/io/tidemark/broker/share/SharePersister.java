package io.tidemark.broker.share;

import io.tidemark.broker.cluster.InterBrokerClient;
import io.tidemark.broker.protocol.ErrorMapping;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.broker.topic.TopicRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import org.apache.kafka.common.message.DeleteShareGroupStateRequestData;
import org.apache.kafka.common.message.InitializeShareGroupStateRequestData;
import org.apache.kafka.common.message.ReadShareGroupStateRequestData;
import org.apache.kafka.common.message.ReadShareGroupStateResponseData;
import org.apache.kafka.common.message.ReadShareGroupStateSummaryRequestData;
import org.apache.kafka.common.message.ReadShareGroupStateSummaryResponseData;
import org.apache.kafka.common.message.WriteShareGroupStateRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.DeleteShareGroupStateRequest;
import org.apache.kafka.common.requests.DeleteShareGroupStateResponse;
import org.apache.kafka.common.requests.InitializeShareGroupStateRequest;
import org.apache.kafka.common.requests.InitializeShareGroupStateResponse;
import org.apache.kafka.common.requests.ReadShareGroupStateRequest;
import org.apache.kafka.common.requests.ReadShareGroupStateResponse;
import org.apache.kafka.common.requests.ReadShareGroupStateSummaryRequest;
import org.apache.kafka.common.requests.ReadShareGroupStateSummaryResponse;
import org.apache.kafka.common.requests.WriteShareGroupStateRequest;
import org.apache.kafka.common.requests.WriteShareGroupStateResponse;
import org.apache.kafka.common.utils.Time;

/**
 * How partition leaders and group coordinators reach share-partition state (Kafka's "persister"):
 * each operation goes to the {@link ShareCoordinator} of the key, the leader of the key's
 * {@value ShareStateLog#TOPIC} partition: called directly when that is this broker, otherwise sent
 * as Kafka's Initialize/Read/Write/DeleteShareGroupState or ReadShareGroupStateSummary over the
 * inter-broker listener ({@link InterBrokerClient}).
 *
 * <p>While the state partition moves or its new leader replays it (NOT_COORDINATOR,
 * COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS, a lost connection, no leader), an
 * operation is re-sent every {@value #RETRY_BACKOFF_MS} ms, for at most {@code retryForMs}; then
 * it fails with the last error. Every operation is safe to repeat: a write carries the whole state
 * with its epochs, a read and a summary change nothing but the leader epoch, a repeated delete
 * finds nothing, and a repeated initialisation is fenced (the caller reads again). Any other error
 * (FENCED_STATE_EPOCH, FENCED_LEADER_EPOCH, INVALID_REQUEST) fails at once. Stateless; results
 * complete on the network or coordinator thread.
 */
final class SharePersister {

  private static final long RETRY_BACKOFF_MS = 100;
  private static final Set<Errors> RETRIABLE = Set.of(Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE,
      Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.NETWORK_EXCEPTION, Errors.BROKER_NOT_AVAILABLE, Errors.LEADER_NOT_AVAILABLE,
      Errors.NOT_LEADER_OR_FOLLOWER, Errors.REQUEST_TIMED_OUT, Errors.UNKNOWN_TOPIC_OR_PARTITION);

  private final ShareCoordinator local;
  private final TopicRegistry registry;
  private final int selfId;
  private final InterBrokerClient network;
  private final Time time;
  private final long retryForMs;

  SharePersister(ShareCoordinator local, TopicRegistry registry, int selfId, InterBrokerClient network, Time time, long retryForMs) {
    this.local = local;
    this.registry = registry;
    this.selfId = selfId;
    this.network = network;
    this.time = time;
    this.retryForMs = retryForMs;
  }

  /** The state of {@code key} (null: none), raising the stored leader epoch to {@code leaderEpoch}. */
  CompletableFuture<ShareStateLog.Stored> read(ShareKey key, int leaderEpoch) {
    return call(key, () -> local.read(key, leaderEpoch).thenApply(Result::of), broker -> network.send(broker, new ReadShareGroupStateRequest.Builder(
        new ReadShareGroupStateRequestData().setGroupId(key.group()).setTopics(List.of(new ReadShareGroupStateRequestData.ReadStateData()
            .setTopicId(key.topicId()).setPartitions(List.of(new ReadShareGroupStateRequestData.PartitionData()
                .setPartition(key.partition()).setLeaderEpoch(leaderEpoch)))))))
        .thenCompose(r -> {
          Result o = readOutcome((ReadShareGroupStateResponse) r);
          // On the wire, as in Kafka, a read of a partition without state is INVALID_REQUEST: its epoch comes from the summary.
          return o.error() != Errors.INVALID_REQUEST ? CompletableFuture.completedFuture(o) : remoteSummary(broker, key).thenApply(
              sum -> sum.error() != Errors.NONE || sum.value() == null ? sum
                  : new Result(Errors.NONE, null, new ShareStateLog.Stored(((Summary) sum.value()).stateEpoch(), -1, null)));
        })).thenApply(o -> (ShareStateLog.Stored) o.value());
  }

  /** A share partition's state in short: its state epoch, start offset and the records done above it. */
  record Summary(int stateEpoch, long startOffset, long done) {}

  /** The summary of {@code key}'s state without fencing: null when it never had any, start offset -1 once deleted. */
  CompletableFuture<Summary> summary(ShareKey key) {
    return call(key, () -> local.summary(key).thenApply(SharePersister::summarized), broker -> remoteSummary(broker, key))
        .thenApply(o -> (Summary) o.value());
  }

  private CompletableFuture<Result> remoteSummary(int broker, ShareKey key) {
    return network.send(broker, new ReadShareGroupStateSummaryRequest.Builder(new ReadShareGroupStateSummaryRequestData()
        .setGroupId(key.group()).setTopics(List.of(new ReadShareGroupStateSummaryRequestData.ReadStateSummaryData()
            .setTopicId(key.topicId()).setPartitions(List.of(new ReadShareGroupStateSummaryRequestData.PartitionData()
                .setPartition(key.partition()).setLeaderEpoch(-1)))))))
        .thenApply(r -> summaryOutcome((ReadShareGroupStateSummaryResponse) r));
  }

  /** A fresh state of {@code key} at {@code startOffset} under {@code stateEpoch} (fenced unless above the stored one). */
  CompletableFuture<Void> initialize(ShareKey key, int stateEpoch, long startOffset) {
    return call(key, () -> local.initialize(key, stateEpoch, startOffset).thenApply(Result::of), broker -> network.send(broker,
        new InitializeShareGroupStateRequest.Builder(new InitializeShareGroupStateRequestData().setGroupId(key.group()).setTopics(List.of(
            new InitializeShareGroupStateRequestData.InitializeStateData().setTopicId(key.topicId()).setPartitions(List.of(
                new InitializeShareGroupStateRequestData.PartitionData().setPartition(key.partition()).setStateEpoch(stateEpoch)
                    .setStartOffset(startOffset)))))))
        .thenApply(r -> {
          var p = ((InitializeShareGroupStateResponse) r).data().results().get(0).partitions().get(0);
          return outcome(p.errorCode(), p.errorMessage());
        })).thenApply(o -> null);
  }

  /** Replaces the state of {@code key}; fenced by state and leader epoch. */
  CompletableFuture<Void> write(ShareKey key, int stateEpoch, int leaderEpoch, SharePartition.Snapshot snapshot) {
    return call(key, () -> local.write(key, stateEpoch, leaderEpoch, snapshot).thenApply(Result::of).thenApply(SharePersister::goneIsFenced),
        broker -> {
      WriteShareGroupStateRequestData.PartitionData p = new WriteShareGroupStateRequestData.PartitionData().setPartition(key.partition())
          .setStateEpoch(stateEpoch).setLeaderEpoch(leaderEpoch).setStartOffset(snapshot.startOffset())
          .setDeliveryCompleteCount((int) ShareStateApis.doneIn(snapshot));
      for (SharePartition.StateRun r : snapshot.runs()) {
        p.stateBatches().add(new WriteShareGroupStateRequestData.StateBatch().setFirstOffset(r.firstOffset()).setLastOffset(r.lastOffset())
            .setDeliveryState(r.state().id).setDeliveryCount((short) r.deliveryCount()));
      }
      return network.send(broker, new WriteShareGroupStateRequest.Builder(new WriteShareGroupStateRequestData().setGroupId(key.group())
          .setTopics(List.of(new WriteShareGroupStateRequestData.WriteStateData().setTopicId(key.topicId()).setPartitions(List.of(p))))))
          .thenApply(r -> {
            var rp = ((WriteShareGroupStateResponse) r).data().results().get(0).partitions().get(0);
            return goneIsFenced(outcome(rp.errorCode(), rp.errorMessage()));
          });
    }).thenApply(o -> null);
  }

  /** Drops the state of {@code key}. */
  CompletableFuture<Void> delete(ShareKey key) {
    return call(key, () -> local.delete(key).thenApply(Result::of), broker -> network.send(broker, new DeleteShareGroupStateRequest.Builder(
        new DeleteShareGroupStateRequestData().setGroupId(key.group()).setTopics(List.of(new DeleteShareGroupStateRequestData.DeleteStateData()
            .setTopicId(key.topicId()).setPartitions(List.of(new DeleteShareGroupStateRequestData.PartitionData()
                .setPartition(key.partition())))))))
        .thenApply(r -> {
          var p = ((DeleteShareGroupStateResponse) r).data().results().get(0).partitions().get(0);
          return outcome(p.errorCode(), p.errorMessage());
        })).thenApply(o -> null);
  }

  /** One attempt's result: NONE with a value, or an error. */
  private record Result(Errors error, String message, Object value) {

    static Result of(ShareCoordinator.Outcome o) {
      return new Result(o.error(), o.message(), o.stored());
    }
  }

  /** A write refused because the state is gone (INVALID_REQUEST, deleted since it was read) fences the writer: it reloads. */
  private static Result goneIsFenced(Result r) {
    return r.error() == Errors.INVALID_REQUEST ? new Result(Errors.FENCED_STATE_EPOCH, r.message(), null) : r;
  }

  private static Result outcome(short code, String message) {
    return new Result(Errors.forCode(code), message, null);
  }

  private static Result readOutcome(ReadShareGroupStateResponse r) {
    ReadShareGroupStateResponseData.PartitionResult p = r.data().results().get(0).partitions().get(0);
    if (p.errorCode() != Errors.NONE.code()) {
      return outcome(p.errorCode(), p.errorMessage());
    }
    if (p.startOffset() < 0 && p.stateEpoch() == 0) {
      return new Result(Errors.NONE, null, null);
    }
    List<SharePartition.StateRun> runs = new ArrayList<>();
    for (ReadShareGroupStateResponseData.StateBatch b : p.stateBatches()) {
      runs.add(new SharePartition.StateRun(b.firstOffset(), b.lastOffset(), SharePartition.RecordState.of(b.deliveryState()),
          b.deliveryCount()));
    }
    SharePartition.Snapshot snap = p.startOffset() < 0 ? null : new SharePartition.Snapshot(p.startOffset(), runs);
    return new Result(Errors.NONE, null, new ShareStateLog.Stored(p.stateEpoch(), -1, snap));
  }

  private static Result summarized(ShareCoordinator.Outcome o) {
    ShareStateLog.Stored s = o.stored();
    return new Result(o.error(), o.message(), s == null ? null : s.snapshot() == null ? new Summary(s.stateEpoch(), -1, 0)
        : new Summary(s.stateEpoch(), s.snapshot().startOffset(), ShareStateApis.doneIn(s.snapshot())));
  }

  private static Result summaryOutcome(ReadShareGroupStateSummaryResponse r) {
    ReadShareGroupStateSummaryResponseData.PartitionResult p = r.data().results().get(0).partitions().get(0);
    if (p.errorCode() != Errors.NONE.code()) {
      return new Result(Errors.forCode(p.errorCode()), p.errorMessage(), null);
    }
    if (p.startOffset() < 0) {
      return new Result(Errors.NONE, null, p.stateEpoch() > 0 ? new Summary(p.stateEpoch(), -1, 0) : null);
    }
    return new Result(Errors.NONE, null, new Summary(p.stateEpoch(), p.startOffset(), Math.max(0, p.deliveryCompleteCount())));
  }

  /** Runs one operation at the key's coordinator, following it while it moves (see the class comment). */
  private CompletableFuture<Result> call(ShareKey key, Supplier<CompletableFuture<Result>> here, IntFunction<CompletableFuture<Result>> there) {
    return attempt(key, here, there, time.milliseconds() + retryForMs).thenCompose(o -> o.error() == Errors.NONE
        ? CompletableFuture.completedFuture(o) : CompletableFuture.failedFuture(o.error().exception(o.message())));
  }

  private CompletableFuture<Result> attempt(ShareKey key, Supplier<CompletableFuture<Result>> here, IntFunction<CompletableFuture<Result>> there,
      long deadlineMs) {
    int leader = coordinatorOf(key);
    CompletableFuture<Result> once;
    if (leader < 0) {
      once = CompletableFuture.completedFuture(new Result(Errors.COORDINATOR_NOT_AVAILABLE, "the share-state partition of " + key
          + " has no leader", null));
    } else {
      once = (leader == selfId ? here.get() : there.apply(leader))
          .exceptionally(e -> new Result(ErrorMapping.toErrors(e), ErrorMapping.message(e), null));
    }
    return once.thenCompose(o -> {
      if (!RETRIABLE.contains(o.error()) || time.milliseconds() >= deadlineMs) {
        return CompletableFuture.completedFuture(o);
      }
      return CompletableFuture.supplyAsync(() -> null, CompletableFuture.delayedExecutor(RETRY_BACKOFF_MS, TimeUnit.MILLISECONDS))
          .thenCompose(x -> attempt(key, here, there, deadlineMs));
    });
  }

  private int coordinatorOf(ShareKey key) {
    int p = local.partitionFor(key);
    return registry.topic(ShareStateLog.TOPIC).filter(t -> p < t.partitions().size()).map(t -> t.partitions().get(p))
        .map(TopicInfo.PartitionInfo::leader).orElse(-1);
  }
}
