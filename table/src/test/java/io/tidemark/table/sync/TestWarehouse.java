package io.tidemark.table.sync;

import io.tidemark.stream.objectstore.LocalObjectStorage;
import io.tidemark.stream.objectstore.ObjectStorage;
import io.tidemark.table.config.TableCatalogConfig;
import io.tidemark.table.warehouse.Warehouse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;

/**
 * The embedded default (JDBC catalog on SQLite, plain-file warehouse beside a local object store)
 * under a temp dir; or, from {@link #inObjectStorage}, the warehouse as objects of an object store
 * through Tidemark's object-storage FileIO, the path a warehouse on S3 takes.
 */
final class TestWarehouse implements AutoCloseable {

  final Path dir;
  final LocalObjectStorage storage;
  /** The store holding the table files as objects, or null for the plain-file warehouse. */
  private final ObjectStorage objects;
  private final List<Catalog> opened = new ArrayList<>();

  TestWarehouse(Path dir) {
    this(dir, null);
  }

  private TestWarehouse(Path dir, ObjectStorage objects) {
    this.dir = dir;
    this.objects = objects;
    this.storage = new LocalObjectStorage(dir.resolve("objects"), 2, 64);
  }

  /** The embedded catalog with its table files as objects of {@code objects} (at {@code s3://warehouse/}), closed with it. */
  static TestWarehouse inObjectStorage(Path dir, ObjectStorage objects) {
    return new TestWarehouse(dir, objects);
  }

  /** A new catalog instance, as a restarted broker (or another engine) would open it. */
  Catalog freshCatalog() {
    Catalog c = TableCatalogConfig.parse(Map.of()).open(dir, objects != null
        ? Warehouse.inObjectStorage(objects, "s3://warehouse/")
        : Warehouse.inDirectory(dir.resolve("objects").resolve(Warehouse.ROOT_NAME), storage));
    opened.add(c);
    return c;
  }

  /** Every row of the table, read with Iceberg's generic reader through a fresh catalog. */
  List<Record> readAll(TableIdentifier id) {
    Table table = freshCatalog().loadTable(id);
    List<Record> out = new ArrayList<>();
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).build()) {
      for (Record r : rows) {
        out.add(r.copy());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  Table load(TableIdentifier id) {
    return freshCatalog().loadTable(id);
  }

  /** Closes every catalog opened so far (the warehouse stays open). */
  void closeCatalogs() throws IOException {
    for (Catalog c : opened) {
      if (c instanceof java.io.Closeable a) {
        a.close();
      }
    }
    opened.clear();
  }

  @Override
  public void close() throws IOException {
    closeCatalogs();
    storage.close();
    if (objects != null) {
      objects.close();
    }
  }
}
