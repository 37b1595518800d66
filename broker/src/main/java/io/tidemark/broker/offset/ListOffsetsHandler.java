package io.tidemark.broker.offset;

import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.protocol.ErrorMapping;
import io.tidemark.broker.protocol.RequestContext;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;

/**
 * ListOffsets (v1–11): latest (-1, the high watermark, or with isolation level read_committed the
 * last stable offset), earliest and earliest-local (-2, -4, the
 * log start), max timestamp (-3), latest-tiered (-5: everything durable is in the shared tier, so
 * the high watermark), earliest-pending-upload (-6: nothing is pending from the client's view,
 * so -1), and the first offset with a timestamp at or after a given time (-1/-1 when none).
 */
public final class ListOffsetsHandler implements ApiHandler {

  private final PartitionLookup lookup;

  public ListOffsetsHandler(PartitionLookup lookup) {
    this.lookup = lookup;
  }

  @Override
  public CompletableFuture<ApiMessage> handle(RequestContext context, AbstractRequest request) {
    ListOffsetsRequestData req = ((ListOffsetsRequest) request).data();
    short v = request.version();
    ListOffsetsResponseData body = new ListOffsetsResponseData();
    List<CompletableFuture<?>> waits = new ArrayList<>();
    for (ListOffsetsRequestData.ListOffsetsTopic t : req.topics()) {
      ListOffsetsResponseData.ListOffsetsTopicResponse tr = new ListOffsetsResponseData.ListOffsetsTopicResponse().setName(t.name());
      body.topics().add(tr);
      for (ListOffsetsRequestData.ListOffsetsPartition p : t.partitions()) {
        ListOffsetsResponseData.ListOffsetsPartitionResponse pr = new ListOffsetsResponseData.ListOffsetsPartitionResponse()
            .setPartitionIndex(p.partitionIndex()).setTimestamp(-1).setOffset(-1).setLeaderEpoch(-1);
        tr.partitions().add(pr);
        PartitionLookup.Found found = lookup.find(t.name(), p.partitionIndex(), v >= 4 ? p.currentLeaderEpoch() : -1);
        if (found.error() != Errors.NONE) {
          pr.setErrorCode(found.error().code());
          continue;
        }
        boolean committed = v >= 2 && req.isolationLevel() == org.apache.kafka.common.IsolationLevel.READ_COMMITTED.id();
        waits.add(resolve(found.log(), p.timestamp(), committed).handle((r, e) -> {
          if (e != null) {
            pr.setErrorCode(ErrorMapping.toErrors(e).code());
          } else if (r != null) {
            pr.setOffset(r[0]).setTimestamp(r[1]);
            if (v >= 4) { // LeaderEpoch is not ignorable below v4: setting it would fail the response
              pr.setLeaderEpoch(r[0] >= 0 ? found.log().epochForOffset(r[0]) : -1);
            }
          }
          return null;
        }));
      }
    }
    return CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new)).thenApply(x -> body);
  }

  private static CompletableFuture<long[]> resolve(PartitionLog log, long timestamp, boolean committed) {
    if (timestamp == -1) {
      return CompletableFuture.completedFuture(new long[] {committed ? log.lastStableOffset() : log.highWatermark(), -1});
    }
    if (timestamp == -5) {
      return CompletableFuture.completedFuture(new long[] {log.highWatermark(), -1});
    }
    if (timestamp == -2 || timestamp == -4) {
      return CompletableFuture.completedFuture(new long[] {log.logStartOffset(), -1});
    }
    if (timestamp == -3) {
      return log.maxTimestampOffset().thenApply(r -> r == null ? new long[] {-1, -1} : r);
    }
    if (timestamp < 0) {
      return CompletableFuture.completedFuture(new long[] {-1, -1});
    }
    return log.offsetForTimestamp(timestamp).thenApply(r -> r == null ? new long[] {-1, -1} : r);
  }
}
