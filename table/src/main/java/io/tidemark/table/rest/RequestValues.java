package io.tidemark.table.rest;

import java.nio.charset.StandardCharsets;
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
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;

/**
 * Refuses the nulls Iceberg's request parsers let through (a property value, a namespace level, a
 * removal, an update) before they reach the catalog: the JDBC catalog stores a null property and
 * then fails every later load of that namespace, so one bad request would poison it for everyone.
 * Names that become directories of the warehouse (namespace levels, table and view names) must be
 * one path segment the file system can hold: not empty, not {@code .} or {@code ..}, no {@code /},
 * {@code \} or NUL, at most {@value #MAX_NAME_BYTES} bytes of UTF-8; otherwise the create would
 * fail deep in the FileIO (500) or place files outside the namespace's directory.
 * Stateless.
 */
final class RequestValues {

  /** Longest name, in UTF-8 bytes: a path segment on common file systems. */
  static final int MAX_NAME_BYTES = 255;

  private RequestValues() {}

  /** Throws {@link IllegalArgumentException} (400) naming the first null in {@code request}. */
  static void check(RESTRequest request) {
    switch (request) {
      case CreateNamespaceRequest r -> {
        levels(r.namespace());
        if (r.namespace() != null) {
          for (String level : r.namespace().levels()) {
            segment("namespace level", level);
          }
        }
        map("properties", r.properties());
      }
      case RenameTableRequest r -> {
        if (r.destination() != null) {
          segment("destination name", r.destination().name());
        }
      }
      case UpdateNamespacePropertiesRequest r -> {
        map("updates", r.updates());
        elements("removals", r.removals());
      }
      case CreateTableRequest r -> {
        segment("table name", r.name());
        map("properties", r.properties());
      }
      case CreateViewRequest r -> {
        segment("view name", r.name());
        map("properties", r.properties());
      }
      case UpdateTableRequest r -> updates(r.updates());
      case CommitTransactionRequest r -> {
        elements("table-changes", r.tableChanges());
        r.tableChanges().forEach(change -> updates(change.updates()));
      }
      default -> { }
    }
  }

  private static void segment(String what, String name) {
    if (name == null) {
      return; // Iceberg's validate() reports a missing name
    }
    boolean bad = name.isEmpty() || name.equals(".") || name.equals("..") || name.indexOf('/') >= 0
        || name.indexOf('\\') >= 0 || name.indexOf('\0') >= 0;
    if (bad || name.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
      throw new IllegalArgumentException("the " + what + " must be one path segment: not empty, not . or .., without"
          + " / \\ or NUL, at most " + MAX_NAME_BYTES + " bytes of UTF-8");
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
