package io.tidemark.table.writer;

import io.tidemark.table.convert.InvalidRecordException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.encryption.EncryptedOutputFile;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

/**
 * Writes one topic partition's rows of one round into an upsert table (Iceberg merge-on-read):
 * every id touched in the round gets one <b>equality delete</b> on the id columns, which removes
 * the id's rows of earlier commits (an equality delete applies to data files of lower sequence
 * numbers only, so not to this round's own rows); a row replaced or deleted again later in the
 * same round is removed by a <b>position delete</b> of its file and position, known here because
 * this writer wrote it. After the commit, readers see exactly the latest row per id.
 *
 * <p>Position deletes are written as position delete files (format v2, one per data file, so each
 * references one file) or as deletion vectors in one Puffin file (format v3, where position delete
 * files are no longer allowed). Equality deletes use the table's unpartitioned spec when it has
 * one (a global delete: the id's older row may sit in another partition of the table, for example
 * under {@code day(ts)}); otherwise the row's partition (correct when the partition derives from
 * the ids).
 *
 * <p>Memory: one entry per id touched in the round (bounded by the round's bytes per partition).
 * The ids compare by value with integers and floats widened, so that an id column widened during
 * the round (int to long) still finds its earlier row.
 *
 * <p>States: WRITING → drained (IDLE, empty) at each round. Single-threaded, like {@link TableWriter}.
 */
public final class UpsertWriter {

  /** The id was deleted in this round (its equality delete is written; no live row of the round). */
  private static final TableWriter.RowPosition DELETED = new TableWriter.RowPosition("", -1, null, null);

  private final Table table;
  private final TableWriter data;
  private final List<String> idColumns;
  private final int partition;
  private final String filePrefix;
  private final boolean deletionVectors;
  private final PartitionSpec deleteSpec;
  /** Per id touched in the round: where its live row is, or {@link #DELETED}. */
  private final Map<List<Object>, TableWriter.RowPosition> touched = new HashMap<>();
  /** Positions to delete, per data file of the round. */
  private final Map<String, Positions> positionDeletes = new LinkedHashMap<>();
  private final List<DeleteFile> finishedDeletes = new ArrayList<>();
  private EqualityDeleteWriter<Record> equalityWriter;
  private Schema deleteSchema;
  private int[] equalityIds;
  private int fileSeq;

  private record Positions(PartitionSpec spec, StructLike partition, TreeSet<Long> positions) {}

  /**
   * @param idColumns top-level columns identifying a row; a struct column stands for its primitive fields
   */
  public UpsertWriter(Table table, Schema schema, int partition, String filePrefix, long targetFileBytes,
      List<String> idColumns) {
    this.table = table;
    this.data = new TableWriter(table, schema, partition, filePrefix, targetFileBytes);
    this.idColumns = List.copyOf(idColumns);
    this.partition = partition;
    this.filePrefix = filePrefix;
    this.deletionVectors = TableUtil.formatVersion(table) >= 3;
    this.deleteSpec = table.specs().values().stream().filter(PartitionSpec::isUnpartitioned).findFirst().orElse(null);
  }

  /** The schema of the rows written now. */
  public Schema schema() {
    return data.schema();
  }

  /** See {@link TableWriter#useSchema}. */
  public void useSchema(Schema newSchema) {
    data.useSchema(newSchema);
  }

  /** The field ids of the id columns in {@code schema} (primitive leaves), or why there are none. */
  public static int[] equalityFieldIds(Schema schema, List<String> idColumns) throws InvalidRecordException {
    List<Integer> ids = new ArrayList<>();
    for (String name : idColumns) {
      Types.NestedField f = schema.findField(name);
      if (f == null) {
        throw new InvalidRecordException("the table has no id column " + name);
      }
      leaves(f, ids, name);
    }
    return ids.stream().mapToInt(Integer::intValue).toArray();
  }

  private static void leaves(Types.NestedField f, List<Integer> out, String path) throws InvalidRecordException {
    if (f.type().isPrimitiveType()) {
      out.add(f.fieldId());
    } else if (f.type().isStructType()) {
      for (Types.NestedField child : f.type().asStructType().fields()) {
        leaves(child, out, path + "." + child.name());
      }
    } else {
      throw new InvalidRecordException("id column " + path + " is a " + f.type() + "; ids must be primitives or structs of them");
    }
  }

  /** Writes {@code row} (bound to {@link #schema()}) as its id's latest row. */
  public void upsert(Record row) throws InvalidRecordException {
    List<Object> id = deleteEarlier(row);
    touched.put(id, data.writeAt(row));
  }

  /** Deletes the id of {@code row} (bound to {@link #schema()}; only its id columns matter). */
  public void delete(Record row) throws InvalidRecordException {
    List<Object> id = deleteEarlier(row);
    touched.put(id, DELETED);
  }

  /** Removes the id's rows of earlier commits (once a round) and its live row of this round. */
  private List<Object> deleteEarlier(Record row) throws InvalidRecordException {
    Schema schema = data.schema();
    int[] ids = equalityFieldIds(schema, idColumns);
    Schema projected = TypeUtil.select(schema, java.util.Arrays.stream(ids).boxed().collect(java.util.stream.Collectors.toSet()));
    Record idRow = project(row, projected.asStruct(), schema.asStruct());
    List<Object> key = new ArrayList<>();
    flatten(idRow, key);
    if (key.contains(null)) {
      throw new InvalidRecordException("the row has no value for an id column of " + idColumns);
    }
    TableWriter.RowPosition earlier = touched.get(key);
    if (earlier == null) {
      equalityWriter(projected, ids).write(idRow);
    } else if (earlier != DELETED) {
      positionDeletes.computeIfAbsent(earlier.path(),
          p -> new Positions(earlier.spec(), earlier.partition(), new TreeSet<>())).positions().add(earlier.position());
    }
    return key;
  }

  private EqualityDeleteWriter<Record> equalityWriter(Schema projected, int[] ids) {
    if (equalityWriter != null && java.util.Arrays.equals(ids, equalityIds) && projected.asStruct().equals(deleteSchema.asStruct())) {
      return equalityWriter;
    }
    closeEqualityWriter();
    deleteSchema = projected;
    equalityIds = ids;
    GenericFileWriterFactory factory = new GenericFileWriterFactory.Builder(table)
        .deleteFileFormat(FileFormat.PARQUET)
        .equalityFieldIds(ids)
        .equalityDeleteRowSchema(projected)
        .build();
    PartitionSpec spec = deleteSpec != null ? deleteSpec : table.spec();
    if (!spec.isUnpartitioned()) {
      throw new IllegalStateException("table " + table.name() + " has no unpartitioned spec for its equality deletes");
    }
    equalityWriter = factory.newEqualityDeleteWriter(output("eq-deletes", FileFormat.PARQUET), spec, null);
    return equalityWriter;
  }

  private EncryptedOutputFile output(String kind, FileFormat format) {
    String name = format.addExtension(filePrefix + "-p" + partition + "-" + kind + "-" + (fileSeq++));
    return EncryptedFiles.plainAsEncryptedOutput(table.io().newOutputFile(table.locationProvider().newDataLocation(name)));
  }

  private void closeEqualityWriter() {
    if (equalityWriter == null) {
      return;
    }
    try {
      equalityWriter.close();
    } catch (IOException e) {
      throw new UncheckedIOException("closing an equality delete file of partition " + partition + " failed", e);
    }
    DeleteFile f = equalityWriter.toDeleteFile();
    if (f.recordCount() > 0) {
      finishedDeletes.add(f);
    }
    equalityWriter = null;
  }

  /** The round's files: data files, then equality and position deletes; the writer is then empty. */
  public Drained drain() {
    List<DataFile> dataFiles = data.drain();
    closeEqualityWriter();
    try {
      writePositionDeletes();
    } catch (IOException e) {
      throw new UncheckedIOException("writing position deletes of partition " + partition + " failed", e);
    }
    List<DeleteFile> deletes = List.copyOf(finishedDeletes);
    finishedDeletes.clear();
    touched.clear();
    positionDeletes.clear();
    return new Drained(dataFiles, deletes);
  }

  /** Data and delete files of one round. */
  public record Drained(List<DataFile> dataFiles, List<DeleteFile> deleteFiles) {}

  private void writePositionDeletes() throws IOException {
    if (positionDeletes.isEmpty()) {
      return;
    }
    if (deletionVectors) {
      BaseDVFileWriter dvs = new BaseDVFileWriter(
          () -> output("dv", FileFormat.PUFFIN).encryptingOutputFile(), path -> null);
      try (dvs) {
        for (Map.Entry<String, Positions> e : positionDeletes.entrySet()) {
          for (long pos : e.getValue().positions()) {
            dvs.delete(e.getKey(), pos, e.getValue().spec(), e.getValue().partition());
          }
        }
      }
      finishedDeletes.addAll(dvs.result().deleteFiles());
      return;
    }
    GenericFileWriterFactory factory = new GenericFileWriterFactory.Builder(table).deleteFileFormat(FileFormat.PARQUET).build();
    for (Map.Entry<String, Positions> e : positionDeletes.entrySet()) {
      Positions p = e.getValue();
      PositionDeleteWriter<Record> w = factory.newPositionDeleteWriter(output("pos-deletes", FileFormat.PARQUET), p.spec(),
          p.partition());
      PositionDelete<Record> delete = PositionDelete.create();
      try (w) {
        for (long pos : p.positions()) {
          w.write(delete.set(e.getKey(), pos));
        }
      }
      finishedDeletes.add(w.toDeleteFile());
    }
  }

  /** Forgets the round (files stay orphans, never part of the table). */
  public void abort() {
    data.abort();
    if (equalityWriter != null) {
      try {
        equalityWriter.close();
      } catch (IOException e) {
        // abandoned either way
      }
      equalityWriter = null;
    }
    finishedDeletes.clear();
    touched.clear();
    positionDeletes.clear();
  }

  /** {@code row}'s values of the fields in {@code projected} (a projection of {@code full}). */
  private static Record project(StructLike row, Types.StructType projected, Types.StructType full) {
    GenericRecord out = GenericRecord.create(projected);
    for (Types.NestedField f : projected.fields()) {
      int pos = full.fields().indexOf(full.field(f.fieldId()));
      Object v = row.get(pos, Object.class);
      if (f.type().isStructType() && v != null) {
        v = project((StructLike) v, f.type().asStructType(), full.field(f.fieldId()).type().asStructType());
      }
      out.setField(f.name(), v);
    }
    return out;
  }

  private static void flatten(StructLike row, List<Object> out) {
    for (int i = 0; i < row.size(); i++) {
      Object v = row.get(i, Object.class);
      if (v instanceof StructLike nested) {
        flatten(nested, out);
      } else {
        out.add(normalized(v));
      }
    }
  }

  /** Values equal as ids compare equal whatever the column's width. */
  private static Object normalized(Object v) {
    return switch (v) {
      case Integer i -> i.longValue();
      case Float f -> f.doubleValue();
      case BigDecimal d -> d.stripTrailingZeros();
      case CharSequence cs -> cs.toString();
      case null, default -> v;
    };
  }
}
