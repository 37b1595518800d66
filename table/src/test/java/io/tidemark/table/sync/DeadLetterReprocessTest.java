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

  /** {@link #CONFIG} of an upsert table (the id is the key). */
  private static Map<String, String> upsertConfig() {
    Map<String, String> config = new java.util.HashMap<>(CONFIG);
    config.put("automq.table.topic.upsert.enable", "true");
    return config;
  }

  /** A sync over no partition, as a reprocessing run builds. */
  private TableSync offline(TestTopic topic, Map<String, String> configs) {
    return new TableSync(topic.name, config(configs), warehouse.freshCatalog(), Map.of(), registry.schemas,
        () -> "unused", 1 << 20, 64L << 20);
  }

  private DeadLetterReprocessor reprocessor(TestTopic topic) {
    TableSync offline = offline(topic, CONFIG);
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
    TableSync offline = offline(topic, CONFIG);
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

  private static SimpleRecord keyed(String key, byte[] value) {
    return new SimpleRecord(1L, key.getBytes(java.nio.charset.StandardCharsets.UTF_8), value);
  }

  /** key → n of every row of an upsert table (a second row of a key fails). */
  private Map<String, Object> byKey(TableSync sync) {
    Map<String, Object> out = new TreeMap<>();
    for (Record r : warehouse.readAll(sync.tableIdentifier())) {
      String key = String.valueOf(r.getField(KafkaColumns.KEY));
      assertThat(out.put(key, r.getField("n"))).as("a second row of %s", key).isNull();
    }
    return out;
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(strings = {"2", "3"})
  void anUpsertTablesDeadLetterLandsOnlyWhileItIsItsIdsLatestChangeInThePartition(String formatVersion) {
    Map<String, String> config = upsertConfig();
    config.put(TableTopicConfig.FORMAT_VERSION, formatVersion);
    int known = registry.register("ups" + formatVersion + "-value", SchemaType.AVRO, EV.toString());
    int next = known + 1;
    TestTopic topic = new TestTopic("ups" + formatVersion, 1);
    topic.append(0, List.of(
        keyed("k1", TestRegistry.framedAvro(known, EV, Map.of("n", 1))),    // 0 lands
        keyed("k2", TestRegistry.framedAvro(next, EV, Map.of("n", 2))),     // 1 dead letter, nothing later: lands
        keyed("k3", TestRegistry.framedAvro(next, EV, Map.of("n", 3))),     // 2 dead letter, updated at 3: superseded
        keyed("k3", TestRegistry.framedAvro(known, EV, Map.of("n", 30))),   // 3 lands
        keyed("k4", TestRegistry.framedAvro(next, EV, Map.of("n", 4))),     // 4 dead letter, deleted at 5: superseded
        keyed("k4", null),                                                   // 5 tombstone
        keyed("k1", TestRegistry.framedAvro(next, EV, Map.of("n", 10))),    // 6 dead letter newer than k1's row: lands
        keyed("k5", "never decodes".getBytes(java.nio.charset.StandardCharsets.UTF_8)), // 7 still failing
        keyed("k6", TestRegistry.framedAvro(next, EV, Map.of("n", 6))),     // 8 dead letter, again at 9: superseded
        keyed("k6", TestRegistry.framedAvro(next, EV, Map.of("n", 60)))));  // 9 dead letter: lands
    TableSync sync = sync(topic, config);
    sync.runRound();
    assertThat(byKey(sync)).isEqualTo(Map.of("k1", 1, "k3", 30));
    assertThat(deadLetterOffsets(sync)).containsExactly(1L, 2L, 4L, 6L, 7L, 8L, 9L);
    assertThat(registry.register("ups2" + formatVersion + "-value", SchemaType.AVRO, EV.toString().replace("Ev", "Ev4")))
        .isEqualTo(next);

    // on a node that cannot read the partition, only what needs no later record moves: 8 is superseded by 9, and 9
    // (the partition's last committed record) lands
    TableSync offline = offline(topic, config);
    DeadLetterReprocessor.Result elsewhere = new DeadLetterReprocessor(offline, warehouse.freshCatalog(),
        () -> "reprocess-" + runs.incrementAndGet()).run(1000);
    assertThat(elsewhere).extracting(DeadLetterReprocessor.Result::reprocessed, DeadLetterReprocessor.Result::superseded,
        DeadLetterReprocessor.Result::kept, DeadLetterReprocessor.Result::stillFailing, DeadLetterReprocessor.Result::removed)
        .containsExactly(1L, 1L, 4L, 1L, 2L);
    assertThat(byKey(sync)).isEqualTo(Map.of("k1", 1, "k3", 30, "k6", 60));
    assertThat(deadLetterOffsets(sync)).containsExactly(1L, 2L, 4L, 6L, 7L);

    // where the partition is led: the log after each dead letter decides
    DeadLetterReprocessor.Result fixed = upsertReprocessor(topic, config).run(1000);
    assertThat(fixed).extracting(DeadLetterReprocessor.Result::reprocessed, DeadLetterReprocessor.Result::superseded,
        DeadLetterReprocessor.Result::kept, DeadLetterReprocessor.Result::stillFailing, DeadLetterReprocessor.Result::removed)
        .containsExactly(2L, 2L, 0L, 1L, 4L);
    assertThat(byKey(sync)).isEqualTo(Map.of("k1", 10, "k2", 2, "k3", 30, "k6", 60));
    assertThat(deadLetterOffsets(sync)).containsExactly(7L);
    assertThat(new io.tidemark.table.commit.TableCommitter(warehouse.load(sync.tableIdentifier())).committed().nextOffsets())
        .containsEntry(0, 10L);

    // a second run changes nothing; later records replace and delete reprocessed rows as usual
    assertThat(upsertReprocessor(topic, config).run(1000).reprocessed()).isZero();
    topic.append(0, List.of(keyed("k2", TestRegistry.framedAvro(known, EV, Map.of("n", 20))), keyed("k6", null)));
    sync.runRound();
    assertThat(byKey(sync)).isEqualTo(Map.of("k1", 10, "k2", 20, "k3", 30));
  }

  @Test
  void anUpsertRunThatCrashedAfterLandingIsNotLandedAgainOverALaterChange() {
    Map<String, String> config = upsertConfig();
    int known = registry.register("upcrash-value", SchemaType.AVRO, EV.toString());
    TestTopic topic = new TestTopic("upcrash", 1);
    topic.append(0, List.of(keyed("k1", TestRegistry.framedAvro(known + 1, EV, Map.of("n", 7)))));
    TableSync sync = sync(topic, config);
    sync.runRound();
    assertThat(deadLetterOffsets(sync)).containsExactly(0L);
    registry.register("upcrash2-value", SchemaType.AVRO, EV.toString().replace("Ev", "Ev5"));

    // the first half of a run lands the row, then the process dies before the dead letter leaves
    TableSync offline = offline(topic, config);
    org.apache.kafka.common.record.internal.Record deadLetter = recordAt(0,
        keyed("k1", TestRegistry.framedAvro(known + 1, EV, Map.of("n", 7))));
    assertThat(new UpsertDeadLetters(offline, topic.sources(), 1 << 20).run(Map.of(0, List.of(deadLetter)), "crashed-run"))
        .isEqualTo(Map.of(0, Map.of(0L, UpsertDeadLetters.Outcome.LANDED)));
    assertThat(byKey(sync)).isEqualTo(Map.of("k1", 7));
    assertThat(deadLetterOffsets(sync)).containsExactly(0L);

    // a tombstone deletes the id; the next run finds the row gone and the tombstone after it: not landed again
    topic.append(0, List.of(keyed("k1", null)));
    sync.runRound();
    assertThat(byKey(sync)).isEmpty();
    DeadLetterReprocessor.Result next = upsertReprocessor(topic, config).run(1000);
    assertThat(next).extracting(DeadLetterReprocessor.Result::reprocessed, DeadLetterReprocessor.Result::superseded,
        DeadLetterReprocessor.Result::removed).containsExactly(0L, 1L, 1L);
    assertThat(byKey(sync)).isEmpty();
    assertThat(deadLetterOffsets(sync)).isEmpty();
  }

  @Test
  void anUpsertRunThatMeetsACommitScansWhatItAddedBeforeLanding() {
    Map<String, String> config = upsertConfig();
    int known = registry.register("uprace-value", SchemaType.AVRO, EV.toString());
    TestTopic topic = new TestTopic("uprace", 1);
    topic.append(0, List.of(
        keyed("k1", TestRegistry.framedAvro(known + 1, EV, Map.of("n", 1))),
        keyed("k2", TestRegistry.framedAvro(known + 1, EV, Map.of("n", 2))),
        keyed("k9", TestRegistry.framedAvro(known, EV, Map.of("n", 9)))));
    TableSync sync = sync(topic, config);
    sync.runRound();
    assertThat(deadLetterOffsets(sync)).containsExactly(0L, 1L);
    registry.register("uprace2-value", SchemaType.AVRO, EV.toString().replace("Ev", "Ev6"));

    // while the run scans the partition, a round lands a tombstone of k1 (after the offsets the run read)
    java.util.concurrent.atomic.AtomicBoolean raced = new java.util.concurrent.atomic.AtomicBoolean();
    io.tidemark.table.source.PartitionRecordSource real = topic.sources().get(0);
    io.tidemark.table.source.PartitionRecordSource racing = new io.tidemark.table.source.PartitionRecordSource() {
      @Override
      public java.util.concurrent.CompletableFuture<Batches> read(long offset, int maxBytes) {
        if (raced.compareAndSet(false, true)) {
          topic.append(0, List.of(keyed("k1", null)));
          sync.runRound();
        }
        return real.read(offset, maxBytes);
      }

      @Override
      public long logStartOffset() {
        return real.logStartOffset();
      }

      @Override
      public long highWatermark() {
        return real.highWatermark();
      }
    };
    DeadLetterReprocessor.Result result = new DeadLetterReprocessor(offline(topic, config), warehouse.freshCatalog(),
        () -> "reprocess-" + runs.incrementAndGet(), Map.of(0, racing), 1 << 20).run(1000);
    assertThat(raced).isTrue();
    assertThat(result).extracting(DeadLetterReprocessor.Result::reprocessed, DeadLetterReprocessor.Result::superseded,
        DeadLetterReprocessor.Result::removed).containsExactly(1L, 1L, 2L);
    assertThat(byKey(sync)).isEqualTo(Map.of("k2", 2, "k9", 9));
    assertThat(deadLetterOffsets(sync)).isEmpty();
  }

  private DeadLetterReprocessor upsertReprocessor(TestTopic topic, Map<String, String> config) {
    return new DeadLetterReprocessor(offline(topic, config), warehouse.freshCatalog(), () -> "reprocess-" + runs.incrementAndGet(),
        topic.sources(), 1 << 20);
  }

  private static org.apache.kafka.common.record.internal.Record kafkaRecordAt(long offset, byte[] value) {
    return recordAt(offset, value(value));
  }

  private static org.apache.kafka.common.record.internal.Record recordAt(long offset, SimpleRecord record) {
    return org.apache.kafka.common.record.internal.MemoryRecords.withRecords(offset,
        org.apache.kafka.common.compress.Compression.NONE, record).records().iterator().next();
  }
}
