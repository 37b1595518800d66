package io.tidemark.broker.partition;

import io.tidemark.broker.protocol.ApiHandler;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.common.requests.DescribeProducersRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;
import org.apache.kafka.common.requests.WriteTxnMarkersRequest;

/**
 * Lets a request that names partitions still opening on this broker (a restart, a move or a
 * failover to it, a topic just created) wait for their opens, at most {@code kafka.produce.opening.wait.ms},
 * before its handler looks them up; then it is handled as usual (a partition whose open failed or
 * took longer is answered NOT_LEADER_OR_FOLLOWER as before). Metadata names this broker as the
 * leader of a partition while it opens here, so every request type a client sends on that
 * answer must wait for the open the same way, not only produce: Fetch, ListOffsets,
 * OffsetForLeaderEpoch, DeleteRecords, DescribeProducers and WriteTxnMarkers. (Produce waits per
 * partition, in {@code ProduceHandler}, so that one producer's batches keep their order.) A request
 * naming no opening partition costs one lookup per partition and is handled at once, on the
 * same thread. After a wait the handler runs on the thread that ended the open (or on the timer's,
 * after the longest wait), in the order the requests arrived.
 */
public final class OpeningGate {
  private final Partitions partitions;
  private final Function<Uuid, String> topicNames;
  private final long maxWaitMs;

  /**
   * @param topicNames a topic's name by id (null when unknown), for requests that name topics by id
   * @param maxWaitMs longest wait of a request for its opening partitions; 0: none (the gate passes everything on)
   */
  public OpeningGate(Partitions partitions, Function<Uuid, String> topicNames, long maxWaitMs) {
    this.partitions = partitions;
    this.topicNames = topicNames;
    this.maxWaitMs = maxWaitMs;
  }

  /** {@code api}, whose requests first wait for their partitions opening here. */
  public ApiHandler gate(ApiHandler api) {
    if (maxWaitMs <= 0) {
      return api;
    }
    return (context, request) -> {
      CompletableFuture<Void> opened = partitions.whenOpened(named(request));
      if (opened == null) {
        return api.handle(context, request);
      }
      return opened.completeOnTimeout(null, maxWaitMs, TimeUnit.MILLISECONDS)
          .thenCompose(x -> api.handle(context, request));
    };
  }

  /** The partitions a request names (none for a request type without partitions). */
  List<TopicPartition> named(AbstractRequest request) {
    List<TopicPartition> tps = new ArrayList<>();
    switch (request) {
      case FetchRequest r -> r.data().topics().forEach(t -> {
        String name = r.version() >= 13 ? topicNames.apply(t.topicId()) : t.topic();
        if (name != null) {
          t.partitions().forEach(p -> tps.add(new TopicPartition(name, p.partition())));
        }
      });
      case ListOffsetsRequest r -> r.data().topics().forEach(t -> t.partitions()
          .forEach(p -> tps.add(new TopicPartition(t.name(), p.partitionIndex()))));
      case OffsetsForLeaderEpochRequest r -> r.data().topics().forEach(t -> t.partitions()
          .forEach(p -> tps.add(new TopicPartition(t.topic(), p.partition()))));
      case DeleteRecordsRequest r -> r.data().topics().forEach(t -> t.partitions()
          .forEach(p -> tps.add(new TopicPartition(t.name(), p.partitionIndex()))));
      case DescribeProducersRequest r -> r.data().topics().forEach(t -> t.partitionIndexes()
          .forEach(p -> tps.add(new TopicPartition(t.name(), p))));
      case WriteTxnMarkersRequest r -> r.data().markers().forEach(m -> m.topics().forEach(t -> t.partitionIndexes()
          .forEach(p -> tps.add(new TopicPartition(t.name(), p)))));
      default -> {
      }
    }
    return tps;
  }
}
