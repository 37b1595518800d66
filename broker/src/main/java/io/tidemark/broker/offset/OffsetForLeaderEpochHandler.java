package io.tidemark.broker.offset;

import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.protocol.RequestContext;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;

/**
 * OffsetForLeaderEpoch (v2–4): for a requested epoch, the largest epoch not above it in the
 * partition's leader-epoch history and that epoch's end offset (KIP-320 consumer position
 * validation), or -1/-1 when the epoch predates the history.
 */
public final class OffsetForLeaderEpochHandler implements ApiHandler {

  private final PartitionLookup lookup;

  public OffsetForLeaderEpochHandler(PartitionLookup lookup) {
    this.lookup = lookup;
  }

  @Override
  public CompletableFuture<ApiMessage> handle(RequestContext context, AbstractRequest request) {
    OffsetForLeaderEpochRequestData req = ((OffsetsForLeaderEpochRequest) request).data();
    OffsetForLeaderEpochResponseData body = new OffsetForLeaderEpochResponseData();
    for (OffsetForLeaderEpochRequestData.OffsetForLeaderTopic t : req.topics()) {
      OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult tr =
          new OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult().setTopic(t.topic());
      body.topics().add(tr);
      for (OffsetForLeaderEpochRequestData.OffsetForLeaderPartition p : t.partitions()) {
        OffsetForLeaderEpochResponseData.EpochEndOffset pr = new OffsetForLeaderEpochResponseData.EpochEndOffset()
            .setPartition(p.partition()).setLeaderEpoch(-1).setEndOffset(-1);
        tr.partitions().add(pr);
        PartitionLookup.Found found = lookup.find(t.topic(), p.partition(), p.currentLeaderEpoch());
        if (found.error() != Errors.NONE) {
          pr.setErrorCode(found.error().code());
          continue;
        }
        long[] r = found.log().endOffsetForEpoch(p.leaderEpoch());
        pr.setLeaderEpoch((int) r[0]).setEndOffset(r[1]);
      }
    }
    return CompletableFuture.completedFuture(body);
  }
}
