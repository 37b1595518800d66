package io.tidemark.table.coordinator;

import io.tidemark.table.control.ControlMessage.FilesWritten;
import io.tidemark.table.control.ControlMessage.WorkerRound;
import io.tidemark.table.sync.TableSync;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/** Joins the workers' answers of one round into the single round the coordinator commits. Stateless. */
final class RoundMerge {

  private RoundMerge() {}

  static TableSync.PreparedRound merge(String commitId, Collection<FilesWritten> replies) {
    List<TableSync.PreparedRound> parts = new ArrayList<>();
    for (FilesWritten reply : replies) {
      WorkerRound r = reply.round();
      parts.add(new TableSync.PreparedRound(commitId, r.baseOffsets(), r.nextOffsets(), r.files(), r.deleteFiles(), r.rows(), r.skipped(),
          r.moreData(), new TableSync.DeadLetters(r.dlqBaseOffsets(), r.dlqNextOffsets(), r.dlqFiles())));
    }
    return TableSync.PreparedRound.union(commitId, parts);
  }

  /** True when committing the round would change nothing (no offset moved, no file). */
  static boolean empty(TableSync.PreparedRound round) {
    return round.nextOffsets().isEmpty() && round.files().isEmpty() && round.deleteFiles().isEmpty()
        && round.deadLetters().files().isEmpty();
  }
}
