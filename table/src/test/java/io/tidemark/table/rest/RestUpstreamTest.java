package io.tidemark.table.rest;

import static io.tidemark.table.rest.RestFixture.readAll;
import static io.tidemark.table.rest.RestFixture.row;
import static io.tidemark.table.rest.RestFixture.writeDataFile;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.table.config.TableCatalogConfig;
import java.io.Closeable;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: table.catalog.type=rest works: a Tidemark REST endpoint whose catalog is a REST catalog pointing at another
 * Tidemark instance serves it faithfully, data and errors included.
 */
class RestUpstreamTest {

  @TempDir
  Path dir;

  @Test
  void aRestCatalogBackedByAnotherInstanceServesTheSameTables() throws Exception {
    try (RestFixture upstream = new RestFixture(dir)) {
      TableCatalogConfig config = TableCatalogConfig.parse(Map.of(
          "table.catalog.type", "rest", "table.catalog.uri", upstream.uri()));
      Catalog backend = config.open(dir.resolve("front"), null, "unused://");
      assertThat(backend).isInstanceOf(RESTCatalog.class);
      IcebergRestServer front = new IcebergRestServer(backend, RestCatalogConfig.defaults(0)).start();
      try {
        RESTCatalog client = new RESTCatalog();
        client.initialize("front", new HashMap<>(Map.of("uri", "http://127.0.0.1:" + front.port(),
            "io-impl", io.tidemark.table.warehouse.LocalFileIO.class.getName()))); // no full Hadoop on this class path
        TableIdentifier id = TableIdentifier.of("proxied", "orders");
        client.createNamespace(id.namespace());
        Table table = client.createTable(id, IcebergRestServerTest.SCHEMA,
            PartitionSpec.builderFor(IcebergRestServerTest.SCHEMA).identity("day").build());
        table.newAppend().appendFile(writeDataFile(table, "p0",
            List.of(row(table, 10L, "ten", LocalDate.of(2026, 5, 1))))).commit();

        // through the front, and directly in the upstream's own JDBC catalog
        assertThat(readAll(client, id)).extracting(r -> r.getField("id")).containsExactly(10L);
        assertThat(readAll(upstream.embedded, id)).extracting(r -> r.getField("name")).containsExactly("ten");

        Table stale = client.loadTable(id);
        client.loadTable(id).updateSchema().addColumn("x", Types.IntegerType.get()).commit();
        assertThatThrownBy(() -> stale.updateSchema().addColumn("y", Types.IntegerType.get()).commit())
            .isInstanceOf(CommitFailedException.class);
        assertThat(upstream.embedded.loadTable(id).schema().findField("x")).isNotNull();
        assertThatThrownBy(() -> client.loadTable(TableIdentifier.of("proxied", "nope")))
            .isInstanceOf(NoSuchTableException.class);
        client.close();
      } finally {
        front.close();
        ((Closeable) backend).close();
      }
    }
  }
}
