package io.tidemark.server.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.server.Main;
import io.tidemark.server.TidemarkServer;
import io.tidemark.server.storage.EmbeddedStorage;
import io.tidemark.server.config.ServerConfig;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.objectstore.LocalObjectStorage;
import io.tidemark.table.config.TableCatalogConfig;
import io.tidemark.table.warehouse.LocalFileIO;
import io.tidemark.table.warehouse.Warehouse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Goal: a node with the broker role serves its Iceberg catalog over REST, and it survives a restart. */
class TableRestEndpointTest {

  private static final Schema SCHEMA = new Schema(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "ts", Types.TimestampType.withZone()));

  @TempDir
  Path dataDir;
  private final List<TidemarkServer> servers = new ArrayList<>();
  /** One voter address for every start of this test (a restart finds its Raft peer there). */
  private final String voter = io.tidemark.server.FreePorts.singleVoter();

  @AfterEach
  void stopAll() {
    servers.forEach(TidemarkServer::close);
  }

  private TidemarkServer start(String... extra) {
    List<String> args = new ArrayList<>(List.of("--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (32L << 20),
        "--set", "kafka.listener.host=127.0.0.1", "--set", "kafka.listener.port=0",
        "--set", "registry.host=127.0.0.1", "--set", "registry.port=0",
        "--set", "table.rest.host=127.0.0.1", "--set", "table.rest.port=0", "--set", "controller.voters=" + voter));
    args.addAll(List.of(extra));
    TidemarkServer server = Main.start(args, Map.of(), new EmbeddedStorage());
    servers.add(server);
    return server;
  }

  private static RESTCatalog client(TidemarkServer server) {
    RESTCatalog client = new RESTCatalog();
    client.initialize("tidemark", new HashMap<>(Map.of("uri", "http://127.0.0.1:" + server.tableRestPort().orElseThrow(),
        "io-impl", LocalFileIO.class.getName()))); // this class path has no full Hadoop for HadoopFileIO
    return client;
  }

  @Test
  void theBrokerServesItsCatalogOverRestAcrossARestart() throws Exception {
    // goal: RESTCatalog against a running server: tables it creates are there after the node restarts
    TidemarkServer first = start();
    TableIdentifier id = TableIdentifier.of("analytics", "clicks");
    try (RESTCatalog client = client(first)) {
      client.createNamespace(Namespace.of("analytics"));
      client.createTable(id, SCHEMA, PartitionSpec.builderFor(SCHEMA).hour("ts").build());
      client.loadTable(id).updateSchema().addColumn("page", Types.StringType.get()).commit();
      assertThat(client.loadTable(id).location())
          .isEqualTo(LocalFileIO.locationOf(dataDir.resolve("objects/iceberg/analytics/clicks")));
      assertThatThrownBy(() -> client.loadTable(TableIdentifier.of("analytics", "nope")))
          .isInstanceOf(NoSuchTableException.class);
    }
    first.close();

    TidemarkServer second = start();
    try (RESTCatalog client = client(second)) {
      assertThat(client.listTables(Namespace.of("analytics"))).containsExactly(id);
      assertThat(client.loadTable(id).schema().findField("page")).isNotNull();
      assertThat(client.loadTable(id).spec().fields()).hasSize(1);
    }
  }

  @Test
  void disabledOrWithoutTheBrokerRoleNothingListens() {
    // goal: table.rest.enable=false turns the endpoint off
    assertThat(start("--set", "table.rest.enable=false").tableRestPort()).isEmpty();
  }

  @Test
  void aSharedCatalogStaysOpenAfterTheEndpointCloses() throws Exception {
    // goal: the table topics can hand their own catalog to the endpoint; the endpoint does not close it
    try (LocalObjectStorage storage = new LocalObjectStorage(dataDir.resolve("objects"), 2, 64)) {
      Catalog catalog = TableCatalogConfig.parse(Map.of()).open(dataDir,
          Warehouse.inDirectory(dataDir.resolve("objects/iceberg"), storage));
      ServerConfig config = ServerConfig.from(Settings.empty().with("data.dir", dataDir.toString()));
      Settings settings = Settings.empty().with("table.rest.host", "127.0.0.1").with("table.rest.port", "0");
      TableRestEndpoint endpoint = TableRestEndpoint.startShared(config, settings, catalog);
      try (RESTCatalog client = new RESTCatalog()) {
        client.initialize("t", new HashMap<>(Map.of("uri", "http://127.0.0.1:" + endpoint.port())));
        client.createNamespace(Namespace.of("shared"));
      }
      endpoint.close();
      assertThat(((SupportsNamespaces) catalog).listNamespaces()).containsExactly(Namespace.of("shared"));
      ((AutoCloseable) catalog).close();
    }
  }

  @Test
  void clientsAreToldHowToReachTheWarehouse() {
    // goal: local storage hands out no FileIO (plain file: locations); S3 hands out S3FileIO with the store's address
    assertThat(TableRestEndpoint.clientFileIo(Settings.empty())).isEmpty();
    assertThat(TableRestEndpoint.warehouse(Settings.empty(), dataDir, null).location())
        .isEqualTo(LocalFileIO.locationOf(dataDir.resolve("objects/iceberg")));
    Settings s3 = Settings.empty().with("storage.type", "s3").with("storage.s3.bucket", "lake")
        .with("storage.s3.endpoint", "http://minio:9000").with("storage.s3.path.style", "true")
        .with("storage.s3.secret.key", "never-sent");
    assertThat(TableRestEndpoint.clientFileIo(s3))
        .containsEntry("io-impl", "org.apache.iceberg.aws.s3.S3FileIO")
        .containsEntry("s3.endpoint", "http://minio:9000")
        .containsEntry("s3.path-style-access", "true")
        .doesNotContainValue("never-sent");
    assertThat(TableRestEndpoint.warehouse(s3, dataDir, null).location()).isEqualTo("s3://lake/iceberg");
  }
}
