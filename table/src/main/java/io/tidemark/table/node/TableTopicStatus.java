package io.tidemark.table.node;

import io.tidemark.table.maintenance.MaintenanceReport;
import java.util.List;

/**
 * What one table topic looks like from this node, for the admin endpoint and the metrics.
 * {@code state}: RUNNING, PAUSED (a partition stopped on a bad record under
 * {@code errors.tolerance=none}; it resumes when the topic's config changes) or the coordinator's
 * state while it starts. Times in epoch ms, -1 when never. {@code maintenance}: what built-in
 * maintenance did to the table, null on a node that does not coordinate the topic. Immutable.
 */
public record TableTopicStatus(String topic, String table, String state, boolean coordinator, long commitIntervalMs,
    long commits, long lastCommitMs, String lastCommitId, long dataFiles, long bytesWritten, long rowsWritten,
    long badRecords, String lastError, List<Partition> partitions, MaintenanceReport maintenance) {

  /**
   * One partition led by this node. {@code lagRecords}: records in the partition not yet in the
   * table; {@code lagMs}: how long ago the table last held every record of the partition (0 when
   * it does now; counted from when this node began following the topic when it never did).
   * {@code backfill}: the records that were in the partition when this node began converting it, and how far the
   * table is through them (null until the first round).
   */
  public record Partition(int partition, String state, long committedOffset, long highWatermark, long lagRecords, long lagMs,
      long badRecords, String pauseReason, Backfill backfill) {}

  /**
   * Backfill progress of one partition: from {@code startOffset} (where this node began) to {@code endOffset} (the
   * high watermark then); {@code done} once the table holds every record below {@code endOffset}.
   */
  public record Backfill(long startOffset, long endOffset, long remainingRecords, boolean done) {

    static Backfill of(long startOffset, long endOffset, long committedOffset) {
      if (startOffset < 0 || endOffset < 0) {
        return null;
      }
      long remaining = Math.max(0, endOffset - Math.max(startOffset, committedOffset));
      return new Backfill(startOffset, endOffset, remaining, remaining == 0);
    }
  }

  public TableTopicStatus {
    partitions = List.copyOf(partitions);
  }
}
