package io.tidemark.server;

import io.tidemark.table.config.TableCatalogConfig;
import io.tidemark.table.warehouse.Warehouse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;

/** Reads a table topic's table from a server's data directory (embedded catalog) with Iceberg's generic reader. */
final class TableFiles {

  private TableFiles() {}

  /** Every row of {@code default.<table>}, or an empty list while the table does not exist. */
  static List<Record> rows(Path dataDir, String table) {
    return rows(dataDir.resolve(TableCatalogConfig.EMBEDDED_DB_FILE), dataDir.resolve("objects"), table);
  }

  /** Every row of {@code default.<table>} of the embedded catalog in {@code catalogDb} over the objects in {@code objects}. */
  static List<Record> rows(Path catalogDb, Path objects, String table) {
    TableIdentifier id = TableIdentifier.of("default", table);
    try {
      // plain files only: opening a second object store on a running server's directory would clean its temporary files
      Catalog catalog = TableCatalogConfig.parse(Map.of(TableCatalogConfig.EMBEDDED_DB, catalogDb.toString()))
          .open(catalogDb.getParent(), Warehouse.inDirectory(objects.resolve(Warehouse.ROOT_NAME), null));
      try {
        if (!catalog.tableExists(id)) {
          return List.of();
        }
        List<Record> out = new ArrayList<>();
        try (CloseableIterable<Record> rows = IcebergGenerics.read(catalog.loadTable(id)).build()) {
          rows.forEach(r -> out.add(r.copy()));
        }
        return out;
      } finally {
        if (catalog instanceof AutoCloseable c) {
          c.close();
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
