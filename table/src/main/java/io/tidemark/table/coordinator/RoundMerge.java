package io.tidemark.table.coordinator;

import io.tidemark.table.control.ControlMessage.FilesWritten;
import io.tidemark.table.control.ControlMessage.WorkerRound;
import io.tidemark.table.sync.TableSync;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.iceberg.DataFile;

/** Joins the workers' answers of one round into the single round the coordinator commits. Stateless. */
final class RoundMerge {

  private RoundMerge() {}

  static TableSync.PreparedRound merge(String commitId, Collection<FilesWritten> replies) {
    Map<Integer, Long> base = new TreeMap<>();
    Map<Integer, Long> next = new TreeMap<>();
    Map<Integer, Long> dlqBase = new TreeMap<>();
    Map<Integer, Long> dlqNext = new TreeMap<>();
    List<DataFile> files = new ArrayList<>();
    List<DataFile> dlqFiles = new ArrayList<>();
    long rows = 0;
    long skipped = 0;
    boolean moreData = false;
    for (FilesWritten reply : replies) {
      WorkerRound r = reply.round();
      base.putAll(r.baseOffsets());
      next.putAll(r.nextOffsets());
      dlqBase.putAll(r.dlqBaseOffsets());
      dlqNext.putAll(r.dlqNextOffsets());
      files.addAll(r.files());
      dlqFiles.addAll(r.dlqFiles());
      rows += r.rows();
      skipped += r.skipped();
      moreData |= r.moreData();
    }
    return new TableSync.PreparedRound(commitId, base, next, List.copyOf(files), rows, skipped, moreData,
        new TableSync.DeadLetters(dlqBase, dlqNext, List.copyOf(dlqFiles)));
  }

  /** True when committing the round would change nothing (no offset moved, no file). */
  static boolean empty(TableSync.PreparedRound round) {
    return round.nextOffsets().isEmpty() && round.files().isEmpty() && round.deadLetters().files().isEmpty();
  }
}
