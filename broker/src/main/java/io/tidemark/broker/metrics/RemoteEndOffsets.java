package io.tidemark.broker.metrics;

import io.tidemark.broker.cluster.InterBrokerClient;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsTopic;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The end offsets of partitions led by other brokers, for the consumer-lag meters: one ListOffsets
 * request ({@code LATEST}, {@code READ_UNCOMMITTED}: the high watermark, what Kafka's
 * {@code kafka-consumer-groups.sh --describe} and {@code Admin.listOffsets(OffsetSpec.latest())}
 * use for lag) per leader and per {@value #MAX_PARTITIONS_PER_REQUEST} partitions, sent over the
 * leaders' inter-broker listener by an {@link InterBrokerClient} of its own (so a slow leader
 * never holds up share-group traffic, and the other way round).
 *
 * <p><b>Bounds:</b> at most {@value #MAX_PARTITIONS_PER_LOOKUP} partitions per lookup (those
 * beyond stay unknown); every lookup completes within {@code timeoutMs}, whatever the leaders do.
 *
 * <p><b>Outcomes:</b> the answer holds the partitions whose leader answered in time without an
 * error; a partition without a live leader, whose leader failed, timed out, or answered an error
 * (NOT_LEADER_OR_FOLLOWER while leadership moves, UNKNOWN_TOPIC_OR_PARTITION after a deletion) is
 * missing from it. The future never fails.
 *
 * <p>Stateless between lookups; called from the lag meters' thread, completed on the
 * inter-broker client's thread (or the JDK's delayer thread on timeout).
 */
public final class RemoteEndOffsets implements Function<Collection<TopicPartition>, CompletableFuture<Map<TopicPartition, Long>>> {

  private static final Logger log = LoggerFactory.getLogger(RemoteEndOffsets.class);
  static final int MAX_PARTITIONS_PER_REQUEST = 1000;
  static final int MAX_PARTITIONS_PER_LOOKUP = 100_000;

  private final int selfId;
  private final Function<TopicPartition, OptionalInt> leaderOf;
  private final InterBrokerClient network;
  private final long timeoutMs;

  /**
   * @param leaderOf a partition's leader as this broker's metadata says, empty without one
   * @param network the client to the other brokers' inter-broker listeners (owned by the caller)
   */
  public RemoteEndOffsets(int selfId, Function<TopicPartition, OptionalInt> leaderOf, InterBrokerClient network, long timeoutMs) {
    this.selfId = selfId;
    this.leaderOf = leaderOf;
    this.network = network;
    this.timeoutMs = timeoutMs;
  }

  @Override
  public CompletableFuture<Map<TopicPartition, Long>> apply(Collection<TopicPartition> partitions) {
    Map<Integer, List<TopicPartition>> byLeader = new HashMap<>();
    int asked = 0;
    for (TopicPartition tp : partitions) {
      OptionalInt leader = leaderOf.apply(tp);
      if (leader.isEmpty() || leader.getAsInt() == selfId || asked >= MAX_PARTITIONS_PER_LOOKUP) {
        continue; // led here but not open yet (opening or closing), or no leader: unknown this time
      }
      asked++;
      byLeader.computeIfAbsent(leader.getAsInt(), l -> new ArrayList<>()).add(tp);
    }
    List<CompletableFuture<Map<TopicPartition, Long>>> answers = new ArrayList<>();
    byLeader.forEach((leader, tps) -> {
      for (int from = 0; from < tps.size(); from += MAX_PARTITIONS_PER_REQUEST) {
        answers.add(ask(leader, tps.subList(from, Math.min(tps.size(), from + MAX_PARTITIONS_PER_REQUEST))));
      }
    });
    return CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).thenApply(v -> {
      Map<TopicPartition, Long> out = new HashMap<>();
      answers.forEach(a -> out.putAll(a.join()));
      return out;
    });
  }

  /** One ListOffsets request to {@code leader}; never fails, empty on any failure, done within the timeout. */
  private CompletableFuture<Map<TopicPartition, Long>> ask(int leader, List<TopicPartition> tps) {
    Map<String, ListOffsetsTopic> topics = new LinkedHashMap<>();
    for (TopicPartition tp : tps) {
      topics.computeIfAbsent(tp.topic(), t -> new ListOffsetsTopic().setName(t)).partitions().add(new ListOffsetsPartition()
          .setPartitionIndex(tp.partition()).setTimestamp(ListOffsetsRequest.LATEST_TIMESTAMP));
    }
    ListOffsetsRequest.Builder request = ListOffsetsRequest.Builder.forConsumer(false, IsolationLevel.READ_UNCOMMITTED)
        .setTargetTimes(new ArrayList<>(topics.values())).setTimeoutMs((int) timeoutMs);
    return network.send(leader, request).handle((r, e) -> {
      Map<TopicPartition, Long> out = new HashMap<>();
      if (e != null) {
        log.debug("end offsets of {} partitions not learned from broker {}: {}", tps.size(), leader, e.toString());
        return out;
      }
      for (ListOffsetsResponseData.ListOffsetsTopicResponse t : ((ListOffsetsResponse) r).data().topics()) {
        for (ListOffsetsResponseData.ListOffsetsPartitionResponse p : t.partitions()) {
          if (p.errorCode() == Errors.NONE.code() && p.offset() >= 0) {
            out.put(new TopicPartition(t.name(), p.partitionIndex()), p.offset());
          }
        }
      }
      return out;
    }).completeOnTimeout(Map.of(), timeoutMs, TimeUnit.MILLISECONDS);
  }
}
