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

  @Test
  void hiveAndNessiePassTheirPropertiesAndNameTheMissingJars() {
    // goal: each external catalog gets its own properties unchanged, and without its jar a clear error says what to add
    // (hive's; nessie's jars are test dependencies of this module)
    Map<String, Map<String, String>> byType = Map.of(
        "hive", Map.of("table.catalog.uri", "thrift://metastore:9083", "table.catalog.warehouse", "s3a://lake/wh"),
        "nessie", Map.of("table.catalog.uri", "http://nessie:19120/api/v2", "table.catalog.ref", "main",
            "table.catalog.warehouse", "s3://lake/wh"));
    Map<String, String> classes = Map.of("hive", "org.apache.iceberg.hive.HiveCatalog",
        "nessie", "org.apache.iceberg.nessie.NessieCatalog");
    Map<String, String> jars = Map.of("hive", "iceberg-hive-metastore", "nessie", "iceberg-nessie");
    for (Map.Entry<String, Map<String, String>> e : byType.entrySet()) {
      Map<String, String> settings = new java.util.HashMap<>(e.getValue());
      settings.put("table.catalog.type", e.getKey());
      TableCatalogConfig c = TableCatalogConfig.parse(settings);
      Map<String, String> expected = new java.util.HashMap<>();
      e.getValue().forEach((k, v) -> expected.put(k.substring("table.catalog.".length()), v));
      expected.put(CatalogProperties.CATALOG_IMPL, classes.get(e.getKey()));
      assertThat(c.icebergProperties()).isEqualTo(expected);
      if (e.getKey().equals("nessie")) {
        continue; // its jars are on the test class path for NessieCatalogConfigTest; the missing-jar error is hive's
      }
      assertThatThrownBy(() -> c.open(dir, null, "unused://"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("table.catalog.type=" + e.getKey())
          .hasMessageContaining(classes.get(e.getKey()))
          .hasMessageContaining(jars.get(e.getKey()));
    }
  }

  @Test
  void glueKeepsItsPropertiesAndUsesTheIncludedHttpClient() {
    // goal: glue is included: its properties pass unchanged, and the SDK HTTP client defaults to the one shipped
    TableCatalogConfig c = TableCatalogConfig.parse(Map.of("table.catalog.type", "glue",
        "table.catalog.warehouse", "s3://lake/wh", "table.catalog.glue.id", "123456789012"));
    assertThat(c.icebergProperties()).isEqualTo(Map.of(CatalogProperties.CATALOG_IMPL,
        "org.apache.iceberg.aws.glue.GlueCatalog", "warehouse", "s3://lake/wh", "glue.id", "123456789012",
        "http-client.type", "urlconnection"));
    assertThat(TableCatalogConfig.parse(Map.of("table.catalog.type", "glue", "table.catalog.http-client.type",
        "apache")).icebergProperties()).containsEntry("http-client.type", "apache");
  }

  @Test
  void anExplicitCatalogImplIsCheckedToo() {
    // goal: table.catalog.catalog-impl overrides the type's class, and a missing one is named in the error
    TableCatalogConfig c = TableCatalogConfig.parse(Map.of("table.catalog.type", "rest",
        "table.catalog.catalog-impl", "com.example.MissingCatalog"));
    assertThat(c.icebergProperties()).containsEntry(CatalogProperties.CATALOG_IMPL, "com.example.MissingCatalog");
    assertThatThrownBy(() -> c.open(dir, null, "unused://")).hasMessageContaining("com.example.MissingCatalog");
  }
}
