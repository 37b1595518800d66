package io.tidemark.table.node;

import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.coordinator.TableCoordinator;
import io.tidemark.table.maintenance.TableMaintenance;
import io.tidemark.table.sync.TableSync;
import io.tidemark.table.worker.TableWorker;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Builds a {@link TableTopicStatus} from a topic's worker and coordinator here. Stateless. */
final class StatusView {

  private StatusView() {}

  static TableTopicStatus of(String topic, String table, TableTopicConfig config, TableWorker worker,
      TableCoordinator coordinator, TableMaintenance maintenance, long followingSinceMs, long nowMs) {
    TableCoordinator.Stats stats = coordinator == null ? null : coordinator.stats();
    Map<Integer, Long> committed = stats == null ? Map.of() : stats.committedOffsets();
    Map<Integer, Long> caughtUp = stats == null ? Map.of() : stats.caughtUpAtMs();
    List<TableTopicStatus.Partition> partitions = new ArrayList<>();
    boolean paused = false;
    if (worker != null) {
      for (TableWorker.PartitionView p : worker.partitions().values()) {
        long inTable = committed.getOrDefault(p.partition(), 0L);
        long lagRecords = Math.max(0, p.highWatermark() - inTable);
        long lagMs = lagRecords == 0 ? 0 : nowMs - Math.max(caughtUp.getOrDefault(p.partition(), followingSinceMs), followingSinceMs);
        paused |= p.state() == TableSync.PartitionState.PAUSED;
        partitions.add(new TableTopicStatus.Partition(p.partition(), p.state().name(), inTable, p.highWatermark(), lagRecords,
            Math.max(0, lagMs), p.skippedRecords(), p.pauseReason(),
            TableTopicStatus.Backfill.of(p.backfillStartOffset(), p.backfillEndOffset(), inTable)));
      }
    }
    String state = paused ? "PAUSED" : stats == null || stats.state() == TableCoordinator.State.IDLE
        || stats.state() == TableCoordinator.State.COLLECTING || stats.state() == TableCoordinator.State.COMMITTING
        ? "RUNNING" : stats.state().name();
    return new TableTopicStatus(topic, table, state, coordinator != null, config.commitIntervalMs(),
        stats == null ? 0 : stats.commits(), stats == null ? -1 : stats.lastCommitMs(),
        stats == null ? "" : stats.lastCommitId(), stats == null ? 0 : stats.dataFiles(),
        stats == null ? 0 : stats.bytesWritten(), stats == null ? 0 : stats.rowsWritten(),
        stats == null ? 0 : stats.badRecords(), stats == null ? "" : stats.lastError(), partitions,
        maintenance == null ? null : maintenance.report());
  }
}
