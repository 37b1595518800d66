package io.tidemark.table.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.registry.schema.SchemaType;
import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.convert.KafkaColumns;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.avro.Schema;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;

/**
 * Goal: dead-letter rows go back through conversion once the schema is fixed: the ones that now convert land in the
 * table exactly once (also when a run crashed between its two commits), leave the dead-letter table, and the rest
 * stay there; the table's offsets do not move.
 */
class DeadLetterReprocessTest extends RegistryTableTest {

  private static final Schema EV = new Schema.Parser().parse("""
      {"type":"record","name":"Ev","fields":[{"name":"n","type":"int"}]}""");
  private static final Map<String, String> CONFIG = Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "by_schema_id",
      TableTopicConfig.ERRORS_TOLERANCE, "invalid_data", TableTopicConfig.ERRORS_DLQ_ENABLE, "true");
  private final AtomicInteger runs = new AtomicInteger();

  private static SimpleRecord value(byte[] v) {
    return new SimpleRecord(1L, null, v);
  }

  private DeadLetterReprocessor reprocessor(TestTopic topic) {
    TableSync offline = new TableSync(topic.name, config(CONFIG), warehouse.freshCatalog(), Map.of(), registry.schemas,
        () -> "unused", 1 << 20, 64L << 20);
    return new DeadLetterReprocessor(offline, warehouse.freshCatalog(), () -> "reprocess-" + runs.incrementAndGet());
  }

  private Map<Long, Object> table(TableSync sync) {
    Map<Long, Object> out = new TreeMap<>();
    for (Record r : warehouse.readAll(sync.tableIdentifier())) {
      assertThat(out.put((Long) r.getField(KafkaColumns.OFFSET), r.getField("n"))).as("offset twice").isNull();
    }
    return out;
  }

  private List<Long> deadLetterOffsets(TableSync sync) {
    return warehouse.readAll(sync.dlqIdentifier()).stream().map(r -> (Long) r.getField(KafkaColumns.OFFSET)).sorted().toList();
  }

  @Test
  void rowsThatConvertAfterTheSchemaIsRegisteredLandOnceAndLeaveTheDeadLetters() {
    int known = registry.register("fix-value", SchemaType.AVRO, EV.toString());
    int next = known + 1; // the id the registry gives the next new schema
    TestTopic topic = new TestTopic("fix", 1);
    topic.append(0, List.of(
        value(TestRegistry.framedAvro(known, EV, Map.of("n", 1))),
        value(TestRegistry.framedAvro(next, EV, Map.of("n", 2))),     // schema not registered yet
        value("never decodes".getBytes(java.nio.charset.StandardCharsets.UTF_8)),
        value(TestRegistry.framedAvro(next, EV, Map.of("n", 4)))));
    TableSync sync = sync(topic, CONFIG);
    sync.runRound();
    assertThat(table(sync)).isEqualTo(Map.of(0L, 1));
    assertThat(deadLetterOffsets(sync)).containsExactly(1L, 2L, 3L);

    // nothing fixed yet: nothing moves
    DeadLetterReprocessor.Result none = reprocessor(topic).run(1000);
    assertThat(none.reprocessed()).isZero();
    assertThat(none.stillFailing()).isEqualTo(3);
    assertThat(deadLetterOffsets(sync)).containsExactly(1L, 2L, 3L);

    // the schema is registered (another subject, same id the records name)
    assertThat(registry.register("other-value", SchemaType.AVRO, EV.toString().replace("Ev", "Ev2"))).isEqualTo(next);
    DeadLetterReprocessor.Result fixed = reprocessor(topic).run(1000);
    assertThat(fixed.reprocessed()).isEqualTo(2);
    assertThat(fixed.removed()).isEqualTo(2);
    assertThat(fixed.stillFailing()).isEqualTo(1);
    assertThat(table(sync)).isEqualTo(Map.of(0L, 1, 1L, 2, 3L, 4));
    assertThat(deadLetterOffsets(sync)).containsExactly(2L);
    assertThat(new io.tidemark.table.commit.TableCommitter(warehouse.load(sync.tableIdentifier())).committed().nextOffsets())
        .containsEntry(0, 4L);

    // a second run changes nothing; the live sync goes on from its offsets
    assertThat(reprocessor(topic).run(1000).reprocessed()).isZero();
    topic.append(0, List.of(value(TestRegistry.framedAvro(known, EV, Map.of("n", 5)))));
    sync.runRound();
    assertThat(table(sync)).isEqualTo(Map.of(0L, 1, 1L, 2, 3L, 4, 4L, 5));
    assertThat(deadLetterOffsets(sync)).containsExactly(2L);
  }

  @Test
  void aRunThatCrashedAfterLandingTheRowsOnlyRemovesThemNextTime() {
    int known = registry.register("crash-value", SchemaType.AVRO, EV.toString());
    TestTopic topic = new TestTopic("crash", 1);
    topic.append(0, List.of(value(TestRegistry.framedAvro(known + 1, EV, Map.of("n", 7)))));
    TableSync sync = sync(topic, CONFIG);
    sync.runRound();
    assertThat(deadLetterOffsets(sync)).containsExactly(0L);
    registry.register("crash2-value", SchemaType.AVRO, EV.toString().replace("Ev", "Ev3"));

    // the first half of a run: the rows land in the table, then the process dies before the dead letters change
    TableSync offline = new TableSync(topic.name, config(CONFIG), warehouse.freshCatalog(), Map.of(), registry.schemas,
        () -> "unused", 1 << 20, 64L << 20);
    TableSync.Reconverted landed = offline.reconvert(0, List.of(kafkaRecordAt(0, TestRegistry.framedAvro(known + 1, EV,
        Map.of("n", 7)))), "crashed-run");
    Table table = offline.table();
    org.apache.iceberg.AppendFiles append = table.newAppend();
    for (DataFile f : landed.files()) {
      append.appendFile(f);
    }
    append.set(DeadLetterReprocessor.RUN_ID, "crashed-run").commit();
    assertThat(table(sync)).isEqualTo(Map.of(0L, 7));

    DeadLetterReprocessor.Result next = reprocessor(topic).run(1000);
    assertThat(next.reprocessed()).isZero();
    assertThat(next.alreadyInTable()).isEqualTo(1);
    assertThat(next.removed()).isEqualTo(1);
    assertThat(table(sync)).isEqualTo(Map.of(0L, 7));
    assertThat(deadLetterOffsets(sync)).isEmpty();
  }

  private static org.apache.kafka.common.record.internal.Record kafkaRecordAt(long offset, byte[] value) {
    return org.apache.kafka.common.record.internal.MemoryRecords.withRecords(offset,
        org.apache.kafka.common.compress.Compression.NONE, value(value)).records().iterator().next();
  }
}
