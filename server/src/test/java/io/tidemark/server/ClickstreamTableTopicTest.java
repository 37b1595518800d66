package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.registry.client.WireFormat;
import io.tidemark.server.storage.EmbeddedStorage;
import io.tidemark.table.convert.KafkaColumns;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal (the seed scenario): clickstream records, Avro in the Confluent wire format with a schema
 * registered in the built-in registry, produced to a 16-partition table topic, land in the Iceberg
 * table exactly as produced, field by field with the right Kafka columns, read both with Iceberg's
 * generic reader on the embedded catalog and through the built-in REST catalog with Iceberg's
 * REST client.
 */
class ClickstreamTableTopicTest {
  private static final int PARTITIONS = 16;
  private static final int RECORDS = 800;
  private static final Schema CLICK = new Schema.Parser().parse("""
      {"type":"record","name":"Click","namespace":"shop","fields":[
        {"name":"user_id","type":"long"},
        {"name":"url","type":"string"},
        {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
        {"name":"referrer","type":["null","string"],"default":null}]}""");

  /** What the producer sent, by Kafka position. */
  private record Sent(int partition, long offset, String key, long userId, String url, long tsMillis, String referrer) {}

  @TempDir Path dataDir;
  private TidemarkServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void avroClickstreamLandsExactlyAsProducedAndReadsThroughTheRestCatalog() throws Exception {
    // the registry asks for credentials: the table topics read it in-process and need none
    server = Main.start(TidemarkServerTest.withPorts("--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (64L << 20),
        "--set", "registry.auth.basic.users=ingest:s3cret"), Map.of(), new EmbeddedStorage());
    String bootstrap = "127.0.0.1:" + server.kafkaPort().orElseThrow();
    assertThat(registerAs(null, "clickstream-value", CLICK.toString()).statusCode()).isEqualTo(401);
    int schemaId = register("clickstream-value", CLICK.toString());
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin.createTopics(List.of(new NewTopic("clickstream", PARTITIONS, (short) 1).configs(Map.of(
          "table.topic.enable", "true", "table.topic.commit.interval.ms", "1000",
          "table.topic.convert.value.type", "by_schema_id")))).all().get(60, TimeUnit.SECONDS);
    }

    Map<String, Sent> sent = new HashMap<>();
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
      List<Future<RecordMetadata>> acks = new ArrayList<>();
      List<GenericRecord> values = new ArrayList<>();
      long baseTs = 1_764_633_600_000L;
      for (int i = 0; i < RECORDS; i++) {
        GenericRecord click = new GenericData.Record(CLICK);
        click.put("user_id", 1000L + i % 37);
        click.put("url", "/product/" + i);
        click.put("ts", baseTs + i * 1000L);
        click.put("referrer", i % 3 == 0 ? null : "https://search.example/?q=" + i);
        values.add(click);
        acks.add(producer.send(new ProducerRecord<>("clickstream", i % PARTITIONS, "user-" + i,
            WireFormat.frame(schemaId, avro(click)))));
      }
      for (int i = 0; i < RECORDS; i++) {
        RecordMetadata meta = acks.get(i).get(60, TimeUnit.SECONDS);
        GenericRecord v = values.get(i);
        Object referrer = v.get("referrer");
        sent.put(meta.partition() + "/" + meta.offset(), new Sent(meta.partition(), meta.offset(), "user-" + i,
            (Long) v.get("user_id"), v.get("url").toString(), (Long) v.get("ts"), referrer == null ? null : referrer.toString()));
      }
    }

    await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1))
        .until(() -> TableFiles.rows(dataDir, "clickstream").size() >= RECORDS);
    assertExactly(TableFiles.rows(dataDir, "clickstream"), sent);

    try (RESTCatalog rest = new RESTCatalog()) {
      // LocalFileIO: this class path has no full Hadoop for the standard HadoopFileIO (IcebergStandardReaderTest runs that)
      rest.initialize("tidemark", new HashMap<>(Map.of("uri", "http://127.0.0.1:" + server.tableRestPort().orElseThrow(),
          "io-impl", io.tidemark.table.warehouse.LocalFileIO.class.getName())));
      List<Record> rows = new ArrayList<>();
      try (CloseableIterable<Record> read = IcebergGenerics.read(rest.loadTable(TableIdentifier.of("default", "clickstream")))
          .build()) {
        read.forEach(r -> rows.add(r.copy()));
      }
      assertExactly(rows, sent);
    }
  }

  private static void assertExactly(List<Record> rows, Map<String, Sent> sent) {
    assertThat(rows).hasSize(sent.size());
    Map<String, Record> byPosition = new HashMap<>();
    for (Record row : rows) {
      String position = row.getField(KafkaColumns.PARTITION) + "/" + row.getField(KafkaColumns.OFFSET);
      assertThat(byPosition.put(position, row)).as("row at %s written twice", position).isNull();
    }
    assertThat(byPosition.keySet()).isEqualTo(sent.keySet());
    sent.forEach((position, s) -> {
      Record row = byPosition.get(position);
      assertThat(row.getField(KafkaColumns.KEY)).as("key at %s", position).isEqualTo(s.key());
      assertThat(row.getField("user_id")).as("user_id at %s", position).isEqualTo(s.userId());
      assertThat(row.getField("url")).as("url at %s", position).isEqualTo(s.url());
      assertThat(((OffsetDateTime) row.getField("ts")).toInstant().toEpochMilli()).as("ts at %s", position)
          .isEqualTo(s.tsMillis());
      assertThat(row.getField("referrer")).as("referrer at %s", position).isEqualTo(s.referrer());
      assertThat(row.getField(KafkaColumns.TIMESTAMP)).as("timestamp at %s", position).isNotNull();
    });
  }

  private int register(String subject, String schema) throws Exception {
    HttpResponse<String> reply = registerAs("ingest:s3cret", subject, schema);
    assertThat(reply.statusCode()).as(reply.body()).isEqualTo(200);
    return new ObjectMapper().readTree(reply.body()).get("id").asInt();
  }

  private HttpResponse<String> registerAs(String userInfo, String subject, String schema) throws Exception {
    String body = "{\"schema\":" + new ObjectMapper().writeValueAsString(schema) + "}";
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
            + server.registryPort().orElseThrow() + "/subjects/" + subject + "/versions"))
        .header("Content-Type", "application/vnd.schemaregistry.v1+json")
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (userInfo != null) {
      request.header("Authorization", "Basic " + java.util.Base64.getEncoder().encodeToString(
          userInfo.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }
    return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static byte[] avro(GenericRecord record) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
    new GenericDatumWriter<GenericRecord>(record.getSchema()).write(record, encoder);
    encoder.flush();
    return out.toByteArray();
  }
}
