package io.tidemark.table.rest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableCommit;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.view.View;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Goal: the less common parts of the API work with Iceberg's client: nested namespaces, views, transactions. */
class RestCatalogFeaturesTest {

  private static final Schema SCHEMA = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()));

  @TempDir
  Path dir;

  @Test
  void nestedNamespacesTravelAsOnePathSegment() throws Exception {
    // goal: a two-level namespace (sent as a%1Fb) is created, listed under its parent and holds tables
    try (RestFixture fx = new RestFixture(dir)) {
      RESTCatalog client = fx.client();
      Namespace parent = Namespace.of("sales");
      Namespace child = Namespace.of("sales", "emea");
      client.createNamespace(parent);
      client.createNamespace(child);
      assertThat(client.listNamespaces(parent)).containsExactly(child);
      TableIdentifier id = TableIdentifier.of(child, "orders");
      client.createTable(id, SCHEMA);
      assertThat(fx.client().listTables(child)).containsExactly(id);
      assertThat(fx.client().loadTable(id).schema().asStruct()).isEqualTo(SCHEMA.asStruct());
    }
  }

  @Test
  void viewsOfTheEmbeddedCatalogAreServed() throws Exception {
    // goal: the JDBC catalog supports views, so the endpoint creates, lists, loads and drops them
    try (RestFixture fx = new RestFixture(dir)) {
      RESTCatalog client = fx.client();
      Namespace ns = Namespace.of("bi");
      client.createNamespace(ns);
      TableIdentifier id = TableIdentifier.of(ns, "daily");
      client.buildView(id).withSchema(SCHEMA).withDefaultNamespace(ns)
          .withQuery("spark", "SELECT id FROM bi.events").create();
      assertThat(fx.client().listViews(ns)).containsExactly(id);
      View view = fx.client().loadView(id);
      assertThat(view.sqlFor("spark").sql()).isEqualTo("SELECT id FROM bi.events");
      assertThat(client.dropView(id)).isTrue();
      assertThatThrownBy(() -> client.loadView(id)).isInstanceOf(NoSuchViewException.class);
    }
  }

  @Test
  void aTransactionOfOneTableCommitsAndOfTwoIsRefused() throws Exception {
    // goal: /v1/transactions/commit applies a single-table change; several tables get 501 and change nothing
    try (RestFixture fx = new RestFixture(dir)) {
      RESTCatalog client = fx.client();
      Namespace ns = Namespace.of("t");
      client.createNamespace(ns);
      TableIdentifier a = TableIdentifier.of(ns, "a");
      TableIdentifier b = TableIdentifier.of(ns, "b");
      client.createTable(a, SCHEMA);
      client.createTable(b, SCHEMA);

      client.commitTransaction(withProperty(client, a, "k", "1"));
      assertThat(fx.client().loadTable(a).properties()).containsEntry("k", "1");

      TableCommit onA = withProperty(client, a, "k", "2");
      TableCommit onB = withProperty(client, b, "k", "2");
      assertThatThrownBy(() -> client.commitTransaction(onA, onB))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("multi-table transactions");
      assertThat(fx.client().loadTable(a).properties()).containsEntry("k", "1");
      assertThat(fx.client().loadTable(b).properties()).doesNotContainKey("k");
    }
  }

  private static TableCommit withProperty(RESTCatalog client, TableIdentifier id, String key, String value) {
    TableMetadata base = ((HasTableOperations) client.loadTable(id)).operations().current();
    TableMetadata updated = TableMetadata.buildFrom(base).setProperties(java.util.Map.of(key, value)).build();
    return TableCommit.create(id, base, updated);
  }
}
