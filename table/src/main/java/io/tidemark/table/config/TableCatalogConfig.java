package io.tidemark.table.config;

import io.tidemark.stream.objectstore.ObjectStorage;
import io.tidemark.table.warehouse.Warehouse;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.jdbc.JdbcClientPool;
import org.apache.iceberg.jdbc.UncheckedSQLException;

/**
 * The server's Iceberg catalog settings: {@code table.catalog.type} and every other
 * {@code table.catalog.*} key, passed through (without the prefix) as Iceberg catalog properties.
 * The embedded default is a JDBC catalog on SQLite in the data directory whose warehouse is a
 * {@link Warehouse}: plain files on local storage, objects on S3. Immutable.
 */
public record TableCatalogConfig(CatalogType type, Map<String, String> properties) {

  /** The catalog implementations that can be configured. */
  public enum CatalogType {
    JDBC("org.apache.iceberg.jdbc.JdbcCatalog", "iceberg-core (included) and the JDBC driver of the database"),
    REST("org.apache.iceberg.rest.RESTCatalog", "iceberg-core (included)"),
    /** AWS S3 Tables: Iceberg's REST client against the table bucket's endpoint, SigV4-signed ({@link S3TablesCatalog}). */
    S3TABLES("org.apache.iceberg.rest.RESTCatalog", "iceberg-aws-1.12.0.jar and the AWS SDK auth jars (included)"),
    GLUE("org.apache.iceberg.aws.glue.GlueCatalog", "iceberg-aws-1.12.0.jar and the AWS SDK glue jar (included)"),
    HIVE("org.apache.iceberg.hive.HiveCatalog",
        "iceberg-hive-metastore-1.12.0.jar and a Hive metastore client (hive-metastore with its Hadoop dependencies)"),
    NESSIE("org.apache.iceberg.nessie.NessieCatalog",
        "iceberg-nessie-1.12.0.jar and the Nessie client (org.projectnessie.nessie:nessie-client)");

    final String implClass;
    /** What to add to the server's lib/ directory when {@link #implClass} is missing. */
    final String jars;

    CatalogType(String implClass, String jars) {
      this.implClass = implClass;
      this.jars = jars;
    }
  }

  public static final String PREFIX = "table.catalog.";
  public static final String TYPE = "table.catalog.type";
  public static final String CATALOG_NAME = "tidemark";
  /** The SQLite file of the embedded catalog, under the data directory. */
  public static final String EMBEDDED_DB_FILE = "iceberg-catalog.db";
  private static final int SHARED_INIT_ATTEMPTS = 5;
  private static final long SHARED_INIT_RETRY_MS = 200;
  /** Where the embedded catalog's SQLite file is, when not under the data directory. */
  public static final String EMBEDDED_DB = "table.catalog.embedded.db";

  /** Declared settings (the pass-through {@code table.catalog.*} keys are Iceberg's own). */
  public static final List<TableTopicConfig.Key> KEYS = List.of(
      new TableTopicConfig.Key(TYPE, "jdbc", "Iceberg catalog of the table topics: jdbc (embedded SQLite by default), rest,"
          + " s3tables (AWS S3 Tables: table.catalog.warehouse is the table bucket ARN), glue, hive or nessie. Every"
          + " other table.catalog.* key is passed to the catalog as an Iceberg property (uri, warehouse, credential,"
          + " ...)."),
      new TableTopicConfig.Key(EMBEDDED_DB, "", "SQLite file of the embedded jdbc catalog (no table.catalog.uri given);"
          + " empty: data.dir/" + EMBEDDED_DB_FILE + ". Brokers of one machine share one catalog by naming the same"
          + " file; brokers on several machines need a catalog they all reach (rest, glue, hive, nessie, or jdbc with a"
          + " uri)."));

  public TableCatalogConfig {
    properties = switch (type) {
      case S3TABLES -> S3TablesCatalog.properties(properties);
      case GLUE -> withDefault(properties, "http-client.type", "urlconnection"); // the AWS SDK HTTP client included
      default -> Map.copyOf(properties);
    };
  }

  private static Map<String, String> withDefault(Map<String, String> properties, String key, String value) {
    Map<String, String> props = new LinkedHashMap<>(properties);
    props.putIfAbsent(key, value);
    return Map.copyOf(props);
  }

  /** Parses {@code table.catalog.*} from the server configs; other keys are ignored. */
  public static TableCatalogConfig parse(Map<String, String> serverConfigs) {
    CatalogType type = CatalogType.JDBC;
    Map<String, String> props = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : serverConfigs.entrySet()) {
      if (e.getKey().equals(TYPE)) {
        String v = e.getValue().trim().toUpperCase(Locale.ROOT);
        try {
          type = CatalogType.valueOf(v);
        } catch (IllegalArgumentException ex) {
          throw new IllegalArgumentException(TYPE + " must be one of jdbc, rest, s3tables, glue, hive, nessie; got "
              + e.getValue(), ex);
        }
      } else if (e.getKey().startsWith(PREFIX)) {
        props.put(e.getKey().substring(PREFIX.length()), e.getValue());
      }
    }
    return new TableCatalogConfig(type, props);
  }

  /** True when no {@code uri} is given for the JDBC type: the embedded SQLite catalog is used. */
  public boolean embedded() {
    return type == CatalogType.JDBC && !properties.containsKey(CatalogProperties.URI);
  }

  /** The Iceberg properties handed to {@link CatalogUtil#buildIcebergCatalog}, with the implementation class. */
  public Map<String, String> icebergProperties() {
    Map<String, String> props = new LinkedHashMap<>(properties);
    props.putIfAbsent(CatalogProperties.CATALOG_IMPL, type.implClass);
    return props;
  }

  /**
   * Opens the catalog. For the embedded default the catalog database is
   * {@code dataDir/iceberg-catalog.db} (or {@link #EMBEDDED_DB}) and new tables go under
   * {@code warehouse.location()} (unless {@code table.catalog.warehouse} is set), read and written
   * through {@code warehouse.io()}. Other types are built by Iceberg from the pass-through
   * properties (their FileIO is Iceberg's) and {@code warehouse} is not used (may be null).
   */
  public Catalog open(Path dataDir, Warehouse warehouse) {
    if (embedded()) {
      Map<String, String> props = new LinkedHashMap<>(properties);
      String file = props.remove(EMBEDDED_DB.substring(PREFIX.length()));
      Path db = file == null || file.isBlank() ? dataDir.resolve(EMBEDDED_DB_FILE) : Path.of(file);
      String uri = "jdbc:sqlite:" + db.toAbsolutePath();
      props.put(CatalogProperties.URI, uri);
      props.putIfAbsent(CatalogProperties.WAREHOUSE_LOCATION, warehouse.location());
      props.putIfAbsent("jdbc.schema-version", "V1");
      return initializeShared(() -> new JdbcCatalog(
          p -> warehouse.io(), p -> new JdbcClientPool(uri, p), true), props);
    }
    Map<String, String> props = icebergProperties();
    requireOnClasspath(props.get(CatalogProperties.CATALOG_IMPL));
    if (type == CatalogType.S3TABLES) {
      requireOnClasspath(S3TablesCatalog.SIGV4_AUTH_MANAGER);
    }
    return CatalogUtil.buildIcebergCatalog(CATALOG_NAME, props, null);
  }

  /** {@link #open(Path, Warehouse)} with the warehouse in {@code storage} at {@code warehouseLocationPrefix + key}. */
  public Catalog open(Path dataDir, ObjectStorage storage, String warehouseLocationPrefix) {
    return open(dataDir, Warehouse.inObjectStorage(storage, warehouseLocationPrefix));
  }

  /**
   * Initializes an embedded catalog whose SQLite file other brokers may be initializing at the same
   * moment: Iceberg creates or upgrades its tables then, and the loser of that race sees a duplicate
   * table or column; a fresh attempt finds the work done.
   */
  private static JdbcCatalog initializeShared(Supplier<JdbcCatalog> create, Map<String, String> props) {
    for (int attempt = 1; ; attempt++) {
      JdbcCatalog catalog = create.get();
      try {
        catalog.initialize(CATALOG_NAME, props);
        return catalog;
      } catch (UncheckedSQLException e) {
        closeQuietly(catalog);
        if (attempt >= SHARED_INIT_ATTEMPTS) {
          throw e;
        }
        try {
          Thread.sleep(SHARED_INIT_RETRY_MS * attempt); // start-up only
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw e;
        }
      }
    }
  }

  private static void closeQuietly(JdbcCatalog catalog) {
    try {
      catalog.close();
    } catch (RuntimeException ignored) {
      // a half-initialized catalog has nothing worth reporting
    }
  }

  /** Fails with the jars to add when the catalog implementation is not on the classpath. */
  void requireOnClasspath(String implClass) {
    try {
      Class.forName(implClass, false, TableCatalogConfig.class.getClassLoader());
    } catch (ClassNotFoundException | LinkageError e) {
      String hint = implClass.equals(type.implClass) ? "; add " + type.jars + " to the server's lib/ directory" : "";
      throw new IllegalArgumentException(TYPE + "=" + type.name().toLowerCase(Locale.ROOT) + " needs the class "
          + implClass + ", which is not on the classpath (" + e + ")" + hint, e);
    }
  }
}
