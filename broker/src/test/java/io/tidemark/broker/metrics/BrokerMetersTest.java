package io.tidemark.broker.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tidemark.broker.protocol.ResponseEncoder;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

/** Unit tests of the broker's meters: bounds (topic cap, lag caps), error counting of any API, and the lag arithmetic. */
class BrokerMetersTest {

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @Test
  void topicsBeyondTheCapShareOtherAndADeletedTopicLosesItsSeries() {
    // Goal: at most maxTopics topics get their own series; the rest count under _other; retainTopics drops deleted ones.
    BrokerMeters meters = new BrokerMeters(registry, 2);
    meters.topic("a").produced(10, 1);
    meters.topic("b").produced(20, 2);
    meters.topic("c").produced(30, 3);
    meters.topic("d").produced(40, 4);
    assertThat(registry.get("tidemark.kafka.produced.bytes").tag("topic", "a").counter().count()).isEqualTo(10);
    assertThat(registry.get("tidemark.kafka.produced.records").tag("topic", BrokerMeters.OTHER_TOPIC).counter().count())
        .isEqualTo(7);
    assertThat(registry.find("tidemark.kafka.produced.bytes").tag("topic", "c").counter()).isNull();

    meters.retainTopics(t -> !t.equals("a"));
    assertThat(registry.find("tidemark.kafka.produced.bytes").tag("topic", "a").counter()).isNull();
    meters.topic("e").produced(5, 1); // a slot is free again
    assertThat(registry.get("tidemark.kafka.produced.bytes").tag("topic", "e").counter().count()).isEqualTo(5);
  }

  @Test
  void errorsAreCountedPerPartitionForProduceAndFromTheEncodedResponseOfOtherApis() {
    // Goal: Produce's per-partition codes are counted by walking its body; a Metadata response's through kafka-clients.
    BrokerMeters meters = new BrokerMeters(registry, 10);
    ProduceResponseData produce = new ProduceResponseData();
    ProduceResponseData.TopicProduceResponse t = new ProduceResponseData.TopicProduceResponse().setName("x");
    t.partitionResponses().add(new ProduceResponseData.PartitionProduceResponse().setIndex(0)
        .setErrorCode(Errors.NOT_LEADER_OR_FOLLOWER.code()));
    t.partitionResponses().add(new ProduceResponseData.PartitionProduceResponse().setIndex(1)
        .setErrorCode(Errors.NOT_LEADER_OR_FOLLOWER.code()));
    t.partitionResponses().add(new ProduceResponseData.PartitionProduceResponse().setIndex(2));
    produce.responses().add(t);
    meters.api(ApiKeys.PRODUCE).errors((short) 9, produce, ByteBuffer.allocate(0));
    assertThat(registry.get("tidemark.kafka.request.errors").tags("api", "Produce", "error", "NOT_LEADER_OR_FOLLOWER")
        .counter().count()).isEqualTo(2);
    assertThat(registry.find("tidemark.kafka.request.errors").tags("error", "NONE").counter()).isNull();

    MetadataResponseData metadata = new MetadataResponseData();
    metadata.topics().add(new MetadataResponseData.MetadataResponseTopic().setName("missing")
        .setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code()));
    ByteBuffer encoded = ResponseEncoder.encode(ApiKeys.METADATA, (short) 12, 7, metadata);
    meters.api(ApiKeys.METADATA).errors((short) 12, metadata, encoded);
    assertThat(registry.get("tidemark.kafka.request.errors").tags("api", "Metadata", "error", "UNKNOWN_TOPIC_OR_PARTITION")
        .counter().count()).isEqualTo(1);
  }

  @Test
  void requestsAreCountedByVersionAndTimedByPhase() {
    // Goal: one request adds one to its version's counter and its phases add up to the total time.
    BrokerMeters meters = new BrokerMeters(registry, 10);
    meters.api(ApiKeys.FETCH).request((short) 17, 1_000, 3_000, 10_000, 10_500);
    assertThat(registry.get("tidemark.kafka.requests").tags("api", "Fetch", "version", "17").counter().count()).isEqualTo(1);
    assertThat(registry.get("tidemark.kafka.request").tag("api", "Fetch").timer().totalTime(java.util.concurrent.TimeUnit.NANOSECONDS))
        .isEqualTo(9_500);
    assertThat(registry.get("tidemark.kafka.request.phase").tags("api", "Fetch", "phase", "handle").functionTimer()
        .totalTime(java.util.concurrent.TimeUnit.NANOSECONDS)).isEqualTo(7_000);
    assertThat(registry.get("tidemark.kafka.request.phase").tags("api", "Fetch", "phase", "queue").functionTimer()
        .count()).isEqualTo(1);
    meters.api(ApiKeys.API_VERSIONS).request((short) 99, 0, 0, 0, 0);
    assertThat(registry.get("tidemark.kafka.requests").tags("api", "ApiVersions", "version", "unsupported").counter().count())
        .isEqualTo(1);
  }

  @Test
  void lagIsEndMinusCommittedForPartitionsWithAKnownEndAndTheCapsKeepTheLargestGroups() throws Exception {
    // Goal: lag = log end - committed (never negative); unknown ends are left out; the largest groups are kept.
    TopicPartition a0 = new TopicPartition("a", 0);
    TopicPartition a1 = new TopicPartition("a", 1);
    TopicPartition remote = new TopicPartition("elsewhere", 0);
    Map<TopicPartition, Long> ends = Map.of(a0, 100L, a1, 50L);
    Map<String, Map<TopicPartition, Long>> committed = Map.of(
        "small", Map.of(a0, 99L),
        "big", Map.of(a0, 10L, a1, 60L, remote, 0L),
        "mid", Map.of(a1, 20L));
    try (ConsumerLagMeters lag = new ConsumerLagMeters(registry, () -> CompletableFuture.completedFuture(committed),
        tp -> ends.containsKey(tp) ? OptionalLong.of(ends.get(tp)) : OptionalLong.empty(),
        tps -> CompletableFuture.completedFuture(Map.of()), t -> true, () -> {}, 2, 2)) {
      lag.refresh().get();
    }
    assertThat(registry.get("tidemark.kafka.consumer.group.total.lag").tag("group", "big").gauge().value()).isEqualTo(90);
    assertThat(registry.get("tidemark.kafka.consumer.group.total.lag").tag("group", "mid").gauge().value()).isEqualTo(30);
    assertThat(registry.find("tidemark.kafka.consumer.group.total.lag").tag("group", "small").gauge()).isNull();
    assertThat(registry.get("tidemark.kafka.consumer.groups.unexported").gauge().value()).isEqualTo(1);
    assertThat(registry.get("tidemark.kafka.consumer.group.lag").tags("group", "big", "topic", "a", "partition", "0")
        .gauge().value()).isEqualTo(90);
    assertThat(registry.get("tidemark.kafka.consumer.group.lag").tags("group", "big", "topic", "a", "partition", "1")
        .gauge().value()).isZero();
    assertThat(registry.find("tidemark.kafka.consumer.group.lag").tags("group", "mid").gauges())
        .as("the partition cap (2) is used up by the largest group").isEmpty();
    assertThat(registry.find("tidemark.kafka.consumer.group.lag").tags("topic", "elsewhere").gauges()).isEmpty();
    assertThat(registry.get("tidemark.kafka.consumer.group.lag.unknown.partitions").gauge().value()).isEqualTo(1);
  }

  @Test
  void partitionsLedElsewhereTakeTheirLeadersEndsAndAreLeftOutWhileTheirLeaderFails() throws Exception {
    // Goal: remote ends are asked only for partitions not led here, in one lookup; a failed lookup leaves just those out.
    TopicPartition here = new TopicPartition("a", 0);
    TopicPartition there = new TopicPartition("a", 1);
    Map<String, Map<TopicPartition, Long>> committed = Map.of("g", Map.of(here, 4L, there, 3L), "h", Map.of(there, 1L));
    List<Collection<TopicPartition>> asked = new CopyOnWriteArrayList<>();
    AtomicBoolean leaderUp = new AtomicBoolean(true);
    try (ConsumerLagMeters lag = new ConsumerLagMeters(registry, () -> CompletableFuture.completedFuture(committed),
        tp -> tp.equals(here) ? OptionalLong.of(10) : OptionalLong.empty(), tps -> {
          asked.add(List.copyOf(tps));
          return leaderUp.get() ? CompletableFuture.completedFuture(Map.of(there, 8L)) : CompletableFuture.completedFuture(Map.of());
        }, t -> true, () -> {}, 10, 10)) {
      lag.refresh().get();
      assertThat(asked).containsExactly(List.of(there));
      assertThat(partitionLag("g", "a", 0)).isEqualTo(6);
      assertThat(partitionLag("g", "a", 1)).isEqualTo(5);
      assertThat(partitionLag("h", "a", 1)).isEqualTo(7);
      assertThat(registry.get("tidemark.kafka.consumer.group.total.lag").tag("group", "g").gauge().value()).isEqualTo(11);
      assertThat(registry.get("tidemark.kafka.consumer.group.lag.unknown.partitions").gauge().value()).isZero();

      leaderUp.set(false);
      lag.refresh().get();
      assertThat(partitionLag("g", "a", 0)).isEqualTo(6);
      assertThat(registry.find("tidemark.kafka.consumer.group.lag").tags("partition", "1").gauges()).isEmpty();
      assertThat(registry.get("tidemark.kafka.consumer.group.total.lag").tag("group", "g").gauge().value()).isEqualTo(6);
      assertThat(registry.get("tidemark.kafka.consumer.group.lag.unknown.partitions").gauge().value()).isEqualTo(2);
    }
  }

  @Test
  void aDeletedTopicsLagSeriesGoAtTheMetadataChangeWithoutARecomputation() throws Exception {
    // Goal: topicsChanged drops the deleted topic's partition series and its share of the total, with no new computation.
    TopicPartition kept = new TopicPartition("kept", 0);
    TopicPartition deleted = new TopicPartition("gone", 0);
    Set<String> topics = ConcurrentHashMap.newKeySet();
    topics.addAll(List.of("kept", "gone"));
    AtomicInteger computations = new AtomicInteger();
    AtomicInteger housekeeping = new AtomicInteger();
    try (ConsumerLagMeters lag = new ConsumerLagMeters(registry, () -> {
      computations.incrementAndGet();
      return CompletableFuture.completedFuture(Map.of("g", Map.of(kept, 1L, deleted, 2L)));
    }, tp -> OptionalLong.of(10), tps -> CompletableFuture.completedFuture(Map.of()), topics::contains,
        housekeeping::incrementAndGet, 10, 10)) {
      lag.refresh().get();
      assertThat(partitionLag("g", "gone", 0)).isEqualTo(8);
      assertThat(registry.get("tidemark.kafka.consumer.group.total.lag").tag("group", "g").gauge().value()).isEqualTo(17);

      topics.remove("gone");
      lag.topicsChanged();
      await().atMost(Duration.ofSeconds(30)).until(() -> registry.find("tidemark.kafka.consumer.group.lag")
          .tags("topic", "gone").gauges().isEmpty());
      assertThat(registry.get("tidemark.kafka.consumer.group.total.lag").tag("group", "g").gauge().value()).isEqualTo(9);
      assertThat(partitionLag("g", "kept", 0)).isEqualTo(9);
      assertThat(computations).hasValue(1);
      assertThat(housekeeping).hasValue(1); // the topic meters' deleted topics go at the same time
    }
  }

  private double partitionLag(String group, String topic, int partition) {
    return registry.get("tidemark.kafka.consumer.group.lag").tags("group", group, "topic", topic, "partition",
        Integer.toString(partition)).gauge().value();
  }
}
