package io.tidemark.server.console;

import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.server.table.TableTopicsService;
import io.tidemark.table.node.TableTopicStatus;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The table topics page: each table topic this node runs (the partitions it leads; the coordinator
 * of a topic commits its snapshots), with the last commit, freshness (the longest time since the table
 * last held every record of a partition), rows in the table and in its dead-letter table (from the
 * current snapshots), rows written and records skipped since the table started here, the last error,
 * and what a query engine needs to reach it (the REST catalog port). At most {@value #MAX_TABLES}.
 */
final class TablesPage {

  static final int MAX_TABLES = 100;

  record Table(String topic, String table, String state, boolean coordinator, long commits, long lastCommitMs,
      long freshnessMs, long lagRecords, Long rows, long rowsWritten, long badRecords, boolean deadLetterEnabled,
      Long deadLetterRows, String lastError, List<TableTopicStatus.Partition> partitions) {}

  record View(int total, List<Table> tables, Integer restCatalogPort, long atMs) {}

  private final Sources s;

  TablesPage(Sources sources) {
    this.s = sources;
  }

  View render() {
    TableTopicsService tables = s.requireTables();
    List<TableTopicStatus> all = tables.statuses();
    List<Table> rows = all.stream().limit(MAX_TABLES).map(t -> row(tables, t)).toList();
    return new View(all.size(), rows, s.tableRestPort(), s.nowMs());
  }

  private Table row(TableTopicsService tables, TableTopicStatus t) {
    long freshness = t.partitions().stream().mapToLong(TableTopicStatus.Partition::lagMs).max().orElse(0);
    long lagRecords = t.partitions().stream().mapToLong(TableTopicStatus.Partition::lagRecords).sum();
    TableTopicsService.TableRows counted = tables.rows(t.table());
    return new Table(t.topic(), t.table(), t.state(), t.coordinator(), t.commits(), t.lastCommitMs(), freshness, lagRecords,
        counted.rows(), t.rowsWritten(), t.badRecords(), deadLetters(t.topic()), counted.deadLetterRows(), t.lastError(),
        t.partitions());
  }

  private boolean deadLetters(String topic) {
    Optional<Map<String, String>> configs = s.broker() == null ? Optional.empty()
        : s.broker().topics().stream().filter(x -> x.name().equals(topic)).findFirst().map(TopicInfo::configs);
    return configs.map(c -> "true".equalsIgnoreCase(c.get("table.topic.errors.dlq.enable"))
        || "true".equalsIgnoreCase(c.get("automq.table.topic.errors.dlq.enable"))).orElse(false);
  }
}
