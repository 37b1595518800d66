package io.tidemark.table.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.table.commit.TableCommitter;
import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.convert.AvroSchemaSource;
import io.tidemark.table.convert.ConversionFailedException;
import io.tidemark.table.convert.InvalidRecordException;
import io.tidemark.table.convert.KafkaColumns;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Type;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: by_schema_id Avro values (Confluent framing) become typed columns that evolve with new
 * schema versions; unknown ids are bad data; an unreachable registry delays the partition without loss.
 * The registry is a fake {@link AvroSchemaSource} (unit test); its HTTP adapter is RegistryAvroSchemas.
 */
class AvroTableSyncTest {

  private static final Schema V1 = new Schema.Parser().parse("""
      {"type":"record","name":"Click","fields":[
        {"name":"id","type":"int"},{"name":"page","type":"string"},{"name":"dwell","type":"float"},
        {"name":"raw","type":"bytes"},{"name":"kind","type":{"type":"enum","name":"Kind","symbols":["VIEW","BUY"]}},
        {"name":"ctx","type":{"type":"map","values":"string"}}]}""");
  private static final Schema V2 = new Schema.Parser().parse("""
      {"type":"record","name":"Click","fields":[
        {"name":"id","type":"long"},{"name":"page","type":"string"},{"name":"dwell","type":"double"},
        {"name":"raw","type":"bytes"},{"name":"kind","type":{"type":"enum","name":"Kind","symbols":["VIEW","BUY"]}},
        {"name":"ctx","type":{"type":"map","values":"string"}},
        {"name":"email","type":["null","string"],"default":null}]}""");

  @TempDir
  Path dir;
  private TestWarehouse warehouse;
  private final Map<Integer, Schema> registry = new ConcurrentHashMap<>(Map.of(1, V1, 2, V2));
  private final AtomicBoolean registryDown = new AtomicBoolean();
  private final AtomicInteger ids = new AtomicInteger();

  private final AvroSchemaSource schemas = id -> {
    if (registryDown.get()) {
      throw new ConversionFailedException("registry unreachable", new IOException("connection refused"));
    }
    Schema s = registry.get(id);
    if (s == null) {
      throw new InvalidRecordException("schema id " + id + " is not registered");
    }
    return s;
  };

  @BeforeEach
  void setUp() {
    warehouse = new TestWarehouse(dir);
  }

  @AfterEach
  void tearDown() throws Exception {
    warehouse.close();
  }

  private TableSync sync(TestTopic topic) {
    return new TableSync(topic.name, TableTopicConfig.parse(Map.of(TableTopicConfig.ENABLE, "true",
        TableTopicConfig.CONVERT_VALUE_TYPE, "by_schema_id")), warehouse.freshCatalog(), topic.sources(), schemas,
        () -> "c" + ids.incrementAndGet(), 1 << 20, 64L << 20);
  }

  private static byte[] framed(int schemaId, Schema schema, Map<String, Object> fields) {
    return TestRegistry.framedAvro(schemaId, schema, fields);
  }

  private static Map<String, Object> click(Object id, String page, Object dwell, Schema schema) {
    return Map.of("id", id, "page", page, "dwell", dwell, "raw", ByteBuffer.wrap(new byte[] {1, 2}),
        "kind", new GenericData.EnumSymbol(schema.getField("kind").schema(), "BUY"), "ctx", Map.of("ua", "x"));
  }

  private static List<Record> sorted(List<Record> rows) {
    List<Record> out = new ArrayList<>(rows);
    out.sort(Comparator.comparing(r -> (Long) r.getField(KafkaColumns.OFFSET)));
    return out;
  }

  @Test
  void avroFieldsBecomeColumnsAndEvolveWithNewSchemaVersions() {
    // goal: v1 creates typed columns; v2 widens int→long and float→double and adds an optional column
    TestTopic topic = new TestTopic("clicks", 1);
    topic.append(0, List.of(new SimpleRecord(1L, "u1".getBytes(), framed(1, V1, click(7, "/home", 1.5f, V1)))));
    TableSync sync = sync(topic);
    sync.runRound();
    Table t1 = warehouse.load(sync.tableIdentifier());
    assertThat(t1.schema().findField("id").type().typeId()).isEqualTo(Type.TypeID.INTEGER);
    assertThat(t1.schema().findField("dwell").type().typeId()).isEqualTo(Type.TypeID.FLOAT);

    Map<String, Object> v2 = new java.util.HashMap<>(click(5_000_000_000L, "/buy", 2.25d, V2));
    v2.put("email", "a@b.c");
    topic.append(0, List.of(new SimpleRecord(2L, "u2".getBytes(), framed(2, V2, v2))));
    sync.runRound();

    Table t2 = warehouse.load(sync.tableIdentifier());
    assertThat(t2.schema().findField("id").type().typeId()).isEqualTo(Type.TypeID.LONG);
    assertThat(t2.schema().findField("dwell").type().typeId()).isEqualTo(Type.TypeID.DOUBLE);
    assertThat(t2.schema().findField("email").isOptional()).isTrue();
    List<Record> rows = sorted(warehouse.readAll(sync.tableIdentifier()));
    assertThat(rows).extracting(r -> r.getField("id")).containsExactly(7L, 5_000_000_000L);
    assertThat(rows).extracting(r -> r.getField("page")).containsExactly("/home", "/buy");
    assertThat(rows).extracting(r -> r.getField("dwell")).containsExactly(1.5d, 2.25d);
    assertThat(rows).extracting(r -> r.getField("kind")).containsExactly("BUY", "BUY");
    assertThat(rows).extracting(r -> r.getField("ctx")).containsExactly(Map.of("ua", "x"), Map.of("ua", "x"));
    assertThat(rows).extracting(r -> r.getField("email")).containsExactly(null, "a@b.c");
    assertThat(rows).extracting(r -> ((ByteBuffer) r.getField("raw")).remaining()).containsExactly(2, 2);
    assertThat(rows).extracting(r -> r.getField(KafkaColumns.KEY)).containsExactly("u1", "u2");
    assertThat(rows.get(0).getField(KafkaColumns.VALUE)).isNull();
  }

  @Test
  void unknownIdsAndUnframedValuesAreBadDataButAnUnreachableRegistryLosesNothing() {
    // goal: data errors are skipped; a registry outage holds the partition at the record and resumes after
    TestTopic topic = new TestTopic("mixed", 1);
    topic.append(0, List.of(
        new SimpleRecord(1L, null, framed(1, V1, click(1, "/a", 1f, V1))),
        new SimpleRecord(1L, null, framed(99, V1, click(2, "/b", 1f, V1))),
        new SimpleRecord(1L, null, "plain text".getBytes())));
    TableSync sync = sync(topic);
    TableSync.RoundResult r1 = sync.runRound();
    assertThat(r1.skipped()).isEqualTo(2);

    // a schema id not seen before needs the registry (ids already seen are decoded from the cache)
    topic.append(0, List.of(new SimpleRecord(1L, null, framed(2, V2, click(3L, "/c", 1d, V2)))));
    registryDown.set(true);
    TableSync.RoundResult down = sync.runRound();
    assertThat(down.committed()).isFalse();
    assertThat(down.moreData()).isTrue();
    assertThat(new TableCommitter(warehouse.load(sync.tableIdentifier())).committed().nextOffsets()).containsEntry(0, 3L);

    registryDown.set(false);
    sync.runRound();
    assertThat(sorted(warehouse.readAll(sync.tableIdentifier()))).extracting(r -> r.getField("id")).containsExactly(1L, 3L);
  }
}
