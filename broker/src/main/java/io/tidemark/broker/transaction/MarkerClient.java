package io.tidemark.broker.transaction;

import io.tidemark.broker.cluster.InterBrokerClient;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData;
import org.apache.kafka.common.message.WriteTxnMarkersResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.WriteTxnMarkersRequest;
import org.apache.kafka.common.requests.WriteTxnMarkersResponse;

/**
 * Sends transaction markers to the broker leading a partition, over the Kafka protocol as Kafka's
 * coordinator does: one WriteTxnMarkers request per marker, through the {@link InterBrokerClient}
 * of the transaction coordinator, so that the marker travels on the other broker's inter-broker
 * listener with that listener's TLS and SASL settings (versions negotiated, connections kept and
 * bounded there). Every failure answers a retriable error, never a guess about the outcome (a
 * marker written twice is harmless). Stateless apart from the client it sends with.
 */
final class MarkerClient {

  private final InterBrokerClient client;

  MarkerClient(InterBrokerClient client) {
    this.client = client;
  }

  /** Writes one marker on broker {@code nodeId}; completes with the partition's error (NONE when written). */
  CompletableFuture<Errors> send(int nodeId, TopicPartition tp, long producerId, short producerEpoch, int coordinatorEpoch,
      boolean commit) {
    WriteTxnMarkersRequestData data = new WriteTxnMarkersRequestData();
    data.markers().add(new WriteTxnMarkersRequestData.WritableTxnMarker().setProducerId(producerId).setProducerEpoch(producerEpoch)
        .setTransactionResult(commit).setCoordinatorEpoch(coordinatorEpoch)
        .setTopics(List.of(new WriteTxnMarkersRequestData.WritableTxnMarkerTopic().setName(tp.topic())
            .setPartitionIndexes(List.of(tp.partition())))));
    return client.send(nodeId, new WriteTxnMarkersRequest.Builder(data)).handle((response, e) -> {
      if (e != null) {
        return Errors.NETWORK_EXCEPTION; // not sent, lost, or timed out: the coordinator sends it again
      }
      WriteTxnMarkersResponseData parsed = ((WriteTxnMarkersResponse) response).data();
      for (WriteTxnMarkersResponseData.WritableTxnMarkerResult m : parsed.markers()) {
        for (WriteTxnMarkersResponseData.WritableTxnMarkerTopicResult t : m.topics()) {
          for (WriteTxnMarkersResponseData.WritableTxnMarkerPartitionResult p : t.partitions()) {
            return Errors.forCode(p.errorCode());
          }
        }
      }
      return Errors.UNKNOWN_SERVER_ERROR;
    });
  }
}
