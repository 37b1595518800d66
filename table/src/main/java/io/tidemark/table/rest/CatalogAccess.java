package io.tidemark.table.rest;

import io.javalin.http.Context;
import io.tidemark.registry.http.HttpAccess;
import java.util.List;
import java.util.function.Function;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.rest.responses.ListTablesResponse;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Authorizes the Iceberg REST catalog's requests through the Kafka ACLs. A table is authorized as
 * a topic: the table topic that writes it (its {@code table.topic.namespace} and
 * {@code table.topic.table.name}, the topic's name by default), or for a table no topic writes, the
 * topic named {@code <namespace>.<table>} (views alike). So a principal that may READ a topic may
 * read its table, and nothing needs granting beyond the topic's ACLs.
 *
 * <ul>
 *   <li>load a table: READ; table exists (HEAD): DESCRIBE; list tables: only the DESCRIBE-able ones;
 *   <li>commit to a table (update, one-table transaction): WRITE; drop: DELETE;
 *   <li>create or register: CREATE on the cluster or on the table's topic (as CreateTopics);
 *       rename: DELETE on the source and CREATE on the destination;
 *   <li>create a namespace: CREATE on the cluster; drop it or change its properties: ALTER on the
 *       cluster; list, load and HEAD namespaces, and {@code GET /v1/config}: authentication only.
 * </ul>
 *
 * A denied request is answered 403 ({@link ForbiddenException}) before it changes anything.
 * Immutable; thread-safe.
 */
public final class CatalogAccess {

  /** The topic that authorizes a table (see the class comment), given a table identifier. */
  public interface TableTopics extends Function<TableIdentifier, String> {}

  /** Without table topics: each table is the topic {@code <namespace>.<table>}. */
  public static final TableTopics BY_NAME = TableIdentifier::toString;

  private final HttpAccess access;
  private final TableTopics topics;

  public CatalogAccess(HttpAccess access, TableTopics topics) {
    this.access = access;
    this.topics = topics;
  }

  HttpAccess http() {
    return access;
  }

  /** Requires {@code op} on {@code table}'s topic. */
  void table(Context ctx, AclOperation op, TableIdentifier table) {
    if (!allowed(ctx, op, table)) {
      throw denied(ctx, op + " on table " + table);
    }
  }

  /** Requires CREATE on the cluster or on {@code table}'s topic. */
  void create(Context ctx, TableIdentifier table) {
    if (!access.allowedOnCluster(ctx, AclOperation.CREATE) && !allowed(ctx, AclOperation.CREATE, table)) {
      throw denied(ctx, "CREATE on table " + table);
    }
  }

  /** Requires {@code op} on the cluster. */
  void cluster(Context ctx, AclOperation op) {
    if (!access.allowedOnCluster(ctx, op)) {
      throw denied(ctx, op + " on the cluster");
    }
  }

  /** {@code response} with only the tables the principal may DESCRIBE. */
  ListTablesResponse visible(Context ctx, ListTablesResponse response) {
    if (!access.authorizing()) {
      return response;
    }
    List<TableIdentifier> shown = response.identifiers().stream()
        .filter(t -> allowed(ctx, AclOperation.DESCRIBE, t)).toList();
    return ListTablesResponse.builder().addAll(shown).nextPageToken(response.nextPageToken()).build();
  }

  private boolean allowed(Context ctx, AclOperation op, TableIdentifier table) {
    return access.allowed(ctx, op, ResourceType.TOPIC, topics.apply(table));
  }

  private static ForbiddenException denied(Context ctx, String what) {
    return new ForbiddenException("Forbidden: %s is denied %s (docs/authorization.md: tables are authorized as topics)",
        HttpAccess.principal(ctx), what);
  }
}
