package io.tidemark.table.maintenance;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.data.GenericDeleteFilter;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IdentityPartitionConverters;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.util.BinPacking;
import org.apache.iceberg.util.PartitionUtil;

/**
 * Bin-packing compaction of one table snapshot: the small data files of each table partition (and
 * the files with enough deletes against them) are read with their deletes applied and written
 * again as files of about the target size, then swapped in with one {@link RewriteFiles} per bin.
 *
 * <p>Correct next to the commit cycle by construction: the new files carry the data sequence number
 * of the snapshot they were read from, so equality deletes committed after it still apply to them,
 * and the rewrite validates from that snapshot, so a concurrent position delete or deletion vector
 * against a rewritten file makes the rewrite fail (the commit cycle wins; the bin waits for the next
 * run). Only Parquet data files are rewritten (what table topics write). Stateless; used by the
 * maintenance owner thread.
 */
final class Compaction {

  /** Files of one partition of one spec to rewrite together. */
  record Bin(int specId, StructLike partition, List<FileScanTask> tasks, long bytes) {}

  /** What one bin's rewrite produced. */
  record Rewritten(List<DataFile> removed, List<DataFile> added, long bytesRead) {}

  /** A bin of this many deleted rows per ten rows of the file is worth rewriting even when the file is not small. */
  private static final int DELETE_RATIO_TENTHS = 1;

  private Compaction() {}

  /**
   * The bins worth rewriting in {@code snapshot}, largest count of files first, cut to the run's
   * budget in bytes and files (the first bin always fits, so a run never stalls on one large bin).
   */
  static List<Bin> plan(Table table, Snapshot snapshot, long targetBytes, int minInputFiles, long maxBytes, int maxFiles) {
    long smallBelow = targetBytes / 4 * 3;
    Map<String, List<FileScanTask>> groups = new LinkedHashMap<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().useSnapshot(snapshot.snapshotId()).planFiles()) {
      for (FileScanTask t : tasks) {
        DataFile f = t.file();
        if (f.format() != FileFormat.PARQUET) {
          continue;
        }
        if (f.fileSizeInBytes() < smallBelow || deletesWorthApplying(t)) {
          PartitionSpec spec = table.specs().get(f.specId());
          groups.computeIfAbsent(f.specId() + "/" + spec.partitionToPath(f.partition()), k -> new ArrayList<>()).add(t);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("planning compaction of " + table.name() + " failed", e);
    }
    List<Bin> bins = new ArrayList<>();
    BinPacking.ListPacker<FileScanTask> packer = new BinPacking.ListPacker<>(targetBytes, 1, false);
    for (List<FileScanTask> group : groups.values()) {
      group.sort(Comparator.comparingLong((FileScanTask t) -> t.file().dataSequenceNumber()));
      for (List<FileScanTask> packed : packer.pack(group, t -> t.file().fileSizeInBytes())) {
        boolean deletes = packed.stream().anyMatch(t -> !t.deletes().isEmpty());
        if (packed.size() >= minInputFiles || deletes) {
          DataFile first = packed.getFirst().file();
          bins.add(new Bin(first.specId(), first.partition(), List.copyOf(packed), bytesToRead(packed)));
        }
      }
    }
    bins.sort(Comparator.comparingInt((Bin b) -> b.tasks().size()).reversed());
    List<Bin> chosen = new ArrayList<>();
    long bytes = 0;
    int files = 0;
    for (Bin b : bins) {
      if (!chosen.isEmpty() && (bytes + b.bytes() > maxBytes || files + b.tasks().size() > maxFiles)) {
        continue;
      }
      chosen.add(b);
      bytes += b.bytes();
      files += b.tasks().size();
    }
    return chosen;
  }

  /** A file with deletes is rewritten when they (possibly) remove a tenth of its rows or more, or when it is small anyway. */
  private static boolean deletesWorthApplying(FileScanTask t) {
    long deleted = 0;
    for (DeleteFile d : t.deletes()) {
      deleted += d.recordCount();
    }
    return !t.deletes().isEmpty() && deleted * 10 >= (long) DELETE_RATIO_TENTHS * t.file().recordCount();
  }

  private static long bytesToRead(List<FileScanTask> tasks) {
    long bytes = 0;
    for (FileScanTask t : tasks) {
      bytes += t.file().fileSizeInBytes();
      for (DeleteFile d : t.deletes()) {
        bytes += d.fileSizeInBytes();
      }
    }
    return bytes;
  }

  /**
   * Reads the bin's rows (deletes applied) in the table's current schema and writes them into new
   * files of about {@code targetBytes} in the bin's spec and partition, with their row lineage in
   * format 3. The files are not in the table yet; on failure the ones written are deleted.
   */
  static Rewritten rewrite(Table table, Bin bin, long targetBytes, String filePrefix) {
    // format 3: each row's lineage is read (stored, or inherited from its file's first row id and data sequence
    // number) and written explicitly, so a rewritten row keeps its _row_id and _last_updated_sequence_number
    Schema schema = TableUtil.supportsRowLineage(table) ? MetadataColumns.schemaWithRowLineage(table.schema())
        : table.schema();
    PartitionSpec spec = table.specs().get(bin.specId());
    Output out = new Output(table, schema, spec, bin.partition(), targetBytes, filePrefix);
    List<DataFile> removed = new ArrayList<>();
    try {
      for (FileScanTask t : bin.tasks()) {
        try (CloseableIterable<Record> rows = liveRows(table, t, schema)) {
          for (Record r : rows) {
            out.write(r);
          }
        }
        removed.add(t.file());
      }
      return new Rewritten(removed, out.finish(), bin.bytes());
    } catch (IOException | RuntimeException e) {
      out.discard();
      throw e instanceof IOException io ? new UncheckedIOException("rewriting a bin of " + table.name() + " failed", io)
          : (RuntimeException) e;
    }
  }

  /** The rows of {@code task}'s data file that its delete files leave, in {@code schema}. */
  static CloseableIterable<Record> liveRows(Table table, FileScanTask task, Schema schema) {
    GenericDeleteFilter deletes = new GenericDeleteFilter(table.io(), task, table.schema(), schema) {
      @Override
      protected org.apache.iceberg.io.InputFile loadInputFile(org.apache.iceberg.DeleteFile file) {
        // with its size from the manifest: opening a delete file then needs no request to learn it (a LIST on S3)
        return table.io().newInputFile(file.location(), file.fileSizeInBytes());
      }
    };
    Schema read = deletes.requiredSchema();
    Map<Integer, ?> constants = PartitionUtil.constantsMap(task, IdentityPartitionConverters::convertConstant);
    DataFile f = task.file();
    CloseableIterable<Record> rows = Parquet.read(table.io().newInputFile(f.location(), f.fileSizeInBytes()))
        .project(read)
        .createReaderFunc(fileSchema -> GenericParquetReaders.buildReader(read, fileSchema, constants))
        .build();
    return deletes.filter(rows);
  }

  /**
   * Commits one rewritten bin on top of whatever the table holds now, as long as nothing since
   * {@code base} touched the bin's files ({@link org.apache.iceberg.exceptions.ValidationException}
   * otherwise, which leaves the table as it was).
   */
  static void commit(Table table, Snapshot base, Rewritten rewritten) {
    RewriteFiles rewrite = table.newRewrite()
        .validateFromSnapshot(base.snapshotId())
        .dataSequenceNumber(base.sequenceNumber());
    rewritten.removed().forEach(rewrite::deleteFile);
    rewritten.added().forEach(rewrite::addFile);
    rewrite.set(TableMaintenance.SUMMARY_OPERATION, "compaction");
    rewrite.commit();
  }

  /** The rolling writer of one bin: one open Parquet file at a time, rolled at the target size. */
  private static final class Output {
    private final Table table;
    private final Schema schema;
    private final PartitionSpec spec;
    private final StructLike partition;
    private final long targetBytes;
    private final String filePrefix;
    private final List<DataFile> done = new ArrayList<>();
    private final List<String> written = new ArrayList<>();
    private DataWriter<Record> open;
    private int seq;

    Output(Table table, Schema schema, PartitionSpec spec, StructLike partition, long targetBytes, String filePrefix) {
      this.table = table;
      this.schema = schema;
      this.spec = spec;
      this.partition = partition;
      this.targetBytes = targetBytes;
      this.filePrefix = filePrefix;
    }

    void write(Record row) throws IOException {
      if (open == null) {
        open = newFile();
      }
      open.write(copyInto(row));
      if (open.length() >= targetBytes) {
        roll();
      }
    }

    /** The row's table columns only (the delete filter may have added the row position). */
    private Record copyInto(Record row) {
      if (row.size() == schema.columns().size()) {
        return row;
      }
      GenericRecord out = GenericRecord.create(schema);
      for (int i = 0; i < schema.columns().size(); i++) {
        out.set(i, row.get(i));
      }
      return out;
    }

    private void roll() throws IOException {
      open.close();
      DataFile f = open.toDataFile();
      open = null;
      if (f.recordCount() > 0) {
        done.add(f);
      }
    }

    List<DataFile> finish() throws IOException {
      if (open != null) {
        roll();
      }
      return List.copyOf(done);
    }

    void discard() {
      if (open != null) {
        try {
          open.close();
        } catch (IOException | RuntimeException e) {
          // abandoned either way
        }
      }
      for (String location : written) {
        try {
          table.io().deleteFile(location);
        } catch (RuntimeException e) {
          // an orphan then, removed by orphan removal after its safety age
        }
      }
    }

    private DataWriter<Record> newFile() throws IOException {
      String name = FileFormat.PARQUET.addExtension(filePrefix + "-" + (seq++));
      String location = spec.isUnpartitioned() ? table.locationProvider().newDataLocation(name)
          : table.locationProvider().newDataLocation(spec, partition, name);
      OutputFile file = table.io().newOutputFile(location);
      written.add(file.location());
      return Parquet.writeData(file)
          .schema(schema)
          .createWriterFunc(GenericParquetWriter::create)
          .withSpec(spec)
          .withPartition(spec.isUnpartitioned() ? null : partition)
          .overwrite()
          .build();
    }
  }
}
