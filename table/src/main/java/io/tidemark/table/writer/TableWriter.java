package io.tidemark.table.writer;

import io.tidemark.table.convert.SchemaMismatchException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.parquet.Parquet;

/**
 * Writes the rows of one topic partition into Parquet data files in the table's location, one
 * open file per Iceberg partition value of the table's spec (at most {@code maxOpenFiles}; beyond
 * that every open file is rolled). A file is rolled when it reaches the target size, when the
 * rows move to another schema ({@link #useSchema}) and at each commit ({@link #drain}); finished
 * files wait in a list until drained. Files written but never drained (a crash before the commit)
 * are orphans, never part of the table.
 *
 * <p>Every file has one schema, the one its rows were bound to: a row of any other schema is
 * refused ({@link SchemaMismatchException}) rather than written by position, which would drop the
 * columns the file does not know. Files of an older schema than the table's are fine (readers
 * project by field id).
 *
 * <p>States: IDLE (no open file) → WRITING (files open) → IDLE on roll. Single-threaded: one
 * writer per partition, used by that partition's task only.
 */
public final class TableWriter {

  static final int MAX_OPEN_FILES = 64;

  private final Table table;
  private final int partition;
  private final String filePrefix;
  private final long targetFileBytes;
  private final List<DataFile> finished = new ArrayList<>();
  private final Map<PartitionKey, OpenFile> open = new LinkedHashMap<>();
  private Schema schema;
  private PartitionSpec spec;
  private PartitionKey key;
  private InternalRecordWrapper wrapper;
  private int fileSeq;

  /**
   * @param filePrefix unique per writer instance (e.g. the commit id), so that a restarted writer
   *     never overwrites a file of an earlier one
   */
  public TableWriter(Table table, Schema schema, int partition, String filePrefix, long targetFileBytes) {
    this.table = table;
    this.partition = partition;
    this.filePrefix = filePrefix;
    this.targetFileBytes = targetFileBytes;
    use(schema, table.spec());
  }

  private void use(Schema newSchema, PartitionSpec newSpec) {
    this.schema = newSchema;
    this.spec = newSpec;
    this.key = newSpec.isUnpartitioned() ? null : new PartitionKey(newSpec, newSchema);
    this.wrapper = newSpec.isUnpartitioned() ? null : new InternalRecordWrapper(newSchema.asStruct());
  }

  /** Where a written row is: its data file, its position in it, and the file's spec and partition. */
  public record RowPosition(String path, long position, PartitionSpec spec, PartitionKey partition) {}

  /** A data file being written, with the number of rows in it so far (the next row's position). */
  private static final class OpenFile {
    final DataWriter<Record> writer;
    final String path;
    final PartitionSpec spec;
    final PartitionKey partition;
    long rows;

    OpenFile(DataWriter<Record> writer, String path, PartitionSpec spec, PartitionKey partition) {
      this.writer = writer;
      this.path = path;
      this.spec = spec;
      this.partition = partition;
    }
  }

  /** The schema of the rows written now. */
  public Schema schema() {
    return schema;
  }

  /**
   * Appends one row, bound to {@link #schema()}.
   *
   * @throws SchemaMismatchException when the row is of another schema (call {@link #useSchema} first)
   */
  public void write(Record row) {
    writeAt(row);
  }

  /**
   * {@link #write} that also says where the row went (for position deletes of a row replaced later
   * in the same round).
   */
  public RowPosition writeAt(Record row) {
    if (row.struct() != schema.asStruct() && !row.struct().equals(schema.asStruct())) {
      throw new SchemaMismatchException("a row of " + row.struct() + " cannot be written to a file of schema "
          + schema.schemaId() + " " + schema.asStruct() + " of partition " + partition + "; move the writer to the row's"
          + " schema first");
    }
    PartitionKey rowKey = null;
    if (key != null) {
      key.partition(wrapper.wrap(row));
      rowKey = key;
    }
    OpenFile file = open.get(rowKey);
    if (file == null) {
      if (open.size() >= MAX_OPEN_FILES) {
        roll();
      }
      PartitionKey stored = rowKey == null ? null : rowKey.copy();
      file = newFile(stored);
      open.put(stored, file);
    }
    file.writer.write(row);
    RowPosition at = new RowPosition(file.path, file.rows++, file.spec, file.partition);
    if (file.writer.length() >= targetFileBytes) {
      close(file);
      open.remove(rowKey);
    }
    return at;
  }

  /**
   * Makes {@code newSchema} the schema of the following rows: when it differs from the current one,
   * the open files are closed and the next ones use it and the table's current spec.
   */
  public void useSchema(Schema newSchema) {
    if (newSchema == schema || newSchema.asStruct().equals(schema.asStruct())) {
      return;
    }
    roll();
    use(newSchema, table.spec());
  }

  /** Closes the open files and hands over every finished file; the writer is then IDLE and empty. */
  public List<DataFile> drain() {
    roll();
    List<DataFile> out = List.copyOf(finished);
    finished.clear();
    return out;
  }

  /** Closes the open files (keeping them out of the table) and forgets the finished ones. */
  public void abort() {
    for (OpenFile f : open.values()) {
      try {
        f.writer.close();
      } catch (IOException e) {
        // the file is abandoned either way
      }
    }
    open.clear();
    finished.clear();
  }

  private void roll() {
    for (OpenFile f : open.values()) {
      close(f);
    }
    open.clear();
  }

  private void close(OpenFile f) {
    DataWriter<Record> w = f.writer;
    try {
      w.close();
    } catch (IOException e) {
      throw new UncheckedIOException("closing a data file of partition " + partition + " failed", e);
    }
    DataFile file = w.toDataFile();
    if (file.recordCount() > 0) {
      finished.add(file);
    }
  }

  private OpenFile newFile(PartitionKey partitionKey) {
    String name = FileFormat.PARQUET.addExtension(filePrefix + "-p" + partition + "-" + (fileSeq++));
    String location = partitionKey == null ? table.locationProvider().newDataLocation(name)
        : table.locationProvider().newDataLocation(spec, partitionKey, name);
    OutputFile file = table.io().newOutputFile(location);
    try {
      return new OpenFile(Parquet.writeData(file)
          .schema(schema)
          .createWriterFunc(GenericParquetWriter::create)
          .withSpec(spec)
          .withPartition(partitionKey)
          .overwrite()
          .build(), file.location(), spec, partitionKey);
    } catch (IOException e) {
      throw new UncheckedIOException("opening data file " + file.location() + " failed", e);
    }
  }
}
