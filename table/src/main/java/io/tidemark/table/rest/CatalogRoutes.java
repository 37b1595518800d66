package io.tidemark.table.rest;

import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.Handler;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.catalog.ViewCatalog;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.rest.CatalogHandlers;
import org.apache.iceberg.rest.Endpoint;
import org.apache.iceberg.rest.RESTCatalogProperties;
import org.apache.iceberg.rest.RESTRequest;
import org.apache.iceberg.rest.RESTUtil;
import org.apache.iceberg.rest.requests.CommitTransactionRequest;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.CreateViewRequest;
import org.apache.iceberg.rest.requests.RegisterTableRequest;
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ConfigResponse;
import org.apache.kafka.common.acl.AclOperation;

/**
 * The REST catalog API's routes (no prefix: paths start at {@code /v1/namespaces}) over one
 * {@link Catalog}, each delegating to Iceberg's {@link CatalogHandlers} so that requirements,
 * updates, paging and stage-create behave as Iceberg's reference semantics. Views are served when
 * the catalog is a {@link ViewCatalog}, otherwise answered 501; a transaction of more than one
 * table is answered 501 because the catalogs behind this endpoint commit one table at a time.
 *
 * <p>Handlers run on Jetty's request threads; the catalog must be thread-safe (Iceberg's JDBC, REST,
 * Glue, Hive and Nessie catalogs are). Stateless apart from the catalog.
 */
final class CatalogRoutes {

  /** Separator of namespace levels in a path segment once decoded (the spec's %1F). */
  private static final String LEVEL_SEPARATOR = "\u001f";

  private final Catalog catalog;
  private final SupportsNamespaces namespaces;
  private final ViewCatalog views;
  private final Map<String, String> clientOverrides;
  private final RestJson json;
  private final CatalogAccess access;

  CatalogRoutes(Catalog catalog, Map<String, String> clientOverrides, RestJson json, CatalogAccess access) {
    this.access = access;
    if (!(catalog instanceof SupportsNamespaces ns)) {
      throw new IllegalArgumentException("catalog " + catalog.name() + " (" + catalog.getClass().getName()
          + ") does not support namespaces, which the REST catalog API needs");
    }
    this.catalog = catalog;
    this.namespaces = ns;
    this.views = catalog instanceof ViewCatalog v ? v : null;
    this.clientOverrides = Map.copyOf(clientOverrides);
    this.json = json;
  }

  void register(Javalin app) {
    app.get("/v1/config", ctx -> respond(ctx, config()));

    app.get("/v1/namespaces", ctx -> respond(ctx, paged(ctx)
        ? CatalogHandlers.listNamespaces(namespaces, parentOf(ctx), ctx.queryParam("pageToken"), ctx.queryParam("pageSize"))
        : CatalogHandlers.listNamespaces(namespaces, parentOf(ctx))));
    app.post("/v1/namespaces", ctx -> {
      access.cluster(ctx, AclOperation.CREATE);
      respond(ctx, CatalogHandlers.createNamespace(namespaces, body(ctx, CreateNamespaceRequest.class)));
    });
    app.get("/v1/namespaces/{ns}", ctx -> respond(ctx, CatalogHandlers.loadNamespace(namespaces, namespace(ctx))));
    app.head("/v1/namespaces/{ns}", ctx -> {
      CatalogHandlers.namespaceExists(namespaces, namespace(ctx));
      ctx.status(204);
    });
    app.delete("/v1/namespaces/{ns}", ctx -> {
      access.cluster(ctx, AclOperation.ALTER);
      CatalogHandlers.dropNamespace(namespaces, namespace(ctx));
      ctx.status(204);
    });
    app.post("/v1/namespaces/{ns}/properties", ctx -> {
      access.cluster(ctx, AclOperation.ALTER);
      respond(ctx, CatalogHandlers.updateNamespaceProperties(namespaces, namespace(ctx),
          body(ctx, UpdateNamespacePropertiesRequest.class)));
    });

    app.get("/v1/namespaces/{ns}/tables", ctx -> respond(ctx, access.visible(ctx, paged(ctx)
        ? CatalogHandlers.listTables(catalog, namespace(ctx), ctx.queryParam("pageToken"), ctx.queryParam("pageSize"))
        : CatalogHandlers.listTables(catalog, namespace(ctx)))));
    app.post("/v1/namespaces/{ns}/tables", this::createTable);
    app.post("/v1/namespaces/{ns}/register", ctx -> {
      RegisterTableRequest request = body(ctx, RegisterTableRequest.class);
      access.create(ctx, TableIdentifier.of(namespace(ctx), request.name()));
      respond(ctx, CatalogHandlers.registerTable(catalog, existing(namespace(ctx)), request));
    });
    app.get("/v1/namespaces/{ns}/tables/{table}", ctx -> {
      access.table(ctx, AclOperation.READ, table(ctx));
      respond(ctx, CatalogHandlers.loadTable(catalog, table(ctx), snapshotMode(ctx)));
    });
    app.head("/v1/namespaces/{ns}/tables/{table}", ctx -> {
      access.table(ctx, AclOperation.DESCRIBE, table(ctx));
      CatalogHandlers.tableExists(catalog, table(ctx));
      ctx.status(204);
    });
    app.post("/v1/namespaces/{ns}/tables/{table}", ctx -> {
      access.table(ctx, AclOperation.WRITE, table(ctx));
      respond(ctx, CatalogHandlers.updateTable(catalog, table(ctx), body(ctx, UpdateTableRequest.class)));
    });
    app.delete("/v1/namespaces/{ns}/tables/{table}", this::dropTable);
    app.post("/v1/namespaces/{ns}/tables/{table}/metrics", notImplemented("metrics reports are not collected"));
    app.post("/v1/tables/rename", ctx -> {
      RenameTableRequest request = body(ctx, RenameTableRequest.class);
      access.table(ctx, AclOperation.DELETE, request.source());
      access.create(ctx, request.destination());
      CatalogHandlers.renameTable(catalog, request);
      ctx.status(204);
    });
    app.post("/v1/transactions/commit", this::commitTransaction);
    registerViews(app);
  }

  private void registerViews(Javalin app) {
    if (views == null) {
      Handler none = notImplemented("the configured catalog (" + catalog.getClass().getSimpleName()
          + ") does not support views");
      app.get("/v1/namespaces/{ns}/views", none);
      app.post("/v1/namespaces/{ns}/views", none);
      app.get("/v1/namespaces/{ns}/views/{view}", none);
      app.head("/v1/namespaces/{ns}/views/{view}", none);
      app.post("/v1/namespaces/{ns}/views/{view}", none);
      app.delete("/v1/namespaces/{ns}/views/{view}", none);
      app.post("/v1/views/rename", none);
      return;
    }
    app.get("/v1/namespaces/{ns}/views", ctx -> respond(ctx, access.visible(ctx, paged(ctx)
        ? CatalogHandlers.listViews(views, namespace(ctx), ctx.queryParam("pageToken"), ctx.queryParam("pageSize"))
        : CatalogHandlers.listViews(views, namespace(ctx)))));
    app.post("/v1/namespaces/{ns}/views", ctx -> {
      CreateViewRequest request = body(ctx, CreateViewRequest.class);
      access.create(ctx, TableIdentifier.of(namespace(ctx), request.name()));
      respond(ctx, CatalogHandlers.createView(views, namespace(ctx), request));
    });
    app.get("/v1/namespaces/{ns}/views/{view}", ctx -> {
      access.table(ctx, AclOperation.READ, view(ctx));
      respond(ctx, CatalogHandlers.loadView(views, view(ctx)));
    });
    app.head("/v1/namespaces/{ns}/views/{view}", ctx -> {
      access.table(ctx, AclOperation.DESCRIBE, view(ctx));
      CatalogHandlers.viewExists(views, view(ctx));
      ctx.status(204);
    });
    app.post("/v1/namespaces/{ns}/views/{view}", ctx -> {
      access.table(ctx, AclOperation.WRITE, view(ctx));
      respond(ctx, CatalogHandlers.updateView(views, view(ctx), body(ctx, UpdateTableRequest.class)));
    });
    app.delete("/v1/namespaces/{ns}/views/{view}", ctx -> {
      access.table(ctx, AclOperation.DELETE, view(ctx));
      CatalogHandlers.dropView(views, view(ctx));
      ctx.status(204);
    });
    app.post("/v1/views/rename", ctx -> {
      RenameTableRequest request = body(ctx, RenameTableRequest.class);
      access.table(ctx, AclOperation.DELETE, request.source());
      access.create(ctx, request.destination());
      CatalogHandlers.renameView(views, request);
      ctx.status(204);
    });
  }

  /** What {@code GET /v1/config} answers: the client overrides and the endpoints served. */
  ConfigResponse config() {
    List<Endpoint> endpoints = new ArrayList<>(List.of(
        Endpoint.V1_LIST_NAMESPACES, Endpoint.V1_LOAD_NAMESPACE, Endpoint.V1_NAMESPACE_EXISTS,
        Endpoint.V1_CREATE_NAMESPACE, Endpoint.V1_UPDATE_NAMESPACE, Endpoint.V1_DELETE_NAMESPACE,
        Endpoint.V1_LIST_TABLES, Endpoint.V1_LOAD_TABLE, Endpoint.V1_TABLE_EXISTS, Endpoint.V1_CREATE_TABLE,
        Endpoint.V1_UPDATE_TABLE, Endpoint.V1_DELETE_TABLE, Endpoint.V1_RENAME_TABLE, Endpoint.V1_REGISTER_TABLE,
        Endpoint.V1_COMMIT_TRANSACTION));
    if (views != null) {
      endpoints.addAll(List.of(Endpoint.V1_LIST_VIEWS, Endpoint.V1_LOAD_VIEW, Endpoint.V1_VIEW_EXISTS,
          Endpoint.V1_CREATE_VIEW, Endpoint.V1_UPDATE_VIEW, Endpoint.V1_DELETE_VIEW, Endpoint.V1_RENAME_VIEW));
    }
    return ConfigResponse.builder().withOverrides(new java.util.HashMap<>(clientOverrides)).withEndpoints(endpoints).build();
  }

  private void createTable(Context ctx) throws Exception {
    CreateTableRequest request = body(ctx, CreateTableRequest.class);
    access.create(ctx, TableIdentifier.of(namespace(ctx), request.name()));
    Namespace ns = existing(namespace(ctx));
    respond(ctx, request.stageCreate()
        ? CatalogHandlers.stageTableCreate(catalog, ns, request)
        : CatalogHandlers.createTable(catalog, ns, request));
  }

  private void dropTable(Context ctx) {
    access.table(ctx, AclOperation.DELETE, table(ctx));
    if (Boolean.parseBoolean(ctx.queryParam("purgeRequested"))) {
      CatalogHandlers.purgeTable(catalog, table(ctx));
    } else {
      CatalogHandlers.dropTable(catalog, table(ctx));
    }
    ctx.status(204);
  }

  /**
   * A transaction of one table is that table's commit. More than one table would need an atomic
   * multi-table commit, which none of the catalogs behind this endpoint offers through Iceberg's
   * catalog API; committing them one by one could leave half a transaction, so it is refused.
   */
  private void commitTransaction(Context ctx) throws Exception {
    CommitTransactionRequest request = body(ctx, CommitTransactionRequest.class);
    if (request.tableChanges().size() != 1) {
      throw new RestErrors.NotImplemented("multi-table transactions are not supported by this catalog ("
          + request.tableChanges().size() + " tables in the request); commit each table on its own");
    }
    UpdateTableRequest change = request.tableChanges().getFirst();
    if (change.identifier() == null) {
      throw new IllegalArgumentException("a table change in a transaction needs its identifier");
    }
    access.table(ctx, AclOperation.WRITE, change.identifier());
    CatalogHandlers.updateTable(catalog, change.identifier(), change);
    ctx.status(204);
  }

  // ---------------------------------------------------------------- request parts

  private <T extends RESTRequest> T body(Context ctx, Class<T> type) throws Exception {
    return json.read(ctx.bodyAsBytes(), type);
  }

  private void respond(Context ctx, Object response) throws Exception {
    ctx.contentType("application/json").result(json.write(response));
  }

  /** {@code ns}, checked to exist: some catalogs (JDBC) would otherwise create tables in a namespace nobody made. */
  private Namespace existing(Namespace ns) {
    if (!namespaces.namespaceExists(ns)) {
      throw new NoSuchNamespaceException("Namespace does not exist: %s", ns);
    }
    return ns;
  }

  /** Whether the client asked for a page; without {@code pageSize} the whole listing is answered. */
  private static boolean paged(Context ctx) {
    String size = ctx.queryParam("pageSize");
    return size != null && !size.isEmpty();
  }

  private static Namespace namespace(Context ctx) {
    return Namespace.of(ctx.pathParam("ns").split(LEVEL_SEPARATOR, -1));
  }

  private static TableIdentifier table(Context ctx) {
    return TableIdentifier.of(namespace(ctx), ctx.pathParam("table"));
  }

  private static TableIdentifier view(Context ctx) {
    return TableIdentifier.of(namespace(ctx), ctx.pathParam("view"));
  }

  private static Namespace parentOf(Context ctx) {
    String parent = ctx.queryParam("parent");
    return parent == null || parent.isEmpty() ? Namespace.empty() : RESTUtil.namespaceFromQueryParam(parent);
  }

  private static RESTCatalogProperties.SnapshotMode snapshotMode(Context ctx) {
    String mode = ctx.queryParam("snapshots");
    if (mode == null || mode.isEmpty()) {
      return RESTCatalogProperties.SnapshotMode.ALL;
    }
    try {
      return RESTCatalogProperties.SnapshotMode.valueOf(mode.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("snapshots must be all or refs, got " + mode, e);
    }
  }

  private static Handler notImplemented(String message) {
    return ctx -> {
      throw new RestErrors.NotImplemented(message);
    };
  }
}
