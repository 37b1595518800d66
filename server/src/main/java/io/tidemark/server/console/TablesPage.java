package io.tidemark.server.console;

import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.server.table.TableTopicsService;
import io.tidemark.table.node.TableTopicStatus;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import org.apache.kafka.common.TopicPartition;

/**
 * The table topics page, cluster-wide: every table topic of the cluster (from the topics' configs),
 * whichever nodes run it. From the shared catalog, for each: its table, last commit, the next offset
 * of each partition in that commit, rows in the table and in its dead-letter table; with each
 * partition's end offset (ListOffsets to its leader), the records not yet in the table and the
 * freshness (0 when the table holds every record, else the time since its last commit: the table is
 * at least that stale). The nodes that run it are the leaders of its partitions, the coordinator
 * the leader of partition 0. What only a running node knows (state, rows written and records skipped
 * since the table started there, the last error, per-partition detail) comes from this node's status
 * where it runs the topic; elsewhere the page names the nodes whose consoles show it. At most
 * {@value #MAX_TABLES} tables.
 */
final class TablesPage {

  static final int MAX_TABLES = 100;

  record Table(String topic, String table, String state, boolean runsHere, boolean coordinator, int coordinatorNode,
      List<Integer> nodes, long commits, Long lastCommitMs, Long freshnessMs, Long lagRecords, Long rows, Long rowsWritten,
      Long badRecords, boolean deadLetterEnabled, Long deadLetterRows, String lastError,
      List<TableTopicStatus.Partition> partitions) {}

  record View(int total, List<Table> tables, Integer restCatalogPort, long atMs) {}

  private final Sources s;

  TablesPage(Sources sources) {
    this.s = sources;
  }

  View render() {
    TableTopicsService tables = s.requireTables();
    List<TopicInfo> all = s.requireBroker().topics().stream()
        .filter(t -> !t.internal() && TableTopicsService.isTableTopic(t.configs()))
        .sorted(Comparator.comparing(TopicInfo::name)).toList();
    List<TopicInfo> shown = all.stream().limit(MAX_TABLES).toList();
    List<TopicPartition> partitions = new ArrayList<>();
    shown.forEach(t -> t.partitions().forEach(p -> partitions.add(new TopicPartition(t.name(), p.partition()))));
    Map<TopicPartition, Long> ends = s.requireKafka().endOffsets(partitions);
    List<Table> rows = shown.stream().map(t -> row(tables, t, ends)).toList();
    return new View(all.size(), rows, s.tableRestPort(), s.nowMs());
  }

  private Table row(TableTopicsService tables, TopicInfo topic, Map<TopicPartition, Long> ends) {
    TableTopicsService.CatalogView catalog = tables.catalogView(topic.name(), topic.configs());
    Optional<TableTopicStatus> local = tables.status(topic.name());
    Long lag = 0L;
    for (TopicInfo.PartitionInfo p : topic.partitions()) {
      Long end = ends.get(new TopicPartition(topic.name(), p.partition()));
      if (end == null) {
        lag = null; // an end offset unknown now: the lag is unknown
        break;
      }
      lag += Math.max(0, end - catalog.committedOffsets().getOrDefault(p.partition(), 0L));
    }
    Long freshness = lag == null ? null : lag == 0 ? 0L : catalog.lastCommitMs() == null ? null
        : Math.max(0, s.nowMs() - catalog.lastCommitMs());
    int coordinator = topic.partitions().isEmpty() ? -1 : topic.partitions().get(0).leader();
    List<Integer> nodes = List.copyOf(new TreeSet<>(topic.partitions().stream().map(TopicInfo.PartitionInfo::leader)
        .filter(n -> n >= 0).toList()));
    TableTopicStatus here = local.orElse(null);
    return new Table(topic.name(), catalog.table(), here == null ? "runs on node " + joined(nodes) : here.state(),
        here != null, here != null && here.coordinator(), coordinator, nodes, here == null ? 0 : here.commits(),
        catalog.lastCommitMs(), freshness, lag, catalog.rows(), here == null ? null : here.rowsWritten(),
        here == null ? null : here.badRecords(), deadLetters(topic.configs()), catalog.deadLetterRows(),
        here == null ? null : here.lastError(), here == null ? List.of() : here.partitions());
  }

  private static String joined(List<Integer> nodes) {
    return nodes.isEmpty() ? "none (no leader)" : String.join(", ", nodes.stream().map(String::valueOf).toList());
  }

  private static boolean deadLetters(Map<String, String> configs) {
    return "true".equalsIgnoreCase(configs.get("table.topic.errors.dlq.enable"))
        || "true".equalsIgnoreCase(configs.get("automq.table.topic.errors.dlq.enable"));
  }
}
