package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.server.storage.EmbeddedStorage;
import io.tidemark.stream.objectstore.LocalObjectStorage;
import io.tidemark.table.catalog.CheckingEndpoint;
import io.tidemark.table.catalog.CheckingEndpoint.Reply;
import io.tidemark.table.config.TableCatalogConfig;
import io.tidemark.table.convert.KafkaColumns;
import io.tidemark.table.rest.IcebergRestServer;
import io.tidemark.table.rest.RestCatalogConfig;
import io.tidemark.table.warehouse.LocalFileIO;
import io.tidemark.table.warehouse.Warehouse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: a node whose table topics write to an external Iceberg REST catalog behind OAuth2
 * ({@code table.catalog.type=rest} with credential, oauth2-server-uri and scope) lands every produced record there
 * exactly once, and a reader of that catalog (not of the node) sees exactly those rows. The external catalog is a
 * separate Iceberg REST server (Iceberg's {@code CatalogHandlers} over its own JDBC catalog and warehouse) behind an
 * endpoint that checks the token request and the bearer header of every call.
 */
class ExternalRestCatalogTableTest {

  private static final String TOKEN = "external-catalog-token";

  @TempDir
  Path dir;

  @Test
  void aTableTopicLandsItsRowsInAnExternalOAuth2RestCatalog() throws Exception {
    Path external = dir.resolve("external");
    try (LocalObjectStorage storage = new LocalObjectStorage(external.resolve("objects"), 2, 64)) {
      Catalog catalog = TableCatalogConfig.parse(Map.of()).open(external,
          Warehouse.inDirectory(external.resolve("objects").resolve(Warehouse.ROOT_NAME), storage));
      IcebergRestServer rest = new IcebergRestServer(catalog, RestCatalogConfig.defaults(0)).start();
      List<String> tokenRequests = new ArrayList<>();
      try (CheckingEndpoint endpoint = new CheckingEndpoint("http://127.0.0.1:" + rest.port(), "",
          r -> ("Bearer " + TOKEN).equals(r.header("authorization")) ? null : "Authorization " + r.header("authorization"))) {
        endpoint.route("/oauth/tokens", r -> {
          tokenRequests.add(r.bodyText());
          boolean ok = r.bodyText().contains("grant_type=client_credentials") && r.bodyText().contains("client_id=node")
              && r.bodyText().contains("client_secret=node-secret") && r.bodyText().contains("scope=lake%3Awrite");
          return ok ? new Reply(200, "application/json", "{\"access_token\":\"" + TOKEN + "\",\"token_type\":\"bearer\","
              + "\"expires_in\":3600,\"issued_token_type\":\"urn:ietf:params:oauth:token-type:access_token\"}")
              : new Reply(401, "application/json", "{\"error\":\"invalid_client\"}");
        });
        TidemarkServer server = Main.start(TidemarkServerTest.withPorts("--set", "data.dir=" + dir.resolve("node"),
            "--set", "admin.port=0", "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (32L << 20),
            "--set", "table.rest.enable=false", "--set", "table.catalog.type=rest",
            "--set", "table.catalog.uri=" + endpoint.uri(), "--set", "table.catalog.credential=node:node-secret",
            "--set", "table.catalog.oauth2-server-uri=" + endpoint.uri() + "/oauth/tokens",
            "--set", "table.catalog.scope=lake:write", "--set", "table.catalog.rest.auth.type=oauth2",
            "--set", "table.catalog.io-impl=" + LocalFileIO.class.getName()), Map.of(), new EmbeddedStorage());
        try {
          produceToATableTopic("127.0.0.1:" + server.kafkaPort().orElseThrow());
          Map<Long, String> expected = new TreeMap<>();
          for (long i = 0; i < 50; i++) {
            expected.put(i, "v" + i);
          }
          await().atMost(Duration.ofSeconds(120)).untilAsserted(() ->
              assertThat(valuesByOffset(catalog, TableIdentifier.of("default", "orders"))).isEqualTo(expected));
        } finally {
          server.close();
          rest.close();
        }
        assertThat(endpoint.refusals()).isEmpty();
        assertThat(tokenRequests).isNotEmpty();
        assertThat(endpoint.seen().stream().filter(r -> r.method().equals("POST") && r.rawPath().contains("/orders")))
            .as("commits reached the external catalog").isNotEmpty();
      } finally {
        ((AutoCloseable) catalog).close();
      }
    }
  }

  private static void produceToATableTopic(String bootstrap) throws Exception {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin.createTopics(List.of(new NewTopic("orders", 1, (short) 1).configs(Map.of("table.topic.enable", "true",
          "table.topic.commit.interval.ms", "1000", "table.topic.convert.value.type", "string"))))
          .all().get(60, TimeUnit.SECONDS);
    }
    Map<String, Object> props = new HashMap<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
        ProducerConfig.ACKS_CONFIG, "all"));
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
      for (int i = 0; i < 50; i++) {
        producer.send(new ProducerRecord<>("orders", "k" + i, "v" + i)).get(30, TimeUnit.SECONDS);
      }
    }
  }

  /** The table read straight from the external catalog's own store; fails on an offset written twice. */
  private static Map<Long, String> valuesByOffset(Catalog catalog, TableIdentifier id) throws Exception {
    Map<Long, String> out = new TreeMap<>();
    if (!catalog.tableExists(id)) {
      return out;
    }
    try (CloseableIterable<Record> rows = IcebergGenerics.read(catalog.loadTable(id)).build()) {
      for (Record r : rows) {
        Object value = r.getField(KafkaColumns.VALUE);
        assertThat(out.put((Long) r.getField(KafkaColumns.OFFSET), value == null ? null : value.toString()))
            .as("offset written twice").isNull();
      }
    }
    return out;
  }
}
