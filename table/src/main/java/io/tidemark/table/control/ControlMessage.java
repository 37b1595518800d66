package io.tidemark.table.control;

import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;

/**
 * What a table topic's coordinator and workers say to each other through the control topic. Every
 * message names its table topic and commit round ({@code commitId}). Immutable.
 */
public sealed interface ControlMessage {

  String topic();

  String commitId();

  /**
   * The coordinator's intent, recorded before any worker is asked: round {@code commitId} starts.
   * A start without a matching {@link CommitEnd} is a round whose outcome must be reconciled with
   * the table after a crash.
   */
  record CommitStart(String topic, String commitId, long startedAtMs) implements ControlMessage {}

  /**
   * A worker's answer to a start: the data files it wrote for its partitions and the offset range
   * they cover; {@code error} is non-empty when the worker could not prepare the round.
   */
  record FilesWritten(String topic, String commitId, int node, WorkerRound round, String error) implements ControlMessage {}

  /** The coordinator's record that round {@code commitId} ended: landed in the table or abandoned. */
  record CommitEnd(String topic, String commitId, boolean landed, long snapshotId) implements ControlMessage {}

  /**
   * The content of one worker's round: per partition the table offset it started from (absent when
   * the table had none), the next offset after the written records, and the high watermark seen
   * when it started; the data files and delete files (upsert tables), and the same for the dead-letter table.
   */
  record WorkerRound(Map<Integer, Long> baseOffsets, Map<Integer, Long> nextOffsets, Map<Integer, Long> highWatermarks,
      List<DataFile> files, List<DeleteFile> deleteFiles, Map<Integer, Long> dlqBaseOffsets, Map<Integer, Long> dlqNextOffsets, List<DataFile> dlqFiles,
      long rows, long skipped, boolean moreData) {

    public WorkerRound {
      baseOffsets = Map.copyOf(baseOffsets);
      nextOffsets = Map.copyOf(nextOffsets);
      highWatermarks = Map.copyOf(highWatermarks);
      files = List.copyOf(files);
      deleteFiles = List.copyOf(deleteFiles);
      dlqBaseOffsets = Map.copyOf(dlqBaseOffsets);
      dlqNextOffsets = Map.copyOf(dlqNextOffsets);
      dlqFiles = List.copyOf(dlqFiles);
    }

    /** A round with nothing in it (a worker that failed, or had no partitions). */
    public static WorkerRound empty() {
      return new WorkerRound(Map.of(), Map.of(), Map.of(), List.of(), List.of(), Map.of(), Map.of(), List.of(), 0, 0, false);
    }
  }
}
