package io.tidemark.server.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.server.Main;
import io.tidemark.server.TidemarkServer;
import io.tidemark.server.storage.EmbeddedStorage;
import io.tidemark.stream.testing.S3ProxyFixture;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: on S3 storage, a REST client told to use Iceberg's S3FileIO reaches the same objects as the server's
 * warehouse: it reads metadata the server wrote, and the server purges files the client wrote.
 */
class TableRestEndpointS3Test {

  private static final Schema SCHEMA = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()));

  @TempDir
  Path dataDir;
  private S3ProxyFixture s3;
  private TidemarkServer server;

  @BeforeAll
  static void checksumsOnlyWhenRequired() {
    // S3Proxy does not take the SDK's default trailing checksums; clients of such stores set the same
    System.setProperty("aws.requestChecksumCalculation", "when_required");
    System.setProperty("aws.responseChecksumValidation", "when_required");
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
    if (s3 != null) {
      s3.close();
    }
  }

  @Test
  void s3FileIoClientsAndTheServerShareTheWarehouse() throws Exception {
    s3 = S3ProxyFixture.start();
    String bucket = s3.newBucket("warehouse");
    server = Main.start(List.of("--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (32L << 20),
        "--set", "kafka.listener.host=127.0.0.1", "--set", "kafka.listener.port=0",
        "--set", "registry.host=127.0.0.1", "--set", "registry.port=0",
        "--set", "table.rest.host=127.0.0.1", "--set", "table.rest.port=0",
        "--set", "controller.voters=" + io.tidemark.server.FreePorts.singleVoter(),
        "--set", "storage.type=s3", "--set", "storage.s3.endpoint=" + s3.endpoint(),
        "--set", "storage.s3.bucket=" + bucket, "--set", "storage.s3.path.style=true",
        "--set", "storage.s3.region=" + S3ProxyFixture.REGION,
        "--set", "storage.s3.access.key=" + s3.accessKey(), "--set", "storage.s3.secret.key=" + s3.secretKey()),
        Map.of(), new EmbeddedStorage());

    // the client brings only the address, its own credentials and its HTTP client choice
    RESTCatalog client = new RESTCatalog();
    client.initialize("tidemark", new HashMap<>(Map.of(
        "uri", "http://127.0.0.1:" + server.tableRestPort().orElseThrow(),
        "s3.access-key-id", s3.accessKey(), "s3.secret-access-key", s3.secretKey(),
        "http-client.type", "urlconnection")));
    TableIdentifier id = TableIdentifier.of(Namespace.of("lake"), "events");
    client.createNamespace(id.namespace());
    Table table = client.createTable(id, SCHEMA, PartitionSpec.unpartitioned());
    FileIO io = table.io();
    assertThat(io.getClass().getName()).isEqualTo("org.apache.iceberg.aws.s3.S3FileIO");
    assertThat(table.location()).startsWith("s3://" + bucket + "/iceberg/");

    // server-written metadata, read by the client's S3FileIO
    String metadata = ((HasTableOperations) table).operations().current().metadataFileLocation();
    assertThat(TableMetadataParser.read(io, metadata).schema().asStruct()).isEqualTo(SCHEMA.asStruct());

    // a client-written file and manifests, committed through the server (the file's content is never read)
    String dataLocation = table.location() + "/data/probe-0.parquet";
    byte[] bytes = "not read by anyone".getBytes(StandardCharsets.UTF_8);
    try (PositionOutputStream out = io.newOutputFile(dataLocation).create()) {
      out.write(bytes);
    }
    DataFile file = DataFiles.builder(table.spec()).withPath(dataLocation).withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(bytes.length).withRecordCount(1).build();
    table.newAppend().appendFile(file).commit();
    List<String> planned = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = client.loadTable(id).newScan().planFiles()) {
      tasks.forEach(t -> planned.add(t.file().location()));
    }
    assertThat(planned).containsExactly(dataLocation);

    // the server's purge reads the client's manifests from the same bucket and deletes the data file
    assertThat(io.newInputFile(dataLocation).exists()).isTrue();
    assertThat(client.dropTable(id, true)).isTrue();
    assertThat(io.newInputFile(dataLocation).exists()).isFalse();
    client.close();
  }
}
