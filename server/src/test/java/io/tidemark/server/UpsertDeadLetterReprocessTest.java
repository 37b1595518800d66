package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.server.storage.EmbeddedStorage;
import io.tidemark.table.convert.KafkaColumns;
import io.tidemark.table.warehouse.LocalFileIO;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.OverwriteFiles;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: an upsert table topic's dead letters, once their data is fixed in {@code <table>_dlq} by another engine
 * (here Iceberg through the node's REST catalog), go back through conversion with
 * {@code POST /v1/tables/<topic>/dead-letters/reprocess} while the topic keeps committing every second: a dead letter
 * lands only if no later record of its partition changed its id (an update or a tombstone), so the table ends as
 * if every record had converted in its place; a plain Iceberg JVM reading through the REST catalog sees exactly the
 * latest value per id, and later records replace reprocessed rows as usual. Format v3 (deletion vectors).
 */
class UpsertDeadLetterReprocessTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOPIC = "accounts";
  private static final byte[] BAD = {(byte) 0xff, (byte) 0xfe}; // not UTF-8: a dead letter under value type string
  private final HttpClient http = HttpClient.newHttpClient();
  private TidemarkServer server;
  @TempDir Path dataDir;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  /** A record as sent: its key and value (null: tombstone). */
  private record Sent(long offset, String key, byte[] value) {}

  @Test
  void fixedDeadLettersLandOnlyWhereNoLaterRecordChangedTheirId() throws Exception {
    server = Main.start(TidemarkServerTest.withPorts("--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (64L << 20)), Map.of(), new EmbeddedStorage());
    String bootstrap = "127.0.0.1:" + server.kafkaPort().orElseThrow();
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1).configs(Map.of("table.topic.enable", "true",
          "table.topic.commit.interval.ms", "1000", "table.topic.convert.value.type", "string",
          "table.topic.upsert.enable", "true", "table.topic.format.version", "3",
          "table.topic.errors.tolerance", "invalid_data", "table.topic.errors.dlq.enable", "true")))).all()
          .get(60, TimeUnit.SECONDS);
    }
    List<Sent> log = new ArrayList<>();
    try (KafkaProducer<String, byte[]> producer = producer(bootstrap)) {
      send(producer, log, "k1", "a1");
      send(producer, log, "k2", BAD);     // nothing later: lands once fixed
      send(producer, log, "k3", BAD);     // updated next: superseded
      send(producer, log, "k3", "c3");
      send(producer, log, "k4", BAD);     // deleted next: superseded, k4 stays deleted
      send(producer, log, "k4", (byte[]) null);
      send(producer, log, "k1", BAD);     // newer than k1's row: replaces it once fixed
      send(producer, log, "k5", BAD);     // not fixed: stays a dead letter
      send(producer, log, "k6", "f8");
    }
    Map<Long, byte[]> fixes = new TreeMap<>();
    for (Sent s : log) {
      if (s.value() != null && java.util.Arrays.equals(s.value(), BAD) && !s.key().equals("k5")) {
        fixes.put(s.offset(), ("fixed-" + s.offset()).getBytes(StandardCharsets.UTF_8));
      }
    }
    await().atMost(Duration.ofMinutes(2)).until(() -> tableByKey().equals(model(log, Map.of()))
        && TableFiles.rows(dataDir, TOPIC + "_dlq").size() == 5);

    // another engine corrects the values in the dead-letter table (through the node's REST catalog)
    int restPort = server.tableRestPort().orElseThrow();
    fixDeadLetters(restPort, fixes);

    // reprocessed while other ids keep changing and the table keeps committing every second
    AtomicBoolean producing = new AtomicBoolean(true);
    List<Sent> concurrent = new java.util.concurrent.CopyOnWriteArrayList<>();
    CompletableFuture<Void> others = CompletableFuture.runAsync(() -> {
      try (KafkaProducer<String, byte[]> producer = producer(bootstrap)) {
        for (int i = 0; producing.get() && i < 2_000; i++) {
          send(producer, concurrent, "other-" + (i % 20), "v" + i);
          Thread.sleep(5);
        }
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    HttpResponse<String> answer;
    try {
      await().atMost(Duration.ofSeconds(30)).until(() -> concurrent.size() >= 20);
      answer = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.adminPort()
          + "/v1/tables/" + TOPIC + "/dead-letters/reprocess?maxRows=100")).POST(HttpRequest.BodyPublishers.noBody())
          .build(), HttpResponse.BodyHandlers.ofString());
    } finally {
      producing.set(false);
      others.get(60, TimeUnit.SECONDS);
    }
    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    JsonNode result = JSON.readTree(answer.body());
    System.out.println("UpsertDeadLetterReprocessTest: " + answer.body() + " with " + concurrent.size()
        + " records of other ids sent meanwhile");
    assertThat(result.path("reprocessed").asLong()).as(answer.body()).isEqualTo(2);
    assertThat(result.path("superseded").asLong()).as(answer.body()).isEqualTo(2);
    assertThat(result.path("stillFailing").asLong()).as(answer.body()).isEqualTo(1);
    assertThat(result.path("kept").asLong()).as(answer.body()).isZero();
    assertThat(result.path("removed").asLong()).as(answer.body()).isEqualTo(4);
    assertThat(TableFiles.rows(dataDir, TOPIC + "_dlq")).extracting(r -> r.getField(KafkaColumns.OFFSET))
        .containsExactly(7L);

    List<Sent> all = new ArrayList<>(log);
    all.addAll(concurrent);
    Map<String, String> expected = model(all, fixes);
    assertThat(expected).containsEntry("k1", "fixed-6").containsEntry("k2", "fixed-1").containsEntry("k3", "c3")
        .doesNotContainKey("k4").doesNotContainKey("k5");
    await().atMost(Duration.ofMinutes(2)).until(() -> tableByKey().equals(expected));

    // a later record replaces a reprocessed row as usual
    try (KafkaProducer<String, byte[]> producer = producer(bootstrap)) {
      send(producer, all, "k2", "b-after");
      send(producer, all, "k1", (byte[]) null);
    }
    Map<String, String> after = model(all, fixes);
    assertThat(after).containsEntry("k2", "b-after").doesNotContainKey("k1");
    await().atMost(Duration.ofMinutes(2)).until(() -> tableByKey().equals(after));

    // a plain Iceberg JVM (only Iceberg's and Hadoop's jars) reads the same state through the REST catalog
    List<String> out = IcebergStandardReaderTest.read(IcebergStandardReaderTest.readerClasspath(), "default." + TOPIC,
        Map.of("type", "rest", "uri", "http://127.0.0.1:" + restPort));
    Map<String, String> read = new TreeMap<>();
    for (String line : out) {
      if (line.startsWith("row\t")) {
        String[] f = line.split("\t", -1);
        assertThat(read.put(f[3], f[4])).as("one row of key %s in the plain reader", f[3]).isNull();
      }
    }
    assertThat(read).as("the plain reader sees the latest value per id").isEqualTo(after);
  }

  /** The latest value per key, replaying the records in offset order (fixed values in place of the bad ones). */
  private static Map<String, String> model(List<Sent> records, Map<Long, byte[]> fixes) {
    Map<String, String> out = new TreeMap<>();
    records.stream().sorted(java.util.Comparator.comparingLong(Sent::offset)).forEach(s -> {
      byte[] value = fixes.getOrDefault(s.offset(), s.value());
      if (value == null) {
        out.remove(s.key());
      } else if (!java.util.Arrays.equals(value, BAD)) {
        out.put(s.key(), new String(value, StandardCharsets.UTF_8));
      }
    });
    return out;
  }

  /** key → value of every row of the table; a second row of a key fails. */
  private Map<String, String> tableByKey() {
    Map<String, String> out = new TreeMap<>();
    for (Record r : TableFiles.rows(dataDir, TOPIC)) {
      String key = String.valueOf(r.getField(KafkaColumns.KEY));
      assertThat(out.put(key, String.valueOf(r.getField(KafkaColumns.VALUE)))).as("a second row of %s", key).isNull();
    }
    return out;
  }

  /** Rewrites the dead-letter rows whose offset is in {@code fixes} with the fixed value, in one overwrite. */
  private static void fixDeadLetters(int restPort, Map<Long, byte[]> fixes) throws Exception {
    try (RESTCatalog rest = new RESTCatalog()) {
      rest.initialize("fix", new HashMap<>(Map.of("uri", "http://127.0.0.1:" + restPort,
          "io-impl", LocalFileIO.class.getName())));
      Table dlq = rest.loadTable(TableIdentifier.of("default", TOPIC + "_dlq"));
      List<DataFile> old = new ArrayList<>();
      try (CloseableIterable<FileScanTask> tasks = dlq.newScan().planFiles()) {
        tasks.forEach(t -> old.add(t.file()));
      }
      List<Record> rows = new ArrayList<>();
      try (CloseableIterable<Record> read = IcebergGenerics.read(dlq).build()) {
        for (Record r : read) {
          GenericRecord copy = (GenericRecord) r.copy();
          byte[] fixed = fixes.get((Long) r.getField(KafkaColumns.OFFSET));
          if (fixed != null) {
            copy.setField(KafkaColumns.VALUE, ByteBuffer.wrap(fixed));
          }
          rows.add(copy);
        }
      }
      String location = dlq.locationProvider().newDataLocation(FileFormat.PARQUET.addExtension("fixed-by-hand"));
      DataWriter<Record> writer = Parquet.writeData(dlq.io().newOutputFile(location)).schema(dlq.schema())
          .createWriterFunc(GenericParquetWriter::create).withSpec(dlq.spec()).overwrite().build();
      try (writer) {
        rows.forEach(writer::write);
      }
      OverwriteFiles overwrite = dlq.newOverwrite();
      old.forEach(overwrite::deleteFile);
      overwrite.addFile(writer.toDataFile()).commit();
    }
  }

  private static KafkaProducer<String, byte[]> producer(String bootstrap) {
    return new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ProducerConfig.ACKS_CONFIG, "all"),
        new StringSerializer(), new ByteArraySerializer());
  }

  private static void send(KafkaProducer<String, byte[]> producer, List<Sent> log, String key, String value)
      throws Exception {
    send(producer, log, key, value.getBytes(StandardCharsets.UTF_8));
  }

  private static void send(KafkaProducer<String, byte[]> producer, List<Sent> log, String key, byte[] value)
      throws Exception {
    long offset = producer.send(new ProducerRecord<>(TOPIC, 0, key, value)).get(60, TimeUnit.SECONDS).offset();
    log.add(new Sent(offset, key, value));
  }
}
