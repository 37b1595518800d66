package io.tidemark.table.maintenance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.table.config.TableTopicConfig;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.inmemory.InMemoryCatalog;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Goal: a compaction racing the commit cycle never makes a row wrong. A round's equality deletes
 * committed between the compaction's read and its commit still delete the rewritten rows (the new
 * files keep the read snapshot's sequence number); a position delete against a rewritten file makes
 * the compaction lose (the commit cycle wins), leaving the table as the round made it, and the next
 * maintenance run compacts it correctly.
 */
class CompactionConflictTest {

  private static final Schema SCHEMA = new Schema(List.of(Types.NestedField.required(1, "id", Types.IntegerType.get()),
      Types.NestedField.optional(2, "val", Types.StringType.get())), Set.of(1));
  private static final TableIdentifier ID = TableIdentifier.of("db", "t");

  private InMemoryCatalog catalog;
  private Table table;
  private int files;

  @BeforeEach
  void createTable() {
    catalog = new InMemoryCatalog();
    catalog.initialize("mem", Map.of());
    catalog.createNamespace(Namespace.of("db"));
    table = catalog.buildTable(ID, SCHEMA).withProperty("format-version", "2").create();
  }

  @AfterEach
  void close() throws IOException {
    catalog.close();
  }

  /** Five small files of three rows each (ids 0-2, 10-12, ... 40-42), one append each. */
  private List<DataFile> fiveSmallFiles() throws IOException {
    List<DataFile> out = new java.util.ArrayList<>();
    for (int f = 0; f < 5; f++) {
      DataFile file = data(Map.of(f * 10, "a", f * 10 + 1, "a", f * 10 + 2, "a"));
      table.newAppend().appendFile(file).commit();
      out.add(file);
    }
    return out;
  }

  private Map<Integer, String> expectedAfterAppends() {
    Map<Integer, String> m = new TreeMap<>();
    for (int f = 0; f < 5; f++) {
      for (int i = 0; i < 3; i++) {
        m.put(f * 10 + i, "a");
      }
    }
    return m;
  }

  @Test
  void anEqualityDeleteCommittedDuringTheRewriteStillAppliesToTheRewrittenRows() throws Exception {
    fiveSmallFiles();
    Snapshot base = table.currentSnapshot();
    List<Compaction.Bin> bins = Compaction.plan(table, base, 1 << 20, 2, 1L << 30, 1000);
    assertThat(bins).hasSize(1);
    Compaction.Rewritten rewritten = Compaction.rewrite(table, bins.getFirst(), 1 << 20, "compact-test");

    // the commit cycle lands an upsert of id 11 meanwhile: equality delete + new row
    table.newRowDelta().addDeletes(eqDelete(11)).addRows(data(Map.of(11, "b"))).commit();
    Compaction.commit(table, base, rewritten);

    table.refresh();
    Map<Integer, String> expected = expectedAfterAppends();
    expected.put(11, "b");
    assertThat(rows()).isEqualTo(expected);
    assertThat(table.currentSnapshot().summary().get("total-data-files")).isEqualTo("2");
  }

  @Test
  void aPositionDeleteAgainstARewrittenFileMakesTheCompactionLoseAndTheNextRunSucceed() throws Exception {
    List<DataFile> small = fiveSmallFiles();
    Snapshot base = table.currentSnapshot();
    Compaction.Rewritten rewritten = Compaction.rewrite(table,
        Compaction.plan(table, base, 1 << 20, 2, 1L << 30, 1000).getFirst(), 1 << 20, "compact-test");

    // the commit cycle deletes row 1 (position 1 of the first file) before the compaction commits
    table.newRowDelta().addDeletes(posDelete(small.getFirst(), 1)).commit();
    Snapshot cycle = table.currentSnapshot();
    assertThatThrownBy(() -> Compaction.commit(table, base, rewritten)).isInstanceOf(ValidationException.class);

    table.refresh();
    assertThat(table.currentSnapshot().snapshotId()).as("the compaction changed nothing").isEqualTo(cycle.snapshotId());
    Map<Integer, String> expected = expectedAfterAppends();
    expected.remove(1);
    assertThat(rows()).isEqualTo(expected);

    TableTopicConfig.Maintenance settings = new TableTopicConfig.Maintenance(true, 1 << 20, false, 0, 1, 3_600_000L);
    try (TableMaintenance maintenance = new TableMaintenance("t", catalog, ID, settings,
        new MaintenanceConfig(3_600_000, 1L << 30, 1000, 600_000, 2), System::currentTimeMillis,
        Executors.newSingleThreadScheduledExecutor())) {
      MaintenanceReport report = maintenance.runNow();
      assertThat(report.lastError()).isEmpty();
      assertThat(report.dataFilesRewritten()).isEqualTo(5);
      assertThat(report.liveDataFiles()).isEqualTo(1);
      assertThat(report.liveDeleteFiles()).as("the position delete no longer applies and is gone").isZero();
    }
    table.refresh();
    assertThat(rows()).isEqualTo(expected);
  }

  private Map<Integer, String> rows() throws IOException {
    Map<Integer, String> out = new TreeMap<>();
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).build()) {
      for (Record r : rows) {
        assertThat(out.put((Integer) r.getField("id"), (String) r.getField("val"))).as("second row of %s", r).isNull();
      }
    }
    return out;
  }

  private String newLocation() {
    return table.locationProvider().newDataLocation(FileFormat.PARQUET.addExtension("test-" + (files++)));
  }

  private DataFile data(Map<Integer, String> rows) throws IOException {
    DataWriter<Record> w = Parquet.writeData(table.io().newOutputFile(newLocation())).schema(SCHEMA)
        .createWriterFunc(GenericParquetWriter::create).withSpec(PartitionSpec.unpartitioned()).overwrite().build();
    try (w) {
      for (Map.Entry<Integer, String> e : new TreeMap<>(rows).entrySet()) {
        GenericRecord r = GenericRecord.create(SCHEMA);
        r.setField("id", e.getKey());
        r.setField("val", e.getValue());
        w.write(r);
      }
    }
    return w.toDataFile();
  }

  private DeleteFile eqDelete(int id) throws IOException {
    Schema idOnly = SCHEMA.select("id");
    EqualityDeleteWriter<Record> w = Parquet.writeDeletes(table.io().newOutputFile(newLocation())).forTable(table)
        .rowSchema(idOnly).equalityFieldIds(1).createWriterFunc(GenericParquetWriter::create)
        .withSpec(PartitionSpec.unpartitioned()).overwrite().buildEqualityWriter();
    try (w) {
      GenericRecord r = GenericRecord.create(idOnly);
      r.setField("id", id);
      w.write(r);
    }
    return w.toDeleteFile();
  }

  private DeleteFile posDelete(DataFile file, long position) throws IOException {
    PositionDeleteWriter<Record> w = new org.apache.iceberg.data.GenericFileWriterFactory.Builder(table)
        .deleteFileFormat(FileFormat.PARQUET).build().newPositionDeleteWriter(
            org.apache.iceberg.encryption.EncryptedFiles.plainAsEncryptedOutput(table.io().newOutputFile(newLocation())),
            PartitionSpec.unpartitioned(), null);
    try (w) {
      w.write(PositionDelete.<Record>create().set(file.location(), position));
    }
    return w.toDeleteFile();
  }
}
