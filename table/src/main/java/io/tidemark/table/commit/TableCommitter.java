package io.tidemark.table.commit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * The commit step of a table topic: one Iceberg snapshot per round holding the round's data files,
 * with the commit id and the next offset of every partition in the snapshot summary. The table is
 * the only durable record of progress: {@link #committed()} reads it back after any restart, so a
 * round either lands with its offsets or not at all (no loss, no duplicates).
 *
 * <p>Before committing it checks that the table still holds the offsets the round started from;
 * if another committer moved them, the round is refused ({@link CommitConflictException}) and
 * nothing changes. Single-threaded: one committer per table topic.
 */
public final class TableCommitter {

  public static final String COMMIT_ID = "tidemark.commit-id";
  public static final String OFFSETS = "tidemark.offsets";

  private static final ObjectMapper JSON = new ObjectMapper();

  private final Table table;

  /** Progress recorded in the table: the last commit id and each partition's next offset. */
  public record Committed(Optional<String> commitId, Map<Integer, Long> nextOffsets) {
    public Committed {
      nextOffsets = Map.copyOf(nextOffsets);
    }
  }

  /** The table moved on since the round read its offsets; the round must be discarded and redone. */
  public static final class CommitConflictException extends RuntimeException {
    public CommitConflictException(String message) {
      super(message);
    }
  }

  public TableCommitter(Table table) {
    this.table = table;
  }

  /**
   * The progress in the table's newest snapshot that carries it (snapshots written by others,
   * such as compaction, are skipped by walking back through the parents).
   */
  public Committed committed() {
    table.refresh();
    Snapshot s = table.currentSnapshot();
    while (s != null) {
      String offsets = s.summary().get(OFFSETS);
      if (offsets != null) {
        return new Committed(Optional.ofNullable(s.summary().get(COMMIT_ID)), parse(offsets));
      }
      s = s.parentId() == null ? null : table.snapshot(s.parentId());
    }
    return new Committed(Optional.empty(), Map.of());
  }

  /**
   * Commits one round: {@code files} become visible together with {@code nextOffsets} (partitions
   * not in the round keep their offsets). {@code baseOffsets} are the table's offsets the round
   * started from (a partition absent there had none), checked against the table first.
   */
  public void commit(String commitId, Map<Integer, Long> baseOffsets, Map<Integer, Long> nextOffsets, List<DataFile> files) {
    commit(commitId, baseOffsets, nextOffsets, files, List.of());
  }

  /**
   * {@link #commit(String, Map, Map, List)} with delete files (an upsert round): the data and delete
   * files land in one {@link RowDelta} snapshot carrying the offsets, so the deletes are as exactly
   * once as the rows. Without deletes the snapshot is a plain append.
   */
  public void commit(String commitId, Map<Integer, Long> baseOffsets, Map<Integer, Long> nextOffsets, List<DataFile> files,
      List<DeleteFile> deletes) {
    Committed current = committed();
    for (Integer partition : nextOffsets.keySet()) {
      Long inTable = current.nextOffsets().get(partition);
      Long roundBase = baseOffsets.get(partition);
      if (!java.util.Objects.equals(inTable, roundBase)) {
        throw new CommitConflictException("partition " + partition + " is at offset " + inTable
            + " in the table but the round started at " + roundBase + "; round " + commitId + " is discarded");
      }
    }
    Map<Integer, Long> merged = new TreeMap<>(current.nextOffsets());
    merged.putAll(nextOffsets);
    if (deletes.isEmpty()) {
      AppendFiles append = table.newAppend();
      for (DataFile f : files) {
        append.appendFile(f);
      }
      append.set(COMMIT_ID, commitId);
      append.set(OFFSETS, format(merged));
      append.commit();
      return;
    }
    RowDelta delta = table.newRowDelta();
    for (DataFile f : files) {
      delta.addRows(f);
    }
    for (DeleteFile f : deletes) {
      delta.addDeletes(f);
    }
    delta.set(COMMIT_ID, commitId);
    delta.set(OFFSETS, format(merged));
    delta.commit();
  }

  static String format(Map<Integer, Long> offsets) {
    try {
      return JSON.writeValueAsString(new TreeMap<>(offsets));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  static Map<Integer, Long> parse(String json) {
    try {
      return JSON.readValue(json, new TypeReference<TreeMap<Integer, Long>>() {});
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("snapshot summary " + OFFSETS + " is not an offset map: " + json, e);
    }
  }
}
