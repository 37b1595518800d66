package io.tidemark.server.console;

import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.metadata.image.MetadataImage;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.TopicPartition;

/**
 * The topics page: one page of topics with their partitions, leaders, bytes in object storage, end
 * offsets and records per second; and one topic's partitions. End offsets are read from the
 * partitions' leaders (Kafka ListOffsets), sizes from the metadata image ({@link StoredBytes}).
 */
final class TopicsPage {

  /** At most this many partitions of one topic are listed on its page. */
  static final int MAX_PARTITIONS_SHOWN = 1000;

  record Topic(String name, String id, boolean internal, boolean tableTopic, int partitions, Map<Integer, Integer> leaders,
      int reassigning, Long storedBytes, int objects, Long endOffsets, Double recordsPerSec) {}

  record TopicList(int total, int offset, int limit, List<Topic> topics, boolean sizesKnown, long atMs) {}

  record Partition(int partition, int leader, int leaderEpoch, List<Integer> replicas, List<Integer> adding,
      List<Integer> removing, Long endOffset, Long storedBytes, int objects) {}

  record Detail(Topic topic, Map<String, String> configs, List<Partition> partitions, int partitionsShown, long atMs) {}

  private final Sources s;

  TopicsPage(Sources sources) {
    this.s = sources;
  }

  TopicList list(Paging paging, boolean withInternal) {
    List<TopicInfo> all = s.requireBroker().topics().stream()
        .filter(t -> withInternal || !t.internal())
        .filter(t -> paging.matches(t.name()))
        .sorted(Comparator.comparing(TopicInfo::name)).toList();
    List<TopicInfo> page = paging.of(all);
    List<TopicPartition> partitions = new ArrayList<>();
    page.forEach(t -> t.partitions().forEach(p -> partitions.add(new TopicPartition(t.name(), p.partition()))));
    Map<TopicPartition, Long> ends = s.requireKafka().endOffsets(partitions);
    MetadataImage image = s.image();
    List<Topic> rows = page.stream().map(t -> summary(t, ends, image)).toList();
    return new TopicList(all.size(), paging.offset(), paging.limit(), rows, image != null, s.nowMs());
  }

  Detail detail(String name) {
    TopicInfo t = s.requireBroker().topics().stream().filter(x -> x.name().equals(name)).findFirst()
        .orElseThrow(() -> new Console.NotFound("no topic named '" + name + "'"));
    List<TopicInfo.PartitionInfo> shown = t.partitions().stream()
        .sorted(Comparator.comparingInt(TopicInfo.PartitionInfo::partition)).limit(MAX_PARTITIONS_SHOWN).toList();
    Map<TopicPartition, Long> ends = s.requireKafka().endOffsets(shown.stream()
        .map(p -> new TopicPartition(t.name(), p.partition())).toList());
    MetadataImage image = s.image();
    List<Partition> rows = shown.stream().map(p -> {
      StoredBytes.Size size = StoredBytes.of(image, p.dataStreamId()).plus(StoredBytes.of(image, p.metaStreamId()));
      return new Partition(p.partition(), p.leader(), p.leaderEpoch(), p.replicas(), p.addingReplicas(),
          p.removingReplicas(), ends.get(new TopicPartition(t.name(), p.partition())), image == null ? null : size.bytes(),
          size.objects());
    }).toList();
    return new Detail(summary(t, ends, image), new TreeMap<>(t.configs()), rows, rows.size(), s.nowMs());
  }

  private Topic summary(TopicInfo t, Map<TopicPartition, Long> ends, MetadataImage image) {
    Map<Integer, Integer> leaders = new TreeMap<>();
    int reassigning = 0;
    long endSum = 0;
    boolean allKnown = true;
    StoredBytes.Size size = StoredBytes.NONE;
    for (TopicInfo.PartitionInfo p : t.partitions()) {
      leaders.merge(p.leader(), 1, Integer::sum);
      if (p.reassigning()) {
        reassigning++;
      }
      Long end = ends.get(new TopicPartition(t.name(), p.partition()));
      if (end == null) {
        allKnown = false;
      } else {
        endSum += end;
      }
      size = size.plus(StoredBytes.of(image, p.dataStreamId())).plus(StoredBytes.of(image, p.metaStreamId()));
    }
    // A rate over a sum with a partition missing would be wrong: no rate while any end offset is unknown.
    Double rate = allKnown ? s.rates().sample("topic:" + t.id() , endSum, s.nowMs()) : null;
    return new Topic(t.name(), t.id().toString(), t.internal(), "true".equalsIgnoreCase(t.configs().get("table.topic.enable"))
        || "true".equalsIgnoreCase(t.configs().get("automq.table.topic.enable")), t.partitions().size(), leaders,
        reassigning, image == null ? null : size.bytes(), size.objects(), allKnown ? endSum : null, rate);
  }
}
