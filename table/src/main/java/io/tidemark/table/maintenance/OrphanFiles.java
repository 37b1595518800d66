package io.tidemark.table.maintenance;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.PartitionStatisticsFile;
import org.apache.iceberg.ReachableFileUtil;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.SupportsPrefixOperations;

/**
 * Finds the files under a table's location that nothing of the table references: data and delete
 * files of rounds that never committed (a worker that crashed or answered too late), output of a
 * failed or lost compaction, metadata files that fell off the metadata log. Only files older than
 * the safety age are taken, so a file being written for a round or a rewrite in flight is never
 * one. References are collected from every snapshot the table still holds (manifest lists,
 * manifests, their live files), the metadata log, statistics files and the version hint.
 *
 * <p>Listing needs the FileIO to list a prefix ({@link SupportsPrefixOperations}: S3FileIO, and
 * every warehouse of the embedded catalog, plain files or objects of Tidemark's object storage);
 * otherwise {@link #list} answers empty and the step is skipped. As a guard against a listing that names files otherwise than the table does
 * (which would make every file look unreferenced), nothing is taken unless the listing contains
 * the table's current metadata file. Stateless.
 */
final class OrphanFiles {

  private OrphanFiles() {}

  /** Every file under the table's location ({@code location/}), or empty when the FileIO cannot list. */
  static Optional<List<FileInfo>> list(Table table) {
    String prefix = table.location().endsWith("/") ? table.location() : table.location() + "/";
    if (!(table.io() instanceof SupportsPrefixOperations listing)) {
      return Optional.empty();
    }
    List<FileInfo> out = new ArrayList<>();
    listing.listPrefix(prefix).forEach(out::add);
    return Optional.of(out);
  }

  /** Every location the table references now. */
  static Set<String> referenced(Table table) {
    Set<String> out = new HashSet<>(ReachableFileUtil.metadataFileLocations(table, false));
    out.add(ReachableFileUtil.versionHintLocation(table));
    out.addAll(ReachableFileUtil.statisticsFilesLocations(table));
    for (PartitionStatisticsFile p : table.partitionStatisticsFiles()) {
      out.add(p.path());
    }
    Set<String> manifests = new HashSet<>();
    for (Snapshot s : table.snapshots()) {
      if (s.manifestListLocation() != null) {
        out.add(s.manifestListLocation());
      }
      for (ManifestFile m : s.allManifests(table.io())) {
        if (manifests.add(m.path())) {
          out.add(m.path());
          addLiveFiles(table, m, out);
        }
      }
    }
    return out;
  }

  private static void addLiveFiles(Table table, ManifestFile m, Set<String> out) {
    try (ManifestReader<? extends ContentFile<?>> reader = switch (m.content()) {
      case DATA -> ManifestFiles.read(m, table.io(), table.specs());
      case DELETES -> ManifestFiles.readDeleteManifest(m, table.io(), table.specs());
    }) {
      for (ContentFile<?> f : reader.select(List.of("file_path"))) {
        out.add(f.location());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("reading manifest " + m.path() + " failed", e);
    }
  }

  /**
   * The listed files not in {@code referenced} and last modified before {@code olderThanMs}, at
   * most {@code max}; empty when the listing fails the guard (it does not hold {@code currentMetadata}).
   */
  static List<String> orphans(List<FileInfo> listed, Set<String> referenced, String currentMetadata, long olderThanMs,
      int max) {
    if (listed.stream().noneMatch(f -> f.location().equals(currentMetadata))) {
      throw new IllegalStateException("the listing of the table location does not contain its current metadata file "
          + currentMetadata + "; orphan removal skipped (the FileIO names files otherwise than the table does)");
    }
    List<String> out = new ArrayList<>();
    for (FileInfo f : listed) {
      if (out.size() >= max) {
        break;
      }
      if (f.createdAtMillis() < olderThanMs && !referenced.contains(f.location())) {
        out.add(f.location());
      }
    }
    return out;
  }
}
