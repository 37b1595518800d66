package io.tidemark.table.warehouse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.stream.objectstore.LocalObjectStorage;
import io.tidemark.table.config.TableCatalogConfig;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: the local warehouse is plain files at {@code file:} locations that name exactly where the
 * bytes are, written whole or not at all, and tables of the earlier scheme (objects inside the
 * local store at {@code tidemark-objects://local/}) stay readable and writable next to new ones.
 */
class WarehouseTest {

  private static final Schema SCHEMA = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()));

  @TempDir Path dir;

  @Test
  void fileLocationsNameThePlainFile() {
    Path file = dir.resolve("a b/c.parquet").toAbsolutePath();
    assertThat(LocalFileIO.locationOf(file)).isEqualTo("file://" + file);
    assertThat(LocalFileIO.pathOf("file://" + file)).isEqualTo(file);
    assertThat(LocalFileIO.pathOf("file:" + file)).isEqualTo(file);
    assertThat(LocalFileIO.pathOf("file://localhost" + file)).isEqualTo(file);
    assertThatThrownBy(() -> LocalFileIO.pathOf("file://otherhost/x")).hasMessageContaining("otherhost");
    assertThatThrownBy(() -> LocalFileIO.pathOf("file:relative/x")).hasMessageContaining("absolute");
    assertThatThrownBy(() -> LocalFileIO.pathOf("s3://bucket/x")).hasMessageContaining("not a file: location");
  }

  @Test
  void writesArePublishedWholeAndCreateRefusesAnExistingFile() throws IOException {
    FileIO io = new LocalFileIO();
    String location = LocalFileIO.locationOf(dir.resolve("t/metadata/v1.json"));
    try (OutputStream out = io.newOutputFile(location).create()) {
      out.write("{\"a\":1}".getBytes(StandardCharsets.UTF_8));
      assertThat(LocalFileIO.pathOf(location)).as("not visible before close").doesNotExist();
    }
    assertThat(Files.readString(LocalFileIO.pathOf(location))).isEqualTo("{\"a\":1}");
    assertThat(io.newInputFile(location).getLength()).isEqualTo(7);
    assertThat(io.newInputFile(location).location()).isEqualTo(location);
    assertThatThrownBy(() -> io.newOutputFile(location).create()).isInstanceOf(AlreadyExistsException.class);
    try (Stream<Path> files = Files.list(dir.resolve("t/metadata"))) {
      assertThat(files.map(p -> p.getFileName().toString())).containsExactly("v1.json");
    }
    io.deleteFile(location);
    assertThat(io.newInputFile(location).exists()).isFalse();
  }

  @Test
  void aLocalObjectStoreOpeningMidWriteLeavesTheWarehouseFileBeingWritten() throws Exception {
    // goal: the store's start-up clean-up of its own temporary files spares the warehouse inside its directory
    Path objects = dir.resolve("objects");
    String location = LocalFileIO.locationOf(objects.resolve("iceberg/default/t/data/f.parquet"));
    try (OutputStream out = new LocalFileIO().newOutputFile(location).create()) {
      out.write(new byte[] {1, 2, 3});
      new LocalObjectStorage(objects, 1, 8).close();
      out.write(4);
    }
    assertThat(Files.readAllBytes(LocalFileIO.pathOf(location))).containsExactly(1, 2, 3, 4);
  }

  @Test
  void tablesOfTheEarlierLocalSchemeStayReadableAndWritable() throws Exception {
    Path objects = dir.resolve("objects");
    TableIdentifier old = TableIdentifier.of("default", "old");
    TableIdentifier fresh = TableIdentifier.of("default", "fresh");
    try (LocalObjectStorage storage = new LocalObjectStorage(objects, 2, 64)) {
      Catalog before = TableCatalogConfig.parse(Map.of()).open(dir,
          Warehouse.inObjectStorage(storage, Warehouse.LEGACY_LOCAL_PREFIX));
      ((SupportsNamespaces) before).createNamespace(Namespace.of("default"));
      before.createTable(old, SCHEMA, PartitionSpec.unpartitioned());
      ((AutoCloseable) before).close();

      Catalog after = TableCatalogConfig.parse(Map.of()).open(dir,
          Warehouse.inDirectory(objects.resolve(Warehouse.ROOT_NAME), storage));
      Table legacy = after.loadTable(old);
      assertThat(legacy.location()).startsWith(Warehouse.LEGACY_LOCAL_PREFIX);
      legacy.updateSchema().addColumn("note", Types.StringType.get()).commit();
      assertThat(after.loadTable(old).schema().findField("note")).isNotNull();

      Table created = after.createTable(fresh, SCHEMA, PartitionSpec.unpartitioned());
      assertThat(created.location()).isEqualTo(LocalFileIO.locationOf(objects.resolve("iceberg/default/fresh")));
      String metadata = ((org.apache.iceberg.HasTableOperations) created).operations().current().metadataFileLocation();
      assertThat(LocalFileIO.pathOf(metadata)).isRegularFile().startsWith(objects.resolve("iceberg/default/fresh/metadata"));
      // the object store does not see the plain warehouse as objects
      assertThat(storage.list("iceberg").get()).extracting(o -> o.key()).allMatch(k -> k.startsWith("iceberg/default/old/"));
      ((AutoCloseable) after).close();
    }
    Catalog withoutStore = TableCatalogConfig.parse(Map.of()).open(dir,
        Warehouse.inDirectory(objects.resolve(Warehouse.ROOT_NAME), null));
    assertThat(withoutStore.loadTable(fresh).schema().columns()).hasSize(1);
    assertThatThrownBy(() -> Warehouse.inDirectory(objects.resolve(Warehouse.ROOT_NAME), null).io()
        .newInputFile(Warehouse.LEGACY_LOCAL_PREFIX + "iceberg/default/old/metadata/v1.metadata.json"))
        .hasMessageContaining("no object storage is open");
    ((AutoCloseable) withoutStore).close();
  }
}
