package io.tidemark.broker.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumer-group lag, as the broker that coordinates each group sees it: for every committed
 * offset, the partition's log end offset (its high watermark: Tidemark acknowledges only durable
 * records, so the two are one) minus the committed offset, never below zero. A partition whose end
 * offset this broker cannot know (led by another broker) is left out of the per-partition series
 * and of its group's total.
 *
 * <p>Exported, recomputed every {@code kafka.metrics.consumer.lag.interval.ms} (not on the scrape,
 * which stays cheap): {@code tidemark_kafka_consumer_group_lag{group,topic,partition}},
 * {@code tidemark_kafka_consumer_group_total_lag{group}} and
 * {@code tidemark_kafka_consumer_groups_unexported}. Bounded: the {@code maxGroups} groups with the
 * largest total lag are exported (ties by name), and at most {@code maxPartitions} partition series
 * over all of them, taken group by group in that order.
 *
 * <p>Threading: one scheduler thread owns the computation and replaces the gauges' rows; a scrape
 * reads the last rows from any thread.
 */
public final class ConsumerLagMeters implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ConsumerLagMeters.class);

  private final Supplier<CompletableFuture<Map<String, Map<TopicPartition, Long>>>> committed;
  private final Function<TopicPartition, OptionalLong> logEnd;
  private final Runnable alsoEachRefresh;
  private final int maxGroups;
  private final int maxPartitions;
  private final MultiGauge partitionLag;
  private final MultiGauge groupLag;
  private final AtomicLong unexported = new AtomicLong();
  private final ScheduledExecutorService owner = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "consumer-lag-meters");
    t.setDaemon(true);
    return t;
  });

  /** One group's lag: its exported partitions and its total over every partition with a known end. */
  record GroupLag(String group, long total, Map<TopicPartition, Long> partitions) {}

  /**
   * @param committed the committed offsets of the groups coordinated here, by group
   * @param logEnd a partition's log end offset, empty when it is not led here
   * @param alsoEachRefresh other housekeeping of the broker's meters run on the same schedule
   */
  public ConsumerLagMeters(MeterRegistry registry, Supplier<CompletableFuture<Map<String, Map<TopicPartition, Long>>>> committed,
      Function<TopicPartition, OptionalLong> logEnd, Runnable alsoEachRefresh, int maxGroups, int maxPartitions) {
    this.committed = committed;
    this.logEnd = logEnd;
    this.alsoEachRefresh = alsoEachRefresh;
    this.maxGroups = maxGroups;
    this.maxPartitions = maxPartitions;
    this.partitionLag = MultiGauge.builder("tidemark.kafka.consumer.group.lag")
        .description("Records of a partition not yet consumed by a group: log end offset minus committed offset")
        .register(registry);
    this.groupLag = MultiGauge.builder("tidemark.kafka.consumer.group.total.lag")
        .description("A group's lag summed over its partitions with a committed offset").register(registry);
    Gauge.builder("tidemark.kafka.consumer.groups.unexported", unexported, AtomicLong::get)
        .description("Groups coordinated here whose lag is not exported (beyond kafka.metrics.consumer.lag.max.groups)")
        .register(registry);
  }

  /** Recomputes every {@code intervalMs} from now on. */
  public void start(long intervalMs) {
    owner.scheduleWithFixedDelay(this::refreshQuietly, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
  }

  private void refreshQuietly() {
    try {
      alsoEachRefresh.run();
      refresh().get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      log.debug("consumer lag not recomputed this time: {}", e.toString());
    }
  }

  /** Recomputes the lag now (the scheduler's work; tests call it too). */
  CompletableFuture<Void> refresh() {
    return committed.get().thenAccept(this::publish);
  }

  private void publish(Map<String, Map<TopicPartition, Long>> offsets) {
    List<GroupLag> lags = new ArrayList<>();
    offsets.forEach((group, byPartition) -> lags.add(lagOf(group, byPartition)));
    lags.sort(Comparator.comparingLong(GroupLag::total).reversed().thenComparing(GroupLag::group));
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

  private GroupLag lagOf(String group, Map<TopicPartition, Long> byPartition) {
    Map<TopicPartition, Long> lags = new java.util.TreeMap<>(Comparator.comparing(TopicPartition::topic)
        .thenComparingInt(TopicPartition::partition));
    long total = 0;
    for (Map.Entry<TopicPartition, Long> e : byPartition.entrySet()) {
      OptionalLong end = logEnd.apply(e.getKey());
      if (end.isPresent()) {
        long lag = Math.max(0, end.getAsLong() - e.getValue());
        lags.put(e.getKey(), lag);
        total += lag;
      }
    }
    return new GroupLag(group, total, lags);
  }

  @Override
  public void close() {
    owner.shutdownNow();
  }
}
