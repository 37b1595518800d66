package io.tidemark.table.rest;

import io.tidemark.stream.objectstore.LocalObjectStorage;
import io.tidemark.table.config.TableCatalogConfig;
import io.tidemark.table.warehouse.LocalFileIO;
import io.tidemark.table.warehouse.Warehouse;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.rest.RESTCatalog;

/**
 * The embedded default warehouse (JDBC on SQLite, local object storage) served by an
 * {@link IcebergRestServer} on an ephemeral port, and Iceberg's own {@link RESTCatalog} clients of it.
 */
final class RestFixture implements AutoCloseable {

  final Path dir;
  final LocalObjectStorage storage;
  final Catalog embedded;
  final IcebergRestServer server;
  private final List<AutoCloseable> opened = new ArrayList<>();

  RestFixture(Path dir) {
    this(dir, RestCatalogConfig.defaults(0));
  }

  RestFixture(Path dir, RestCatalogConfig config) {
    this.dir = dir;
    this.storage = new LocalObjectStorage(dir.resolve("objects"), 2, 64);
    this.embedded = TableCatalogConfig.parse(Map.of()).open(dir,
        Warehouse.inDirectory(dir.resolve("objects").resolve(Warehouse.ROOT_NAME), storage));
    this.server = new IcebergRestServer(embedded, config).start();
  }

  String uri() {
    return "http://127.0.0.1:" + server.port();
  }

  /**
   * A new REST client, as Spark or PyIceberg would open one, with the endpoint's address. Its FileIO
   * is {@link LocalFileIO}, which reads the warehouse's plain {@code file:} files as Iceberg's
   * standard {@code HadoopFileIO} would, because this test class path carries no full Hadoop; the
   * standard FileIO itself is proven by {@code IcebergStandardReaderTest} in a separate JVM.
   */
  RESTCatalog client(Map<String, String> extra) {
    RESTCatalog client = new RESTCatalog();
    Map<String, String> props = new HashMap<>(extra);
    props.putIfAbsent("io-impl", LocalFileIO.class.getName());
    props.put("uri", uri());
    client.initialize("tidemark", props);
    opened.add(client);
    return client;
  }

  RESTCatalog client() {
    return client(Map.of());
  }

  /** Writes {@code rows} (all of one partition) into one Parquet data file with Iceberg's generic writer. */
  static DataFile writeDataFile(Table table, String name, List<Record> rows) throws IOException {
    PartitionKey partition = new PartitionKey(table.spec(), table.schema());
    partition.partition(new InternalRecordWrapper(table.schema().asStruct()).wrap(rows.getFirst()));
    String location = table.locationProvider().newDataLocation(table.spec(), partition, name + ".parquet");
    DataWriter<Record> writer = Parquet.writeData(table.io().newOutputFile(location))
        .schema(table.schema())
        .createWriterFunc(GenericParquetWriter::create)
        .withSpec(table.spec())
        .withPartition(table.spec().isUnpartitioned() ? null : partition)
        .overwrite()
        .build();
    try (writer) {
      rows.forEach(writer::write);
    }
    return writer.toDataFile();
  }

  static Record row(Table table, Object... values) {
    GenericRecord r = GenericRecord.create(table.schema());
    for (int i = 0; i < values.length; i++) {
      r.set(i, values[i]);
    }
    return r;
  }

  /** Every row, read with Iceberg's generic reader through {@code catalog}. */
  static List<Record> readAll(Catalog catalog, TableIdentifier id) {
    List<Record> out = new ArrayList<>();
    try (CloseableIterable<Record> rows = IcebergGenerics.read(catalog.loadTable(id)).build()) {
      rows.forEach(r -> out.add(r.copy()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  @Override
  public void close() throws Exception {
    for (AutoCloseable c : opened) {
      c.close();
    }
    server.close();
    if (embedded instanceof Closeable c) {
      c.close();
    }
    storage.close();
  }
}
