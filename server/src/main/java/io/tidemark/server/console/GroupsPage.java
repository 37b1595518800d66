package io.tidemark.server.console;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;

/**
 * The consumer groups page: every group of the cluster (as ListGroups answers), and for the consumer
 * groups of the page their state, members, committed offsets and lag (end offset minus committed
 * offset, per partition and in total), as {@code kafka-consumer-groups --describe} computes it. Share
 * and streams groups are listed with their type and state only.
 */
final class GroupsPage {

  record Group(String groupId, String type, String state, String protocol, Integer members, Integer coordinator,
      List<String> topics, Integer partitions, Long lag) {}

  record GroupList(int total, int offset, int limit, List<Group> groups, long atMs) {}

  record Member(String memberId, String clientId, String host, String instanceId, List<String> assignment) {}

  record PartitionLag(String topic, int partition, Long committed, Long endOffset, Long lag, String memberId) {}

  record Detail(Group group, String assignor, List<Member> members, List<PartitionLag> partitions, long atMs) {}

  private final Sources s;

  GroupsPage(Sources sources) {
    this.s = sources;
  }

  GroupList list(Paging paging) {
    KafkaReads kafka = s.requireKafka();
    List<GroupListing> all = kafka.groups().stream().filter(g -> paging.matches(g.groupId()))
        .sorted(Comparator.comparing(GroupListing::groupId)).toList();
    List<GroupListing> page = paging.of(all);
    List<String> consumers = page.stream().filter(GroupsPage::consumerGroup).map(GroupListing::groupId).toList();
    Map<String, ConsumerGroupDescription> described = kafka.describeConsumerGroups(consumers);
    Map<String, Map<TopicPartition, OffsetAndMetadata>> committed = kafka.committed(consumers);
    Set<TopicPartition> partitions = new HashSet<>();
    committed.values().forEach(m -> partitions.addAll(m.keySet()));
    Map<TopicPartition, Long> ends = kafka.endOffsets(partitions);
    List<Group> rows = page.stream().map(g -> summary(g, described.get(g.groupId()), committed.get(g.groupId()), ends))
        .toList();
    return new GroupList(all.size(), paging.offset(), paging.limit(), rows, s.nowMs());
  }

  Detail detail(String groupId) {
    KafkaReads kafka = s.requireKafka();
    GroupListing listing = kafka.groups().stream().filter(g -> g.groupId().equals(groupId)).findFirst()
        .orElseThrow(() -> new Console.NotFound("no group named '" + groupId + "'"));
    if (!consumerGroup(listing)) {
      return new Detail(summary(listing, null, null, Map.of()), null, List.of(), List.of(), s.nowMs());
    }
    ConsumerGroupDescription d = kafka.describeConsumerGroups(List.of(groupId)).get(groupId);
    Map<TopicPartition, OffsetAndMetadata> offsets = kafka.committed(List.of(groupId)).getOrDefault(groupId, Map.of());
    Map<TopicPartition, String> owners = new HashMap<>();
    List<Member> members = new ArrayList<>();
    if (d != null) {
      for (MemberDescription m : d.members()) {
        List<TopicPartition> assigned = m.assignment().topicPartitions().stream()
            .sorted(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition)).toList();
        assigned.forEach(tp -> owners.put(tp, m.consumerId()));
        members.add(new Member(m.consumerId(), m.clientId(), m.host(), m.groupInstanceId().orElse(null),
            assigned.stream().map(TopicPartition::toString).toList()));
      }
    }
    Set<TopicPartition> all = new TreeSet<>(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
    all.addAll(offsets.keySet());
    all.addAll(owners.keySet());
    List<TopicPartition> shown = all.stream().limit(TopicsPage.MAX_PARTITIONS_SHOWN).toList();
    Map<TopicPartition, Long> ends = kafka.endOffsets(shown);
    List<PartitionLag> rows = shown.stream().map(tp -> {
      OffsetAndMetadata o = offsets.get(tp);
      Long end = ends.get(tp);
      Long committed = o == null ? null : o.offset();
      return new PartitionLag(tp.topic(), tp.partition(), committed, end, lag(committed, end), owners.get(tp));
    }).toList();
    return new Detail(summary(listing, d, offsets, ends), d == null ? null : d.partitionAssignor(), members, rows, s.nowMs());
  }

  /** Consumer groups (the new protocol, or classic ones with the consumer protocol or only offsets) have offsets and lag. */
  static boolean consumerGroup(GroupListing g) {
    GroupType type = g.type().orElse(GroupType.CLASSIC);
    return type == GroupType.CONSUMER
        || (type == GroupType.CLASSIC && (g.protocol() == null || g.protocol().isEmpty() || g.protocol().equals("consumer")));
  }

  private Group summary(GroupListing g, ConsumerGroupDescription d, Map<TopicPartition, OffsetAndMetadata> offsets,
      Map<TopicPartition, Long> ends) {
    String type = g.type().map(t -> t.toString().toLowerCase(Locale.ROOT)).orElse("classic");
    String state = d != null ? d.groupState().toString() : g.groupState().map(Object::toString).orElse(null);
    Long lag = null;
    List<String> topics = null;
    Integer partitions = null;
    if (offsets != null) {
      long total = 0;
      boolean known = true;
      for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
        Long l = lag(e.getValue().offset(), ends.get(e.getKey()));
        if (l == null) {
          known = false;
        } else {
          total += l;
        }
      }
      lag = known ? total : null;
      topics = offsets.keySet().stream().map(TopicPartition::topic).distinct().sorted().toList();
      partitions = offsets.size();
    }
    return new Group(g.groupId(), type, state, g.protocol(), d == null ? null : d.members().size(),
        d == null || d.coordinator() == null ? null : d.coordinator().id(), topics, partitions, lag);
  }

  static Long lag(Long committed, Long end) {
    if (committed == null || end == null) {
      return null;
    }
    return Math.max(0, end - committed);
  }
}
