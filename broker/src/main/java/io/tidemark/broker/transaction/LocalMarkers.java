package io.tidemark.broker.transaction;

import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.protocol.ErrorMapping;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;

/**
 * Writes transaction markers into partitions led here: the same path for the local coordinator
 * and for WriteTxnMarkers from another broker's coordinator (or {@code kafka-transactions abort}).
 * A marker in a {@code __consumer_offsets} partition also completes the transaction's pending
 * offsets in the group coordinator once the marker is durable (as Kafka does), so the offsets of
 * {@code sendOffsetsToTransaction} become visible exactly with the commit. Stateless; callable
 * from any thread.
 */
public final class LocalMarkers {

  /** The group coordinator's side of a marker in its offsets topic. */
  @FunctionalInterface
  public interface OffsetsCompletion {
    void complete(int offsetsPartition, long producerId, boolean commit);
  }

  private final java.util.function.Function<TopicPartition, Optional<PartitionLog>> partitions;
  private final String offsetsTopic;
  private final OffsetsCompletion offsets;

  public LocalMarkers(java.util.function.Function<TopicPartition, Optional<PartitionLog>> partitions, String offsetsTopic,
      OffsetsCompletion offsets) {
    this.partitions = partitions;
    this.offsetsTopic = offsetsTopic;
    this.offsets = offsets;
  }

  /** Writes one marker; completes with NONE once durable, or with the Kafka error (NOT_LEADER_OR_FOLLOWER when not led here). */
  public CompletableFuture<Errors> write(TopicPartition tp, long producerId, short producerEpoch, int coordinatorEpoch, boolean commit) {
    Optional<PartitionLog> log = partitions.apply(tp);
    if (log.isEmpty()) {
      return CompletableFuture.completedFuture(Errors.NOT_LEADER_OR_FOLLOWER);
    }
    return log.get().appendMarker(producerId, producerEpoch, coordinatorEpoch, commit).handle((r, e) -> {
      if (e != null) {
        return ErrorMapping.toErrors(e);
      }
      if (tp.topic().equals(offsetsTopic)) {
        offsets.complete(tp.partition(), producerId, commit);
      }
      return Errors.NONE;
    });
  }
}
