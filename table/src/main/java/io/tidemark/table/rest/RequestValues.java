package io.tidemark.table.rest;

import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.MetadataUpdate;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.rest.RESTRequest;
import org.apache.iceberg.rest.requests.CommitTransactionRequest;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.CreateViewRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;

/**
 * Refuses the nulls Iceberg's request parsers let through (a property value, a namespace level, a
 * removal, an update) before they reach the catalog: the JDBC catalog stores a null property and
 * then fails every later load of that namespace, so one bad request would poison it for everyone.
 * Stateless.
 */
final class RequestValues {

  private RequestValues() {}

  /** Throws {@link IllegalArgumentException} (400) naming the first null in {@code request}. */
  static void check(RESTRequest request) {
    switch (request) {
      case CreateNamespaceRequest r -> {
        levels(r.namespace());
        map("properties", r.properties());
      }
      case UpdateNamespacePropertiesRequest r -> {
        map("updates", r.updates());
        elements("removals", r.removals());
      }
      case CreateTableRequest r -> map("properties", r.properties());
      case CreateViewRequest r -> map("properties", r.properties());
      case UpdateTableRequest r -> updates(r.updates());
      case CommitTransactionRequest r -> {
        elements("table-changes", r.tableChanges());
        r.tableChanges().forEach(change -> updates(change.updates()));
      }
      default -> { }
    }
  }

  private static void levels(Namespace namespace) {
    if (namespace != null) {
      elements("namespace", Arrays.asList(namespace.levels()));
    }
  }

  private static void updates(List<MetadataUpdate> updates) {
    elements("updates", updates);
    for (MetadataUpdate update : updates) {
      if (update instanceof MetadataUpdate.SetProperties set) {
        map("updates", set.updated());
      } else if (update instanceof MetadataUpdate.RemoveProperties remove) {
        elements("removals", remove.removed());
      }
    }
  }

  private static void map(String field, Map<String, String> values) {
    if (values == null) {
      return;
    }
    values.forEach((key, value) -> {
      if (key == null || value == null) {
        throw new IllegalArgumentException("\"" + field + "\" must not hold null keys or values (key " + key + ")");
      }
    });
  }

  private static void elements(String field, Collection<?> values) {
    if (values != null && values.stream().anyMatch(v -> v == null)) {
      throw new IllegalArgumentException("\"" + field + "\" must not hold null elements");
    }
  }
}
