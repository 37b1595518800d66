package io.tidemark.broker.share;

import io.tidemark.broker.protocol.RequestContext;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.DeleteShareGroupStateRequestData;
import org.apache.kafka.common.message.DeleteShareGroupStateResponseData;
import org.apache.kafka.common.message.InitializeShareGroupStateRequestData;
import org.apache.kafka.common.message.InitializeShareGroupStateResponseData;
import org.apache.kafka.common.message.ReadShareGroupStateRequestData;
import org.apache.kafka.common.message.ReadShareGroupStateResponseData;
import org.apache.kafka.common.message.ReadShareGroupStateSummaryRequestData;
import org.apache.kafka.common.message.ReadShareGroupStateSummaryResponseData;
import org.apache.kafka.common.message.WriteShareGroupStateRequestData;
import org.apache.kafka.common.message.WriteShareGroupStateResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DeleteShareGroupStateRequest;
import org.apache.kafka.common.requests.InitializeShareGroupStateRequest;
import org.apache.kafka.common.requests.ReadShareGroupStateRequest;
import org.apache.kafka.common.requests.ReadShareGroupStateSummaryRequest;
import org.apache.kafka.common.requests.WriteShareGroupStateRequest;

/**
 * The share coordinator's APIs on the wire (Kafka's inter-broker share-state APIs, sent by the
 * partition leaders and group coordinators of other brokers through {@link SharePersister}):
 * InitializeShareGroupState (v0), ReadShareGroupState (v0), WriteShareGroupState (v0–1),
 * DeleteShareGroupState (v0) and ReadShareGroupStateSummary (v0–1), each partition answered by
 * {@link ShareCoordinator}. As in Kafka, a Read or Write of a key without state (never initialized,
 * deleted, or of a partition that does not exist) is INVALID_REQUEST, and its summary answers start
 * offset -1; a failed partition keeps the message's default fields. Holds no state.
 */
public final class ShareStateApis {

  private final ShareCoordinator coordinator;

  public ShareStateApis(ShareCoordinator coordinator) {
    this.coordinator = coordinator;
  }

  public CompletableFuture<ApiMessage> initialize(RequestContext ctx, AbstractRequest request) {
    InitializeShareGroupStateRequestData d = ((InitializeShareGroupStateRequest) request).data();
    InitializeShareGroupStateResponseData resp = new InitializeShareGroupStateResponseData();
    List<CompletableFuture<Void>> waits = new ArrayList<>();
    for (var t : d.topics()) {
      var rt = new InitializeShareGroupStateResponseData.InitializeStateResult().setTopicId(t.topicId());
      resp.results().add(rt);
      for (var p : t.partitions()) {
        var rp = new InitializeShareGroupStateResponseData.PartitionResult().setPartition(p.partition());
        rt.partitions().add(rp);
        waits.add(coordinator.initialize(new ShareKey(d.groupId(), t.topicId(), p.partition()), p.stateEpoch(), p.startOffset())
            .thenAccept(o -> rp.setErrorCode(o.error().code()).setErrorMessage(o.message())));
      }
    }
    return all(waits, resp);
  }

  public CompletableFuture<ApiMessage> read(RequestContext ctx, AbstractRequest request) {
    ReadShareGroupStateRequestData d = ((ReadShareGroupStateRequest) request).data();
    ReadShareGroupStateResponseData resp = new ReadShareGroupStateResponseData();
    List<CompletableFuture<Void>> waits = new ArrayList<>();
    for (var t : d.topics()) {
      var rt = new ReadShareGroupStateResponseData.ReadStateResult().setTopicId(t.topicId());
      resp.results().add(rt);
      for (var p : t.partitions()) {
        var rp = new ReadShareGroupStateResponseData.PartitionResult().setPartition(p.partition());
        rt.partitions().add(rp);
        waits.add(coordinator.read(new ShareKey(d.groupId(), t.topicId(), p.partition()), p.leaderEpoch()).thenAccept(o -> {
          ShareStateLog.Stored s = o.stored();
          if (o.error() != Errors.NONE) {
            rp.setErrorCode(o.error().code()).setErrorMessage(o.message());
          } else if (s == null || s.snapshot() == null) {
            rp.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("share partition " + d.groupId() + ":" + t.topicId() + ":"
                + p.partition() + " is not initialized");
          } else {
            rp.setStateEpoch(s.stateEpoch()).setStartOffset(s.snapshot().startOffset());
            for (SharePartition.StateRun r : s.snapshot().runs()) {
              rp.stateBatches().add(new ReadShareGroupStateResponseData.StateBatch().setFirstOffset(r.firstOffset())
                  .setLastOffset(r.lastOffset()).setDeliveryState(r.state().id).setDeliveryCount((short) r.deliveryCount()));
            }
          }
        }));
      }
    }
    return all(waits, resp);
  }

  public CompletableFuture<ApiMessage> write(RequestContext ctx, AbstractRequest request) {
    WriteShareGroupStateRequestData d = ((WriteShareGroupStateRequest) request).data();
    WriteShareGroupStateResponseData resp = new WriteShareGroupStateResponseData();
    List<CompletableFuture<Void>> waits = new ArrayList<>();
    for (var t : d.topics()) {
      var rt = new WriteShareGroupStateResponseData.WriteStateResult().setTopicId(t.topicId());
      resp.results().add(rt);
      for (var p : t.partitions()) {
        var rp = new WriteShareGroupStateResponseData.PartitionResult().setPartition(p.partition());
        rt.partitions().add(rp);
        SharePartition.Snapshot snapshot;
        try {
          snapshot = snapshotOf(p);
        } catch (IllegalArgumentException e) {
          rp.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage(e.getMessage());
          continue;
        }
        waits.add(coordinator.write(new ShareKey(d.groupId(), t.topicId(), p.partition()), p.stateEpoch(), p.leaderEpoch(), snapshot)
            .thenAccept(o -> rp.setErrorCode(o.error().code()).setErrorMessage(o.message())));
      }
    }
    return all(waits, resp);
  }

  public CompletableFuture<ApiMessage> delete(RequestContext ctx, AbstractRequest request) {
    DeleteShareGroupStateRequestData d = ((DeleteShareGroupStateRequest) request).data();
    DeleteShareGroupStateResponseData resp = new DeleteShareGroupStateResponseData();
    List<CompletableFuture<Void>> waits = new ArrayList<>();
    for (var t : d.topics()) {
      var rt = new DeleteShareGroupStateResponseData.DeleteStateResult().setTopicId(t.topicId());
      resp.results().add(rt);
      for (var p : t.partitions()) {
        var rp = new DeleteShareGroupStateResponseData.PartitionResult().setPartition(p.partition());
        rt.partitions().add(rp);
        waits.add(coordinator.delete(new ShareKey(d.groupId(), t.topicId(), p.partition()))
            .thenAccept(o -> rp.setErrorCode(o.error().code()).setErrorMessage(o.message())));
      }
    }
    return all(waits, resp);
  }

  public CompletableFuture<ApiMessage> summary(RequestContext ctx, AbstractRequest request) {
    ReadShareGroupStateSummaryRequestData d = ((ReadShareGroupStateSummaryRequest) request).data();
    ReadShareGroupStateSummaryResponseData resp = new ReadShareGroupStateSummaryResponseData();
    List<CompletableFuture<Void>> waits = new ArrayList<>();
    for (var t : d.topics()) {
      var rt = new ReadShareGroupStateSummaryResponseData.ReadStateSummaryResult().setTopicId(t.topicId());
      resp.results().add(rt);
      for (var p : t.partitions()) {
        var rp = new ReadShareGroupStateSummaryResponseData.PartitionResult().setPartition(p.partition());
        rt.partitions().add(rp);
        waits.add(coordinator.summary(new ShareKey(d.groupId(), t.topicId(), p.partition())).thenAccept(o -> {
          rp.setErrorCode(o.error().code()).setErrorMessage(o.message());
          ShareStateLog.Stored s = o.stored();
          if (o.error() == Errors.NONE) {
            rp.setStartOffset(-1); // no state: Kafka's answer is start offset -1, epochs 0
          }
          if (o.error() == Errors.NONE && s != null) {
            rp.setStateEpoch(s.stateEpoch()).setLeaderEpoch(Math.max(0, s.leaderEpoch()));
            if (s.snapshot() != null) {
              rp.setStartOffset(s.snapshot().startOffset()).setDeliveryCompleteCount((int) doneIn(s.snapshot()));
            }
          }
        }));
      }
    }
    return all(waits, resp);
  }

  /** Records above the start offset already done (acknowledged or archived): the lag leaves them out. */
  static long doneIn(SharePartition.Snapshot s) {
    long n = 0;
    for (SharePartition.StateRun r : s.runs()) {
      if (r.state().done() && r.lastOffset() >= s.startOffset()) {
        n += r.lastOffset() - Math.max(r.firstOffset(), s.startOffset()) + 1;
      }
    }
    return n;
  }

  /** The snapshot a WriteShareGroupState partition carries; IllegalArgumentException when malformed. */
  static SharePartition.Snapshot snapshotOf(WriteShareGroupStateRequestData.PartitionData p) {
    if (p.startOffset() < 0) {
      throw new IllegalArgumentException("start offset " + p.startOffset() + " is negative");
    }
    List<SharePartition.StateRun> runs = new ArrayList<>();
    for (var b : p.stateBatches()) {
      if (b.lastOffset() < b.firstOffset() || b.lastOffset() - b.firstOffset() > 1_000_000 || b.deliveryCount() < 0) {
        throw new IllegalArgumentException("bad state batch [" + b.firstOffset() + ", " + b.lastOffset() + "]");
      }
      runs.add(new SharePartition.StateRun(b.firstOffset(), b.lastOffset(), SharePartition.RecordState.of(b.deliveryState()),
          b.deliveryCount()));
    }
    return new SharePartition.Snapshot(p.startOffset(), runs);
  }

  private static CompletableFuture<ApiMessage> all(List<CompletableFuture<Void>> waits, ApiMessage resp) {
    return CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new)).thenApply(x -> resp);
  }
}
