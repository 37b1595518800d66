package io.tidemark.broker.transaction;

import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.protocol.RequestContext;
import io.tidemark.broker.topic.TopicRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData;
import org.apache.kafka.common.message.WriteTxnMarkersResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.WriteTxnMarkersRequest;

/**
 * WriteTxnMarkers (v1): writes each marker into the partitions named, which must be led here
 * (UNKNOWN_TOPIC_OR_PARTITION for a partition that does not exist, NOT_LEADER_OR_FOLLOWER for one
 * led elsewhere). Sent by the transaction coordinators of other brokers and by
 * {@code Admin.abortTransaction} ({@code kafka-transactions abort}). Stateless.
 */
public final class WriteTxnMarkersHandler implements ApiHandler {

  private final TopicRegistry registry;
  private final LocalMarkers markers;

  public WriteTxnMarkersHandler(TopicRegistry registry, LocalMarkers markers) {
    this.registry = registry;
    this.markers = markers;
  }

  @Override
  public CompletableFuture<ApiMessage> handle(RequestContext context, AbstractRequest request) {
    WriteTxnMarkersRequestData req = ((WriteTxnMarkersRequest) request).data();
    WriteTxnMarkersResponseData body = new WriteTxnMarkersResponseData();
    List<CompletableFuture<?>> waits = new ArrayList<>();
    for (WriteTxnMarkersRequestData.WritableTxnMarker m : req.markers()) {
      WriteTxnMarkersResponseData.WritableTxnMarkerResult mr = new WriteTxnMarkersResponseData.WritableTxnMarkerResult()
          .setProducerId(m.producerId());
      body.markers().add(mr);
      for (WriteTxnMarkersRequestData.WritableTxnMarkerTopic t : m.topics()) {
        WriteTxnMarkersResponseData.WritableTxnMarkerTopicResult tr = new WriteTxnMarkersResponseData.WritableTxnMarkerTopicResult()
            .setName(t.name());
        mr.topics().add(tr);
        for (int p : t.partitionIndexes()) {
          WriteTxnMarkersResponseData.WritableTxnMarkerPartitionResult pr =
              new WriteTxnMarkersResponseData.WritableTxnMarkerPartitionResult().setPartitionIndex(p);
          tr.partitions().add(pr);
          boolean exists = registry.topic(t.name()).map(ti -> p >= 0 && p < ti.partitions().size()).orElse(false);
          if (!exists) {
            pr.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
            continue;
          }
          waits.add(markers.write(new TopicPartition(t.name(), p), m.producerId(), m.producerEpoch(), m.coordinatorEpoch(),
              m.transactionResult()).thenAccept(e -> pr.setErrorCode(e.code())));
        }
      }
    }
    return CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new)).thenApply(x -> body);
  }
}
