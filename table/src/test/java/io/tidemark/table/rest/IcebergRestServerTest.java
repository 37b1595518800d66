package io.tidemark.table.rest;

import static io.tidemark.table.rest.RestFixture.readAll;
import static io.tidemark.table.rest.RestFixture.row;
import static io.tidemark.table.rest.RestFixture.writeDataFile;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Goal: Iceberg's own REST client works end to end against the built-in REST catalog over the embedded warehouse. */
class IcebergRestServerTest {

  static final Schema SCHEMA = new Schema(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "name", Types.StringType.get()),
      Types.NestedField.required(3, "day", Types.DateType.get()));
  static final Namespace NS = Namespace.of("clicks");
  static final TableIdentifier ID = TableIdentifier.of(NS, "events");

  @TempDir
  Path dir;
  RestFixture fx;

  @BeforeEach
  void start() {
    fx = new RestFixture(dir);
  }

  @AfterEach
  void stop() throws Exception {
    fx.close();
  }

  @Test
  void createAppendReadEvolveAndDropThroughTheRestClient() throws Exception {
    // goal: the whole life of a table through RESTCatalog: data written by the client is read back by another client
    RESTCatalog client = fx.client();
    client.createNamespace(NS, new java.util.HashMap<>(Map.of("owner", "web")));
    assertThat(client.listNamespaces()).containsExactly(NS);
    assertThat(client.loadNamespaceMetadata(NS)).containsEntry("owner", "web");
    PartitionSpec spec = PartitionSpec.builderFor(SCHEMA).day("day").build();
    Table table = client.createTable(ID, SCHEMA, spec);
    assertThat(table.spec().fields()).hasSize(1);
    assertThat(client.tableExists(ID)).isTrue();
    assertThat(client.listTables(NS)).containsExactly(ID);

    LocalDate day = LocalDate.of(2026, 12, 2);
    DataFile file = writeDataFile(table, "part-0",
        List.of(row(table, 1L, "a", day), row(table, 2L, "b", day), row(table, 3L, null, day)));
    table.newAppend().appendFile(file).commit();

    RESTCatalog reader = fx.client();
    List<Record> rows = readAll(reader, ID);
    assertThat(rows).extracting(r -> r.getField("id")).containsExactlyInAnyOrder(1L, 2L, 3L);
    assertThat(rows).extracting(r -> r.getField("name")).containsExactlyInAnyOrder("a", "b", null);
    assertThat(reader.loadTable(ID).currentSnapshot().summary()).containsEntry("added-records", "3");
    // the server's own catalog sees the same commit
    assertThat(readAll(fx.embedded, ID)).hasSize(3);

    reader.loadTable(ID).updateSchema().addColumn("referrer", Types.StringType.get()).commit();
    assertThat(client.loadTable(ID).schema().findField("referrer")).isNotNull();
    Table evolved = client.loadTable(ID);
    evolved.newAppend().appendFile(writeDataFile(evolved, "part-1",
        List.of(row(evolved, 4L, "d", day, "search")))).commit();
    assertThat(readAll(reader, ID)).filteredOn(r -> "search".equals(r.getField("referrer"))).hasSize(1);

    client.setProperties(NS, new java.util.HashMap<>(Map.of("team", "growth")));
    client.removeProperties(NS, new java.util.HashSet<>(java.util.Set.of("owner")));
    assertThat(fx.client().loadNamespaceMetadata(NS)).containsEntry("team", "growth").doesNotContainKey("owner");

    assertThatThrownBy(() -> client.dropNamespace(NS)).isInstanceOf(NamespaceNotEmptyException.class);
    String metadataLocation = ((org.apache.iceberg.HasTableOperations) fx.embedded.loadTable(ID))
        .operations().current().metadataFileLocation();
    assertThat(client.dropTable(ID, true)).isTrue();
    assertThat(client.tableExists(ID)).isFalse();
    assertThat(metadataLocation).startsWith("file:");
    assertThat(io.tidemark.table.warehouse.LocalFileIO.pathOf(metadataLocation)).doesNotExist();
    assertThat(client.dropNamespace(NS)).isTrue();
    assertThat(client.namespaceExists(NS)).isFalse();
  }

  @Test
  void errorsArriveAsIcebergExceptionsInTheClient() {
    // goal: 404s and 409s carry the types the REST client turns into the right Iceberg exceptions
    RESTCatalog client = fx.client();
    assertThatThrownBy(() -> client.loadTable(ID)).isInstanceOf(NoSuchTableException.class);
    assertThatThrownBy(() -> client.loadNamespaceMetadata(NS)).isInstanceOf(NoSuchNamespaceException.class);
    assertThatThrownBy(() -> client.createTable(ID, SCHEMA)).isInstanceOf(NoSuchNamespaceException.class);
    client.createNamespace(NS);
    assertThatThrownBy(() -> client.createNamespace(NS)).isInstanceOf(AlreadyExistsException.class);
    client.createTable(ID, SCHEMA);
    assertThatThrownBy(() -> client.createTable(ID, SCHEMA)).isInstanceOf(AlreadyExistsException.class);
    assertThatThrownBy(() -> client.loadTable(TableIdentifier.of(NS, "missing"))).isInstanceOf(NoSuchTableException.class);

    // two writers start from the same schema; the second commit's requirement fails on the server
    Table first = fx.client().loadTable(ID);
    Table second = fx.client().loadTable(ID);
    first.updateSchema().addColumn("a", Types.IntegerType.get()).commit();
    assertThatThrownBy(() -> second.updateSchema().addColumn("b", Types.IntegerType.get()).commit())
        .isInstanceOf(CommitFailedException.class);
    Schema after = client.loadTable(ID).schema();
    assertThat(after.findField("a")).isNotNull();
    assertThat(after.findField("b")).isNull();
  }

  @Test
  void stagedCreateAndRenameWork() throws Exception {
    // goal: a create transaction (stage-create, then one commit with data) and a rename, through the REST client
    RESTCatalog client = fx.client();
    client.createNamespace(NS);
    Transaction create = client.buildTable(ID, SCHEMA).withProperty("format-version", "2").createTransaction();
    assertThat(client.tableExists(ID)).isFalse();
    Table staged = create.table();
    create.newAppend().appendFile(writeDataFile(staged, "staged",
        List.of(row(staged, 7L, "x", LocalDate.of(2026, 1, 1))))).commit();
    create.commitTransaction();
    assertThat(readAll(fx.client(), ID)).extracting(r -> r.getField("id")).containsExactly(7L);

    TableIdentifier renamed = TableIdentifier.of(NS, "events_v2");
    client.renameTable(ID, renamed);
    assertThat(client.tableExists(ID)).isFalse();
    assertThat(readAll(fx.client(), renamed)).hasSize(1);
    assertThatThrownBy(() -> client.renameTable(ID, renamed)).isInstanceOf(NoSuchTableException.class);
  }

  @Test
  void aTableWrittenByTheEmbeddedCatalogIsReadableThroughRest() throws Exception {
    // goal: what the broker writes through the embedded JDBC catalog (object storage FileIO) a REST client reads
    ((org.apache.iceberg.catalog.SupportsNamespaces) fx.embedded).createNamespace(NS);
    Table table = fx.embedded.createTable(ID, SCHEMA, PartitionSpec.builderFor(SCHEMA).identity("name").build());
    table.newAppend()
        .appendFile(writeDataFile(table, "a", List.of(row(table, 1L, "a", LocalDate.of(2026, 3, 1)))))
        .appendFile(writeDataFile(table, "b", List.of(row(table, 2L, "b/c d", LocalDate.of(2026, 3, 2)))))
        .commit();

    RESTCatalog client = fx.client();
    assertThat(client.listTables(NS)).containsExactly(ID);
    List<Record> rows = readAll(client, ID);
    assertThat(rows).extracting(r -> r.getField("name")).containsExactlyInAnyOrder("a", "b/c d");
    assertThat(rows).extracting(r -> r.getField("day"))
        .containsExactlyInAnyOrder(LocalDate.of(2026, 3, 1), LocalDate.of(2026, 3, 2));
  }
}
