package io.tidemark.table.writer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.parquet.Parquet;

/**
 * Writes the rows of one topic partition into Parquet data files in the table's location. A file
 * is rolled when it reaches the target size, when the schema changes ({@link #changeSchema}) and
 * at each commit ({@link #drain}); finished files wait in a list until drained. Files written but
 * never drained (a crash before the commit) are orphans, never part of the table.
 *
 * <p>States: IDLE (no open file) → WRITING (a file is open) → IDLE on roll. Single-threaded: one
 * writer per partition, used by that partition's task only.
 */
public final class TableWriter {

  private final Table table;
  private final int partition;
  private final String filePrefix;
  private final long targetFileBytes;
  private final List<DataFile> finished = new ArrayList<>();
  private Schema schema;
  private DataWriter<Record> open;
  private int fileSeq;
  private long rowsInOpenFile;

  /**
   * @param filePrefix unique per writer instance (e.g. a random id), so that a restarted writer never
   *     overwrites a file of an earlier one
   */
  public TableWriter(Table table, Schema schema, int partition, String filePrefix, long targetFileBytes) {
    this.table = table;
    this.schema = schema;
    this.partition = partition;
    this.filePrefix = filePrefix;
    this.targetFileBytes = targetFileBytes;
  }

  /** Appends one row, which must match the current schema. */
  public void write(Record row) {
    if (open == null) {
      open = newFile();
      rowsInOpenFile = 0;
    }
    open.write(row);
    rowsInOpenFile++;
    if (open.length() >= targetFileBytes) {
      roll();
    }
  }

  /** Closes the open file, if any, so the following rows use {@code newSchema}. */
  public void changeSchema(Schema newSchema) {
    roll();
    this.schema = newSchema;
  }

  /** Closes the open file and hands over every finished file; the writer is then IDLE and empty. */
  public List<DataFile> drain() {
    roll();
    List<DataFile> out = List.copyOf(finished);
    finished.clear();
    return out;
  }

  /** Closes the open file (keeping it out of the table) and forgets the finished ones. */
  public void abort() {
    if (open != null) {
      try {
        open.close();
      } catch (IOException e) {
        // the file is abandoned either way
      }
      open = null;
    }
    finished.clear();
  }

  private void roll() {
    if (open == null) {
      return;
    }
    try {
      open.close();
    } catch (IOException e) {
      throw new UncheckedIOException("closing data file of partition " + partition + " failed", e);
    }
    if (rowsInOpenFile > 0) {
      finished.add(open.toDataFile());
    }
    open = null;
  }

  private DataWriter<Record> newFile() {
    String name = FileFormat.PARQUET.addExtension(filePrefix + "-p" + partition + "-" + (fileSeq++));
    OutputFile file = table.io().newOutputFile(table.locationProvider().newDataLocation(name));
    try {
      return Parquet.writeData(file)
          .schema(schema)
          .createWriterFunc(GenericParquetWriter::create)
          .withSpec(PartitionSpec.unpartitioned())
          .overwrite()
          .build();
    } catch (IOException e) {
      throw new UncheckedIOException("opening data file " + file.location() + " failed", e);
    }
  }
}
