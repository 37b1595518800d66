package io.tidemark.table.maintenance;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.ContentFileUtil;

/**
 * Finds the delete files of a snapshot that can no longer delete anything, so that they stop
 * costing every reader: an equality delete whose scope (its partition, or the whole table for an
 * unpartitioned spec) holds no data file older than it (compaction wrote the rows without the
 * deleted ones, at a sequence number at or above the delete's), and a position delete file or
 * deletion vector whose one referenced data file is gone. Removed with one {@link RewriteFiles}
 * that validates from the snapshot read; no concurrent commit can make such a file apply again
 * (new data files get newer sequence numbers). Stateless.
 */
final class DanglingDeletes {

  private DanglingDeletes() {}

  /** The delete files of {@code snapshot} that apply to no live data file. */
  static List<DeleteFile> find(Table table, Snapshot snapshot) {
    Map<String, Long> minSeqByPartition = new HashMap<>();
    long minSeqOverall = Long.MAX_VALUE;
    Set<String> liveData = new HashSet<>();
    for (ManifestFile m : snapshot.dataManifests(table.io())) {
      try (ManifestReader<DataFile> reader = ManifestFiles.read(m, table.io(), table.specs())) {
        for (DataFile f : reader) {
          liveData.add(f.location());
          long seq = f.dataSequenceNumber();
          minSeqByPartition.merge(scope(table, f.specId(), f.partition()), seq, Math::min);
          minSeqOverall = Math.min(minSeqOverall, seq);
        }
      } catch (IOException e) {
        throw new UncheckedIOException("reading manifest " + m.path() + " failed", e);
      }
    }
    List<DeleteFile> dangling = new ArrayList<>();
    for (ManifestFile m : snapshot.deleteManifests(table.io())) {
      try (ManifestReader<DeleteFile> reader = ManifestFiles.readDeleteManifest(m, table.io(), table.specs())) {
        for (DeleteFile d : reader) {
          if (isDangling(table, d, liveData, minSeqByPartition, minSeqOverall)) {
            dangling.add(d.copyWithoutStats());
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("reading delete manifest " + m.path() + " failed", e);
      }
    }
    return dangling;
  }

  private static boolean isDangling(Table table, DeleteFile d, Set<String> liveData, Map<String, Long> minSeqByPartition,
      long minSeqOverall) {
    if (d.content() == FileContent.POSITION_DELETES) {
      String referenced = ContentFileUtil.referencedDataFileLocation(d);
      return referenced != null && !liveData.contains(referenced);
    }
    long deleteSeq = d.dataSequenceNumber();
    PartitionSpec spec = table.specs().get(d.specId());
    long oldestData = spec.isUnpartitioned() ? minSeqOverall
        : minSeqByPartition.getOrDefault(scope(table, d.specId(), d.partition()), Long.MAX_VALUE);
    // an equality delete applies to data files whose data sequence number is strictly lower
    return oldestData >= deleteSeq;
  }

  private static String scope(Table table, int specId, org.apache.iceberg.StructLike partition) {
    return specId + "/" + table.specs().get(specId).partitionToPath(partition);
  }

  /** Removes {@code dangling} in one snapshot, validated from {@code base}. */
  static void remove(Table table, Snapshot base, List<DeleteFile> dangling) {
    RewriteFiles rewrite = table.newRewrite().validateFromSnapshot(base.snapshotId());
    dangling.forEach(rewrite::deleteFile);
    rewrite.set(TableMaintenance.SUMMARY_OPERATION, "dangling-deletes");
    rewrite.commit();
  }
}
