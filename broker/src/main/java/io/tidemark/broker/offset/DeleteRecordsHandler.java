package io.tidemark.broker.offset;

import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.protocol.ErrorMapping;
import io.tidemark.broker.protocol.RequestContext;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteRecordsResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DeleteRecordsRequest;

/** DeleteRecords (v0–2): trims each partition's data stream to the given offset (-1: high watermark). */
public final class DeleteRecordsHandler implements ApiHandler {

  private final PartitionLookup lookup;

  public DeleteRecordsHandler(PartitionLookup lookup) {
    this.lookup = lookup;
  }

  @Override
  public CompletableFuture<ApiMessage> handle(RequestContext context, AbstractRequest request) {
    DeleteRecordsRequestData req = ((DeleteRecordsRequest) request).data();
    DeleteRecordsResponseData body = new DeleteRecordsResponseData();
    List<CompletableFuture<?>> waits = new ArrayList<>();
    for (DeleteRecordsRequestData.DeleteRecordsTopic t : req.topics()) {
      DeleteRecordsResponseData.DeleteRecordsTopicResult tr = new DeleteRecordsResponseData.DeleteRecordsTopicResult().setName(t.name());
      body.topics().add(tr);
      for (DeleteRecordsRequestData.DeleteRecordsPartition p : t.partitions()) {
        DeleteRecordsResponseData.DeleteRecordsPartitionResult pr = new DeleteRecordsResponseData.DeleteRecordsPartitionResult()
            .setPartitionIndex(p.partitionIndex()).setLowWatermark(-1);
        tr.partitions().add(pr);
        PartitionLookup.Found found = lookup.find(t.name(), p.partitionIndex(), -1);
        if (found.error() != Errors.NONE) {
          pr.setErrorCode(found.error().code());
          continue;
        }
        waits.add(found.log().deleteRecordsBefore(p.offset()).handle((low, e) -> {
          if (e != null) {
            pr.setErrorCode(ErrorMapping.toErrors(e).code());
          } else {
            pr.setLowWatermark(low);
          }
          return null;
        }));
      }
    }
    return CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new)).thenApply(x -> body);
  }
}
