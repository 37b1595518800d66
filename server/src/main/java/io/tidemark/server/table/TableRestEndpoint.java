package io.tidemark.server.table;

import io.tidemark.server.config.ServerConfig;
import io.tidemark.server.storage.StorageNode;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.objectstore.ObjectStorage;
import io.tidemark.stream.objectstore.ObjectStorageConfig;
import io.tidemark.table.config.TableCatalogConfig;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.registry.http.HttpAccess;
import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.rest.CatalogAccess;
import io.tidemark.table.rest.IcebergRestServer;
import io.tidemark.table.rest.RestCatalogConfig;
import io.tidemark.table.warehouse.Warehouse;
import java.nio.file.Path;
import java.util.Collection;
import java.util.function.Supplier;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.catalog.Catalog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's built-in Iceberg REST catalog: opens the configured catalog ({@code table.catalog.*};
 * the embedded default keeps its warehouse in this node's object storage) and serves it with an
 * {@link IcebergRestServer}. The embedded warehouse ({@link #warehouse}) is plain files at
 * {@code file:} locations under {@code storage.local.path/iceberg} on local storage, so REST
 * clients need nothing but their standard FileIO and are told none; on S3 it is
 * {@code s3://bucket/iceberg} and clients are told Iceberg's S3FileIO with the storage endpoint,
 * region and addressing style (credentials only when set under {@code table.rest.client.*}). Owns the server, and the catalog when it opened it ({@link #start}) rather than
 * being handed one ({@link #startShared}); closed once by the process.
 */
public final class TableRestEndpoint implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(TableRestEndpoint.class);
  private final Catalog catalog;
  private final boolean ownsCatalog;
  private final IcebergRestServer server;

  private TableRestEndpoint(Catalog catalog, boolean ownsCatalog, IcebergRestServer server) {
    this.catalog = catalog;
    this.ownsCatalog = ownsCatalog;
    this.server = server;
  }

  /**
   * Starts the endpoint, or answers empty when {@code table.rest.enable} is false, or when the
   * embedded catalog is configured and this storage does not expose its object storage (test nodes).
   */
  public static Optional<TableRestEndpoint> start(ServerConfig config, Settings settings, StorageNode storage) {
    RestCatalogConfig rest = RestCatalogConfig.from(settings);
    return start(config, settings, storage,
        new CatalogAccess(HttpAccess.endpointUsersOnly(rest.basicAuthUsers()), CatalogAccess.BY_NAME));
  }

  /** As {@link #start(ServerConfig, Settings, StorageNode)}, authenticating and authorizing with {@code access}. */
  public static Optional<TableRestEndpoint> start(ServerConfig config, Settings settings, StorageNode storage,
      CatalogAccess access) {
    RestCatalogConfig rest = RestCatalogConfig.from(settings);
    if (!rest.enabled()) {
      return Optional.empty();
    }
    TableCatalogConfig catalogConfig = TableCatalogConfig.parse(settings.asMap());
    Optional<ObjectStorage> objects = storage.objectStorage();
    if (catalogConfig.embedded() && objects.isEmpty()) {
      LOG.warn("Iceberg REST catalog not started: this storage exposes no object storage for the embedded warehouse");
      return Optional.empty();
    }
    Catalog catalog = catalogConfig.open(config.dataDir(), warehouse(settings, config.dataDir(), objects.orElse(null)));
    try {
      return Optional.of(serve(config, settings, catalog, true, access));
    } catch (RuntimeException e) {
      closeCatalog(catalog);
      throw e;
    }
  }

  /**
   * Serves a catalog the caller opened and keeps owning (the table topics' own instance, so that one
   * catalog object serves both and commits are not raced between two connections to one database).
   * The caller checks {@code table.rest.enable} first; closing the endpoint leaves the catalog open.
   */
  public static TableRestEndpoint startShared(ServerConfig config, Settings settings, Catalog catalog) {
    RestCatalogConfig rest = RestCatalogConfig.from(settings);
    return serve(config, settings, catalog, false,
        new CatalogAccess(HttpAccess.endpointUsersOnly(rest.basicAuthUsers()), CatalogAccess.BY_NAME));
  }

  private static TableRestEndpoint serve(ServerConfig config, Settings settings, Catalog catalog, boolean owns,
      CatalogAccess access) {
    RestCatalogConfig rest = RestCatalogConfig.from(settings);
    TableCatalogConfig catalogConfig = TableCatalogConfig.parse(settings.asMap());
    IcebergRestServer server = new IcebergRestServer(catalog,
        rest.withClientDefaults(catalogConfig.embedded() ? clientFileIo(settings) : Map.of()), access)
        .start();
    LOG.info("Iceberg REST catalog listening on {}:{} ({} catalog)", rest.host(), server.port(),
        catalogConfig.type().name().toLowerCase(java.util.Locale.ROOT));
    return new TableRestEndpoint(catalog, owns, server);
  }

  /**
   * The embedded catalog's warehouse: objects at {@code s3://bucket/iceberg/...} in {@code storage}
   * on S3; plain files under {@code storage.local.path/iceberg} on local storage (tables of earlier
   * versions, inside the store itself, reached through {@code storage}); objects of the in-memory
   * store otherwise (tests).
   */
  public static Warehouse warehouse(Settings settings, Path dataDir, ObjectStorage storage) {
    return switch (settings.get(ObjectStorageConfig.TYPE)) {
      case "s3" -> Warehouse.inObjectStorage(storage, "s3://" + settings.get(ObjectStorageConfig.S3_BUCKET) + "/");
      case "local" -> Warehouse.inDirectory(localRoot(settings, dataDir).resolve(Warehouse.ROOT_NAME), storage);
      default -> Warehouse.inObjectStorage(storage, Warehouse.LEGACY_LOCAL_PREFIX);
    };
  }

  private static Path localRoot(Settings settings, Path dataDir) {
    return settings.contains(ObjectStorageConfig.LOCAL_PATH)
        ? Path.of(settings.get(ObjectStorageConfig.LOCAL_PATH)) : dataDir.resolve("objects");
  }

  /**
   * The catalog properties REST clients need to read and write the embedded warehouse's files:
   * S3FileIO and the store's address on S3; nothing on local storage (plain {@code file:} locations,
   * which every engine's standard FileIO reads).
   */
  static Map<String, String> clientFileIo(Settings settings) {
    Map<String, String> props = new LinkedHashMap<>();
    if (settings.get(ObjectStorageConfig.TYPE).equals("s3")) {
      props.put("io-impl", "org.apache.iceberg.aws.s3.S3FileIO");
      String endpoint = settings.get(ObjectStorageConfig.S3_ENDPOINT);
      if (!endpoint.isEmpty()) {
        props.put("s3.endpoint", endpoint);
      }
      props.put("s3.path-style-access", Boolean.toString(settings.get(ObjectStorageConfig.S3_PATH_STYLE)));
      props.put("client.region", settings.get(ObjectStorageConfig.S3_REGION));
    }
    return props;
  }

  /**
   * The topic whose ACLs authorize a table: the table topic writing it (its namespace and table name
   * configs), else {@code <namespace>.<table>}. Reads the broker's current topics on each call.
   */
  public static CatalogAccess.TableTopics tableTopics(Supplier<Collection<TopicInfo>> topics) {
    return id -> {
      for (TopicInfo topic : topics.get()) {
        if (!"true".equalsIgnoreCase(topic.configs().get(TableTopicConfig.ENABLE))) {
          continue;
        }
        try {
          TableTopicConfig table = TableTopicConfig.parse(topic.configs());
          if (table.namespace().equals(id.namespace().toString()) && table.tableNameFor(topic.name()).equals(id.name())) {
            return topic.name();
          }
        } catch (RuntimeException e) {
          // a topic whose table configs do not parse writes no table
        }
      }
      return id.toString();
    };
  }

  public int port() {
    return server.port();
  }

  @Override
  public void close() {
    server.close();
    if (ownsCatalog) {
      closeCatalog(catalog);
    }
  }

  private static void closeCatalog(Catalog catalog) {
    if (catalog instanceof AutoCloseable closeable) {
      try {
        closeable.close();
      } catch (Exception e) {
        LOG.warn("closing the Iceberg catalog failed", e);
      }
    }
  }
}
