package io.tidemark.table.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.stream.objectstore.MemoryObjectStorage;
import java.nio.file.Path;
import java.util.Map;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Goal: catalog settings pass through to Iceberg, and the embedded default is a working JDBC catalog on SQLite. */
class TableCatalogConfigTest {

  @TempDir
  Path dir;

  @Test
  void typeSelectsTheImplementationAndOtherKeysPassThrough() {
    // goal: table.catalog.* become Iceberg catalog properties without the prefix
    TableCatalogConfig c = TableCatalogConfig.parse(Map.of(
        "table.catalog.type", "rest", "table.catalog.uri", "http://localhost:8181",
        "table.catalog.credential", "id:secret", "log.dirs", "/x"));
    assertThat(c.type()).isEqualTo(TableCatalogConfig.CatalogType.REST);
    assertThat(c.embedded()).isFalse();
    assertThat(c.icebergProperties())
        .containsEntry(CatalogProperties.CATALOG_IMPL, "org.apache.iceberg.rest.RESTCatalog")
        .containsEntry(CatalogProperties.URI, "http://localhost:8181")
        .containsEntry("credential", "id:secret")
        .doesNotContainKey("log.dirs").doesNotContainKey("type");
    assertThat(TableCatalogConfig.parse(Map.of("table.catalog.type", "glue")).icebergProperties())
        .containsEntry(CatalogProperties.CATALOG_IMPL, "org.apache.iceberg.aws.glue.GlueCatalog");
    assertThatThrownBy(() -> TableCatalogConfig.parse(Map.of("table.catalog.type", "oracle")))
        .hasMessageContaining("table.catalog.type");
  }

  @Test
  void theEmbeddedDefaultKeepsItsCatalogInSqliteAcrossInstances() throws Exception {
    // goal: the default needs no settings, and what one instance creates another instance sees
    TableCatalogConfig c = TableCatalogConfig.parse(Map.of());
    assertThat(c.embedded()).isTrue();
    try (MemoryObjectStorage storage = new MemoryObjectStorage()) {
      Catalog first = c.open(dir, storage, "mem://w/");
      assertThat(first).isInstanceOf(JdbcCatalog.class);
      ((SupportsNamespaces) first).createNamespace(Namespace.of("ns"));
      ((JdbcCatalog) first).close();
      Catalog second = c.open(dir, storage, "mem://w/");
      assertThat(((SupportsNamespaces) second).namespaceExists(Namespace.of("ns"))).isTrue();
      ((JdbcCatalog) second).close();
    }
    assertThat(dir.resolve(TableCatalogConfig.EMBEDDED_DB_FILE)).exists();
  }
}
