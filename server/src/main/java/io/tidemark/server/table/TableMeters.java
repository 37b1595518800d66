package io.tidemark.server.table;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.tidemark.table.maintenance.MaintenanceReport;
import io.tidemark.table.node.TableTopicStatus;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * The Prometheus meters of the table topics, per topic ({@code topic} tag) and per partition led
 * here ({@code partition} tag): commits, last commit time, files, bytes and rows written, bad
 * records, paused, and the commit lag in records and seconds (docs/metrics.md). Each meter reads the topic's
 * current status when scraped. Owned by the topic watcher thread (bind/unbind); scrapes read from
 * any thread.
 */
final class TableMeters {

  private final MeterRegistry registry;
  private final Function<String, Optional<TableTopicStatus>> statuses;
  private final Map<String, List<Meter>> byTopic = new HashMap<>();
  private final Map<String, Set<Integer>> partitionsByTopic = new HashMap<>();

  TableMeters(MeterRegistry registry, Function<String, Optional<TableTopicStatus>> statuses) {
    this.registry = registry;
    this.statuses = statuses;
  }

  /** Registers the topic's meters (again when its partitions changed). */
  void bind(String topic, Set<Integer> partitions) {
    if (partitions.equals(partitionsByTopic.get(topic))) {
      return;
    }
    unbind(topic);
    List<Meter> meters = new ArrayList<>();
    Tags tags = Tags.of("topic", topic);
    meters.add(counter("tidemark.table.commits", "Snapshots committed", tags, topic, TableTopicStatus::commits));
    meters.add(counter("tidemark.table.files.written", "Data files committed", tags, topic, TableTopicStatus::dataFiles));
    meters.add(counter("tidemark.table.bytes.written", "Bytes of data files committed", tags, topic,
        TableTopicStatus::bytesWritten));
    meters.add(counter("tidemark.table.rows.written", "Rows committed", tags, topic, TableTopicStatus::rowsWritten));
    meters.add(counter("tidemark.table.bad.records", "Records skipped as bad (errors.tolerance)", tags, topic,
        TableTopicStatus::badRecords));
    meters.add(gauge("tidemark.table.last.commit.timestamp", "seconds", "Time of the last commit, in seconds since the "
        + "epoch (NaN: none yet)", tags, topic, s -> s.lastCommitMs() < 0 ? Double.NaN : s.lastCommitMs() / 1000.0));
    meters.add(gauge("tidemark.table.paused", null, "1 while a partition is paused on a bad record", tags, topic,
        s -> s.state().equals("PAUSED") ? 1 : 0));
    bindMaintenance(meters, tags, topic);
    for (int partition : partitions) {
      Tags ptags = tags.and("partition", Integer.toString(partition));
      meters.add(gauge("tidemark.table.commit.lag.records", null, "Records of the partition not yet in the table", ptags, topic,
          s -> partition(s, partition).map(TableTopicStatus.Partition::lagRecords).orElse(0L)));
      meters.add(gauge("tidemark.table.commit.lag", "seconds", "How long ago the table last held every record of the "
          + "partition", ptags, topic, s -> partition(s, partition).map(p -> p.lagMs() / 1000.0).orElse(0.0)));
    }
    byTopic.put(topic, meters);
    partitionsByTopic.put(topic, Set.copyOf(partitions));
  }

  /** Built-in maintenance of the topic's table (counted on the node coordinating the topic; zero elsewhere). */
  private void bindMaintenance(List<Meter> meters, Tags tags, String topic) {
    meters.add(counter("tidemark.table.maintenance.runs", "Maintenance runs", tags, topic, s -> m(s).runs()));
    meters.add(counter("tidemark.table.maintenance.data.files.rewritten", "Data files replaced by compaction", tags, topic,
        s -> m(s).dataFilesRewritten()));
    meters.add(counter("tidemark.table.maintenance.data.files.written", "Data files compaction wrote in their place", tags,
        topic, s -> m(s).dataFilesWritten()));
    meters.add(counter("tidemark.table.maintenance.bytes.rewritten", "Bytes of data and delete files compaction read",
        tags, topic, s -> m(s).bytesRewritten()));
    meters.add(counter("tidemark.table.maintenance.delete.files.removed", "Delete files removed once they applied to no "
        + "data file", tags, topic, s -> m(s).deleteFilesRemoved()));
    meters.add(counter("tidemark.table.maintenance.manifests.rewritten", "Manifests rewritten", tags, topic,
        s -> m(s).manifestsRewritten()));
    meters.add(counter("tidemark.table.maintenance.snapshots.expired", "Snapshots expired", tags, topic,
        s -> m(s).snapshotsExpired()));
    meters.add(counter("tidemark.table.maintenance.orphan.files.removed", "Unreferenced files deleted", tags, topic,
        s -> m(s).orphanFilesRemoved()));
    meters.add(counter("tidemark.table.maintenance.conflicts", "Maintenance commits that lost to a concurrent commit",
        tags, topic, s -> m(s).conflicts()));
    meters.add(gauge("tidemark.table.maintenance.last.run.duration", "seconds", "Duration of the last maintenance run "
        + "(NaN: none yet)", tags, topic, s -> m(s).lastRunDurationMs() < 0 ? Double.NaN : m(s).lastRunDurationMs() / 1000.0));
    meters.add(gauge("tidemark.table.data.files", null, "Data files in the table's current snapshot (NaN: not known here)",
        tags, topic, s -> m(s).liveDataFiles() < 0 ? Double.NaN : m(s).liveDataFiles()));
    meters.add(gauge("tidemark.table.delete.files", null, "Delete files in the table's current snapshot (NaN: not known "
        + "here)", tags, topic, s -> m(s).liveDeleteFiles() < 0 ? Double.NaN : m(s).liveDeleteFiles()));
  }

  private static final MaintenanceReport NONE = new MaintenanceReport("", 0, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1,
      "", "");

  private static MaintenanceReport m(TableTopicStatus s) {
    return s.maintenance() == null ? NONE : s.maintenance();
  }

  void unbind(String topic) {
    List<Meter> meters = byTopic.remove(topic);
    partitionsByTopic.remove(topic);
    if (meters != null) {
      meters.forEach(registry::remove);
    }
  }

  void unbindAll() {
    for (String topic : List.copyOf(byTopic.keySet())) {
      unbind(topic);
    }
  }

  private static Optional<TableTopicStatus.Partition> partition(TableTopicStatus s, int partition) {
    return s.partitions().stream().filter(p -> p.partition() == partition).findFirst();
  }

  private Meter counter(String name, String doc, Tags tags, String topic, ToDoubleFunction<TableTopicStatus> value) {
    return FunctionCounter.builder(name, statuses, f -> f.apply(topic).map(value::applyAsDouble).orElse(0.0))
        .description(doc).tags(tags).register(registry);
  }

  private Meter gauge(String name, String baseUnit, String doc, Tags tags, String topic,
      ToDoubleFunction<TableTopicStatus> value) {
    return Gauge.builder(name, statuses, f -> f.apply(topic).map(value::applyAsDouble).orElse(Double.NaN))
        .description(doc).baseUnit(baseUnit).tags(tags).register(registry);
  }
}
