package io.tidemark.broker.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumer-group lag, as the broker that coordinates each group sees it: for every committed
 * offset, the partition's end offset minus the committed offset, never below zero. The end offset
 * is the high watermark (Tidemark acknowledges only durable records, so it is also the log end
 * offset), as Kafka's {@code kafka-consumer-groups.sh --describe} reports lag: read here for a
 * partition led here, asked of its leader for the others ({@link RemoteEndOffsets}: batched
 * ListOffsets over the inter-broker listener, bounded by a timeout).
 *
 * <p>A partition whose end offset is not learned at a computation (its leader is down, slow,
 * answers an error, or there is none) is left out of the per-partition series and of its group's
 * total until a later computation learns it; the count left out is
 * {@code tidemark_kafka_consumer_group_lag_unknown_partitions}. A partition of a deleted topic is
 * left out too, and its series are dropped as soon as this broker's metadata shows the deletion
 * ({@link #topicsChanged}), not only at the next computation.
 *
 * <p>Exported, recomputed every {@code kafka.metrics.consumer.lag.interval.ms} (not on the scrape,
 * which stays cheap): {@code tidemark_kafka_consumer_group_lag{group,topic,partition}},
 * {@code tidemark_kafka_consumer_group_total_lag{group}},
 * {@code tidemark_kafka_consumer_groups_unexported} and
 * {@code tidemark_kafka_consumer_group_lag_unknown_partitions}. Bounded: the {@code maxGroups}
 * groups with the largest total lag are exported (ties by name), and at most {@code maxPartitions}
 * partition series over all of them, taken group by group in that order.
 *
 * <p>Threading: one scheduler thread owns the computation, the last computed lags and the gauges'
 * rows (it waits for the remote end offsets, which complete within their timeout); a scrape reads
 * the last rows from any thread; the metadata thread only enqueues {@link #topicsChanged}.
 */
public final class ConsumerLagMeters implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ConsumerLagMeters.class);

  private final Supplier<CompletableFuture<Map<String, Map<TopicPartition, Long>>>> committed;
  private final Function<TopicPartition, OptionalLong> logEnd;
  private final Function<Collection<TopicPartition>, CompletableFuture<Map<TopicPartition, Long>>> remoteEnds;
  private final Predicate<String> topicExists;
  private final Runnable alsoEachRefresh;
  private final int maxGroups;
  private final int maxPartitions;
  private final MultiGauge partitionLag;
  private final MultiGauge groupLag;
  private final AtomicLong unexported = new AtomicLong();
  private final AtomicLong unknown = new AtomicLong();
  private final AtomicBoolean topicCheckQueued = new AtomicBoolean();
  /** The lags of the last computation, every group and every partition with a known end. Owner thread. */
  private List<GroupLag> last = List.of();
  private final ScheduledExecutorService owner = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "consumer-lag-meters");
    t.setDaemon(true);
    return t;
  });

  /** One group's lag: its partitions with a known end and its total over them. */
  record GroupLag(String group, long total, Map<TopicPartition, Long> partitions) {}

  /**
   * @param committed the committed offsets of the groups coordinated here, by group
   * @param logEnd a partition's log end offset, empty when it is not led here
   * @param remoteEnds the end offsets of partitions not led here, as their leaders answer (missing
   *     when not learned); must complete, within a bounded time
   * @param topicExists whether a topic exists (not deleted) in this broker's metadata
   * @param alsoEachRefresh other housekeeping of the broker's meters run on the same schedule and
   *     on every metadata change (the topic meters' deleted topics)
   */
  public ConsumerLagMeters(MeterRegistry registry, Supplier<CompletableFuture<Map<String, Map<TopicPartition, Long>>>> committed,
      Function<TopicPartition, OptionalLong> logEnd,
      Function<Collection<TopicPartition>, CompletableFuture<Map<TopicPartition, Long>>> remoteEnds,
      Predicate<String> topicExists, Runnable alsoEachRefresh, int maxGroups, int maxPartitions) {
    this.committed = committed;
    this.logEnd = logEnd;
    this.remoteEnds = remoteEnds;
    this.topicExists = topicExists;
    this.alsoEachRefresh = alsoEachRefresh;
    this.maxGroups = maxGroups;
    this.maxPartitions = maxPartitions;
    this.partitionLag = MultiGauge.builder("tidemark.kafka.consumer.group.lag")
        .description("Records of a partition not yet consumed by a group: high watermark minus committed offset")
        .register(registry);
    this.groupLag = MultiGauge.builder("tidemark.kafka.consumer.group.total.lag")
        .description("A group's lag summed over its partitions with a committed offset and a known end offset").register(registry);
    Gauge.builder("tidemark.kafka.consumer.groups.unexported", unexported, AtomicLong::get)
        .description("Groups coordinated here whose lag is not exported (beyond kafka.metrics.consumer.lag.max.groups)")
        .register(registry);
    Gauge.builder("tidemark.kafka.consumer.group.lag.unknown.partitions", unknown, AtomicLong::get)
        .description("Partitions with a committed offset left out of the lag at the last computation: their end offset "
            + "was not learned (leader down, slow or without a leader)")
        .register(registry);
  }

  /** Recomputes every {@code intervalMs} from now on. */
  public void start(long intervalMs) {
    owner.scheduleWithFixedDelay(this::refreshQuietly, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
  }

  /**
   * The topics may have changed (the metadata listener calls it; cheap, any thread): drops the
   * series of deleted topics now, on the owner thread, without waiting for the next computation.
   */
  public void topicsChanged() {
    if (!topicCheckQueued.compareAndSet(false, true)) {
      return; // a check is queued and will see this change too
    }
    try {
      owner.execute(() -> {
        topicCheckQueued.set(false);
        try {
          alsoEachRefresh.run();
          dropDeletedTopics();
        } catch (RuntimeException e) {
          log.debug("deleted topics' lag series not dropped this time: {}", e.toString());
        }
      });
    } catch (RejectedExecutionException e) {
      topicCheckQueued.set(false); // closed
    }
  }

  private void refreshQuietly() {
    try {
      alsoEachRefresh.run();
      refreshHere();
    } catch (Exception e) {
      log.debug("consumer lag not recomputed this time: {}", e.toString());
    }
  }

  /** Recomputes the lag now on the owner thread (the scheduler's work; tests call it too). */
  CompletableFuture<Void> refresh() {
    return CompletableFuture.runAsync(() -> {
      try {
        refreshHere();
      } catch (Exception e) {
        throw new java.util.concurrent.CompletionException(e);
      }
    }, owner);
  }

  /** Owner thread. */
  private void refreshHere() throws Exception {
    Map<String, Map<TopicPartition, Long>> offsets = committed.get().get(60, TimeUnit.SECONDS);
    Map<TopicPartition, Long> ends = new HashMap<>();
    Set<TopicPartition> elsewhere = new HashSet<>();
    long committedPartitions = 0;
    for (Map<TopicPartition, Long> byPartition : offsets.values()) {
      for (TopicPartition tp : byPartition.keySet()) {
        if (!topicExists.test(tp.topic())) {
          continue;
        }
        committedPartitions++;
        if (!ends.containsKey(tp) && !elsewhere.contains(tp)) {
          OptionalLong end = logEnd.apply(tp);
          if (end.isPresent()) {
            ends.put(tp, end.getAsLong());
          } else {
            elsewhere.add(tp);
          }
        }
      }
    }
    if (!elsewhere.isEmpty()) {
      ends.putAll(remoteEnds.apply(elsewhere).get(60, TimeUnit.SECONDS)); // completes within the lookup's own timeout
    }
    List<GroupLag> lags = new ArrayList<>();
    long known = 0;
    for (Map.Entry<String, Map<TopicPartition, Long>> g : offsets.entrySet()) {
      GroupLag lag = lagOf(g.getKey(), g.getValue(), ends);
      known += lag.partitions().size();
      lags.add(lag);
    }
    unknown.set(committedPartitions - known);
    publish(lags);
  }

  /** Drops the lags of deleted topics from the last computation and republishes, if there were any. Owner thread. */
  private void dropDeletedTopics() {
    boolean any = last.stream().anyMatch(g -> g.partitions().keySet().stream().anyMatch(tp -> !topicExists.test(tp.topic())));
    if (!any) {
      return;
    }
    List<GroupLag> kept = new ArrayList<>();
    for (GroupLag g : last) {
      kept.add(existing(g.group(), g.partitions()));
    }
    publish(kept);
  }

  /** Owner thread. */
  private void publish(List<GroupLag> lags) {
    lags.sort(Comparator.comparingLong(GroupLag::total).reversed().thenComparing(GroupLag::group));
    last = lags;
    List<MultiGauge.Row<?>> groupRows = new ArrayList<>();
    List<MultiGauge.Row<?>> partitionRows = new ArrayList<>();
    int exported = Math.min(maxGroups, lags.size());
    for (GroupLag g : lags.subList(0, exported)) {
      groupRows.add(MultiGauge.Row.of(Tags.of("group", g.group()), g.total()));
      for (Map.Entry<TopicPartition, Long> p : g.partitions().entrySet()) {
        if (partitionRows.size() >= maxPartitions) {
          break;
        }
        partitionRows.add(MultiGauge.Row.of(Tags.of("group", g.group(), "topic", p.getKey().topic(),
            "partition", Integer.toString(p.getKey().partition())), p.getValue()));
      }
    }
    groupLag.register(groupRows, true);
    partitionLag.register(partitionRows, true);
    unexported.set(lags.size() - exported);
  }

  /** A group's lag over its partitions of existing topics with a known end offset. */
  private GroupLag lagOf(String group, Map<TopicPartition, Long> committedOffsets, Map<TopicPartition, Long> ends) {
    Map<TopicPartition, Long> lags = new HashMap<>();
    committedOffsets.forEach((tp, offset) -> {
      Long end = ends.get(tp);
      if (end != null) {
        lags.put(tp, Math.max(0, end - offset));
      }
    });
    return existing(group, lags);
  }

  /** A group's lag over the partitions of {@code lags} whose topic exists, in topic and partition order. */
  private GroupLag existing(String group, Map<TopicPartition, Long> lags) {
    Map<TopicPartition, Long> kept = new TreeMap<>(Comparator.comparing(TopicPartition::topic)
        .thenComparingInt(TopicPartition::partition));
    long total = 0;
    for (Map.Entry<TopicPartition, Long> e : lags.entrySet()) {
      if (topicExists.test(e.getKey().topic())) {
        kept.put(e.getKey(), e.getValue());
        total += e.getValue();
      }
    }
    return new GroupLag(group, total, kept);
  }

  @Override
  public void close() {
    owner.shutdownNow();
  }
}
