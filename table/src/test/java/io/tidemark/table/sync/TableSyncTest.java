package io.tidemark.table.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.table.commit.TableCommitter;
import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.convert.KafkaColumns;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Type;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Goal: records of real partition logs land in the Iceberg table exactly once, field by field, across restarts and bad data. */
class TableSyncTest {

  private static final long TS = 1_700_000_000_000L;

  @TempDir
  Path dir;
  private TestWarehouse warehouse;
  private final AtomicInteger ids = new AtomicInteger();

  @BeforeEach
  void setUp() {
    warehouse = new TestWarehouse(dir);
  }

  @AfterEach
  void tearDown() throws Exception {
    warehouse.close();
  }

  private TableSync sync(TestTopic topic, Map<String, String> configs, int maxBytes) {
    Map<String, String> all = new HashMap<>(configs);
    all.putIfAbsent(TableTopicConfig.ENABLE, "true");
    return new TableSync(topic.name, TableTopicConfig.parse(all), warehouse.freshCatalog(), topic.sources(),
        () -> "commit-" + ids.incrementAndGet(), maxBytes, 64L << 20);
  }

  private static SimpleRecord rec(long ts, String key, String value, Header... headers) {
    return new SimpleRecord(ts, key == null ? null : key.getBytes(StandardCharsets.UTF_8),
        value == null ? null : value.getBytes(StandardCharsets.UTF_8), headers);
  }

  private static List<Record> sorted(List<Record> rows) {
    List<Record> out = new ArrayList<>(rows);
    out.sort(Comparator.comparing((Record r) -> (Integer) r.getField(KafkaColumns.PARTITION))
        .thenComparing(r -> (Long) r.getField(KafkaColumns.OFFSET)));
    return out;
  }

  private static String text(Object buffer) {
    ByteBuffer b = ((ByteBuffer) buffer).duplicate();
    byte[] bytes = new byte[b.remaining()];
    b.get(bytes);
    return new String(bytes, StandardCharsets.UTF_8);
  }

  @Test
  @SuppressWarnings("deprecation") // Snapshot.addedDataFiles(FileIO): the simplest way to list a snapshot's files in a test
  void rawRecordsLandFieldByFieldWithKafkaColumnsAndOffsetsInTheSnapshot() {
    // goal: raw conversion writes key, value, headers, timestamp, partition, offset exactly as produced
    TestTopic topic = new TestTopic("clicks", 2);
    topic.append(0, List.of(
        rec(TS, "k0", "v0", new RecordHeader("h1", "a".getBytes(StandardCharsets.UTF_8))),
        rec(TS + 1, null, "v1")));
    topic.append(0, List.of(rec(TS + 2, "k2", null)));
    topic.append(1, List.of(rec(TS + 3, "k3", "v3", new RecordHeader("h2", "b".getBytes(StandardCharsets.UTF_8)),
        new RecordHeader("h3", (byte[]) null))));
    TableSync sync = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "raw", TableTopicConfig.CONVERT_KEY_TYPE, "raw"),
        1 << 20);

    TableSync.RoundResult result = sync.runRound();

    assertThat(result.committed()).isTrue();
    assertThat(result.rows()).isEqualTo(4);
    assertThat(result.nextOffsets()).containsExactlyInAnyOrderEntriesOf(Map.of(0, 3L, 1, 1L));
    List<Record> rows = sorted(warehouse.readAll(sync.tableIdentifier()));
    assertThat(rows).hasSize(4);

    Record r0 = rows.get(0);
    assertThat(r0.getField(KafkaColumns.PARTITION)).isEqualTo(0);
    assertThat(r0.getField(KafkaColumns.OFFSET)).isEqualTo(0L);
    assertThat(r0.getField(KafkaColumns.TIMESTAMP)).isEqualTo(OffsetDateTime.ofInstant(Instant.ofEpochMilli(TS), ZoneOffset.UTC));
    assertThat(text(r0.getField(KafkaColumns.KEY))).isEqualTo("k0");
    assertThat(text(r0.getField(KafkaColumns.VALUE))).isEqualTo("v0");
    @SuppressWarnings("unchecked")
    Map<String, ByteBuffer> h0 = (Map<String, ByteBuffer>) r0.getField(KafkaColumns.HEADERS);
    assertThat(h0).containsOnlyKeys("h1");
    assertThat(text(h0.get("h1"))).isEqualTo("a");

    Record r1 = rows.get(1);
    assertThat(r1.getField(KafkaColumns.OFFSET)).isEqualTo(1L);
    assertThat(r1.getField(KafkaColumns.KEY)).isNull();
    assertThat(text(r1.getField(KafkaColumns.VALUE))).isEqualTo("v1");
    assertThat(r1.getField(KafkaColumns.TIMESTAMP)).isEqualTo(OffsetDateTime.ofInstant(Instant.ofEpochMilli(TS + 1), ZoneOffset.UTC));

    Record r2 = rows.get(2);
    assertThat(r2.getField(KafkaColumns.OFFSET)).isEqualTo(2L);
    assertThat(r2.getField(KafkaColumns.VALUE)).isNull();

    Record r3 = rows.get(3);
    assertThat(r3.getField(KafkaColumns.PARTITION)).isEqualTo(1);
    assertThat(r3.getField(KafkaColumns.OFFSET)).isEqualTo(0L);
    assertThat(text(r3.getField(KafkaColumns.KEY))).isEqualTo("k3");
    @SuppressWarnings("unchecked")
    Map<String, ByteBuffer> h3 = (Map<String, ByteBuffer>) r3.getField(KafkaColumns.HEADERS);
    assertThat(h3).containsOnlyKeys("h2", "h3");
    assertThat(text(h3.get("h2"))).isEqualTo("b");
    assertThat(h3.get("h3")).isNull();

    Snapshot snap = warehouse.load(sync.tableIdentifier()).currentSnapshot();
    assertThat(snap.summary()).containsEntry(TableCommitter.COMMIT_ID, result.commitId())
        .containsEntry(TableCommitter.OFFSETS, "{\"0\":3,\"1\":1}");
    // the data files are plain files under the local store's directory, at file: locations
    java.nio.file.Path tableDir = warehouse.dir.resolve("objects/iceberg/default/clicks/data").toAbsolutePath();
    assertThat(snap.addedDataFiles(warehouse.load(sync.tableIdentifier()).io()))
        .hasSize(2)
        .allSatisfy(f -> assertThat(io.tidemark.table.warehouse.LocalFileIO.pathOf(f.location().toString()))
            .startsWith(tableDir).isRegularFile());
  }

  @Test
  void stringConversionDecodesUtf8AndSkipsInvalidBytesUnderInvalidData() {
    // goal: string conversion keeps text values; a value that is not UTF-8 is invalid data, counted and skipped
    TestTopic topic = new TestTopic("texts", 1);
    topic.append(0, List.of(rec(TS, "k", "héllo")));
    topic.append(0, List.of(new SimpleRecord(TS, "k".getBytes(StandardCharsets.UTF_8), new byte[] {(byte) 0xff, (byte) 0xfe})));
    topic.append(0, List.of(rec(TS, "k", "bye")));
    TableSync sync = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "string"), 1 << 20);

    TableSync.RoundResult result = sync.runRound();

    assertThat(result.skipped()).isEqualTo(1);
    List<Record> rows = sorted(warehouse.readAll(sync.tableIdentifier()));
    assertThat(rows).extracting(r -> r.getField(KafkaColumns.VALUE)).containsExactly("héllo", "bye");
    assertThat(rows).extracting(r -> r.getField(KafkaColumns.KEY)).containsExactly("k", "k");
    assertThat(rows).extracting(r -> r.getField(KafkaColumns.OFFSET)).containsExactly(0L, 2L);
    assertThat(sync.status(0).skippedRecords()).isEqualTo(1);
    assertThat(sync.status(0).nextOffset()).isEqualTo(3);
  }

  @Test
  void damagedStoredDataIsSkippedAndCountedLikeBadRecords() {
    // goal: a damaged range of the partition (bytes that are no record batch) does not stall the table topic
    TestTopic topic = new TestTopic("texts", 1);
    topic.append(0, List.of(rec(TS, "k", "before")));
    topic.damage(0, 2); // offsets 1..2
    topic.append(0, List.of(rec(TS, "k", "after")));
    TableSync sync = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "string"), 1 << 20);

    TableSync.RoundResult result = sync.runRound();

    assertThat(result.committed()).isTrue();
    assertThat(result.skipped()).isEqualTo(2);
    List<Record> rows = sorted(warehouse.readAll(sync.tableIdentifier()));
    assertThat(rows).extracting(r -> r.getField(KafkaColumns.OFFSET)).containsExactly(0L, 3L);
    assertThat(sync.status(0).nextOffset()).isEqualTo(4);
  }

  @Test
  void aRestartBeforeOrAfterTheCommitNeitherLosesNorDuplicates() {
    // goal: the table's snapshot summary is the only progress record; restarts resume exactly there
    TestTopic topic = new TestTopic("orders", 2);
    int produced = 0;
    for (int i = 0; i < 5; i++) {
      topic.append(i % 2, List.of(rec(TS + i, "k" + i, "v" + i)));
      produced++;
    }
    TableSync first = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "string"), 1 << 20);
    assertThat(first.runRound().committed()).isTrue();

    for (int i = 5; i < 12; i++) {
      topic.append(i % 2, List.of(rec(TS + i, "k" + i, "v" + i)));
      produced++;
    }
    // crash after writing the files of a round but before its commit: the files stay orphans
    TableSync.PreparedRound lost = first.prepare();
    assertThat(lost.files()).isNotEmpty();

    TableSync restarted = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "string"), 1 << 20);
    TableSync.RoundResult resumed = restarted.runRound();
    assertThat(resumed.rows()).isEqualTo(7);

    // a restart right after a commit finds nothing new to write
    TableSync again = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "string"), 1 << 20);
    assertThat(again.runRound().committed()).isFalse();

    List<Record> rows = warehouse.readAll(restarted.tableIdentifier());
    assertThat(rows).hasSize(produced);
    assertThat(rows).extracting(r -> r.getField(KafkaColumns.VALUE))
        .containsExactlyInAnyOrderElementsOf(java.util.stream.IntStream.range(0, produced).mapToObj(i -> "v" + i).toList());
    assertThat(new TableCommitter(warehouse.load(restarted.tableIdentifier())).committed().nextOffsets())
        .containsExactlyInAnyOrderEntriesOf(Map.of(0, 6L, 1, 6L));
  }

  @Test
  void aStaleRoundIsRefusedAndChangesNothing() {
    // goal: two committers racing over the same offsets cannot both land (no duplicates)
    TestTopic topic = new TestTopic("race", 1);
    topic.append(0, List.of(rec(TS, "a", "1"), rec(TS, "b", "2")));
    TableSync a = sync(topic, Map.of(), 1 << 20);
    TableSync b = sync(topic, Map.of(), 1 << 20);
    TableSync.PreparedRound roundA = a.prepare();
    TableSync.PreparedRound roundB = b.prepare();
    a.commit(roundA);
    long snapshotsBefore = countSnapshots(warehouse.load(a.tableIdentifier()));

    assertThatThrownBy(() -> b.commit(roundB)).isInstanceOf(TableCommitter.CommitConflictException.class)
        .hasMessageContaining("partition 0");

    assertThat(countSnapshots(warehouse.load(a.tableIdentifier()))).isEqualTo(snapshotsBefore);
    assertThat(warehouse.readAll(a.tableIdentifier())).hasSize(2);
  }

  private static long countSnapshots(Table t) {
    long n = 0;
    for (Snapshot ignored : t.snapshots()) {
      n++;
    }
    return n;
  }

  @Test
  void boundedRoundsCatchUpOverSeveralCommits() {
    // goal: a partition's round reads at most the configured bytes; the rest follows in later rounds
    TestTopic topic = new TestTopic("backlog", 1);
    for (int i = 0; i < 20; i++) {
      topic.append(0, List.of(rec(TS, "k", "value-" + i + "-" + "x".repeat(200))));
    }
    TableSync sync = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "string"), 1024);
    int rounds = 0;
    TableSync.RoundResult r;
    do {
      r = sync.runRound();
      rounds++;
    } while (r.moreData() && rounds < 100);
    assertThat(rounds).isGreaterThan(1);
    assertThat(warehouse.readAll(sync.tableIdentifier())).extracting(x -> x.getField(KafkaColumns.OFFSET))
        .containsExactlyInAnyOrderElementsOf(java.util.stream.LongStream.range(0, 20).boxed().toList());
  }

  @Test
  void schemalessJsonAddsColumnsAndWidensTypesAsDataArrives() {
    // goal: json values become typed columns; new fields add optional columns; int widens to long; ints fit double columns
    TestTopic topic = new TestTopic("events", 1);
    topic.append(0, List.of(rec(TS, "u1", "{\"n\": 1, \"name\": \"ann\", \"ok\": true}")));
    TableSync sync = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "json"), 1 << 20);
    sync.runRound();
    Table t1 = warehouse.load(sync.tableIdentifier());
    assertThat(t1.schema().findField("n").type().typeId()).isEqualTo(Type.TypeID.INTEGER);
    assertThat(t1.schema().findField(KafkaColumns.VALUE)).isNull();

    topic.append(0, List.of(
        rec(TS + 1, "u2", "{\"n\": 5000000000, \"score\": 1.5, \"tags\": [\"a\", 2], \"addr\": {\"c\": \"x\"}}"),
        rec(TS + 2, "u3", "{\"n\": 7, \"score\": 3, \"name\": 42}")));
    sync.runRound();

    Table t2 = warehouse.load(sync.tableIdentifier());
    assertThat(t2.schema().findField("n").type().typeId()).isEqualTo(Type.TypeID.LONG);
    assertThat(t2.schema().findField("score").type().typeId()).isEqualTo(Type.TypeID.DOUBLE);
    assertThat(t2.schema().findField("score").isOptional()).isTrue();
    List<Record> rows = sorted(warehouse.readAll(sync.tableIdentifier()));
    assertThat(rows).hasSize(3);
    // the first file was written when n was an int column; it reads back as long
    assertThat(rows).extracting(r -> r.getField("n")).containsExactly(1L, 5_000_000_000L, 7L);
    assertThat(rows).extracting(r -> r.getField("name")).containsExactly("ann", null, "42");
    assertThat(rows).extracting(r -> r.getField("ok")).containsExactly(true, null, null);
    assertThat(rows).extracting(r -> r.getField("score")).containsExactly(null, 1.5, 3.0);
    assertThat(rows).extracting(r -> r.getField("tags")).containsExactly(null, "[\"a\",2]", null);
    assertThat(rows).extracting(r -> r.getField("addr")).containsExactly(null, "{\"c\":\"x\"}", null);
    assertThat(rows).extracting(r -> r.getField(KafkaColumns.KEY)).containsExactly("u1", "u2", "u3");
  }

  @Test
  void jsonValuesIcebergCannotHoldAreInvalidData() {
    // goal: a fractional value for a long column, text for a number column, or a non-object is skipped and counted
    TestTopic topic = new TestTopic("strict", 1);
    topic.append(0, List.of(
        rec(TS, "a", "{\"n\": 5000000000}"),
        rec(TS, "b", "{\"n\": 2.5}"),
        rec(TS, "c", "{\"n\": \"text\"}"),
        rec(TS, "d", "[1, 2]"),
        rec(TS, "e", "{not json"),
        rec(TS, "f", "{\"_kafka_offset\": 1}"),
        rec(TS, "g", "{\"n\": 3}")));
    TableSync sync = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "json",
        TableTopicConfig.ERRORS_TOLERANCE, "invalid_data"), 1 << 20);

    TableSync.RoundResult r = sync.runRound();

    assertThat(r.skipped()).isEqualTo(5);
    assertThat(sorted(warehouse.readAll(sync.tableIdentifier()))).extracting(x -> x.getField("n"))
        .containsExactly(5_000_000_000L, 3L);
    assertThat(r.nextOffsets()).containsEntry(0, 7L);
  }

  @Test
  void underToleranceNoneABadRecordPausesItsPartitionUntilTheConfigChanges() {
    // goal: errors.tolerance=none stops the partition before the bad record with a clear status; others go on
    TestTopic topic = new TestTopic("paused", 2);
    topic.append(0, List.of(rec(TS, "a", "{\"x\": 1}"), rec(TS, "b", "oops"), rec(TS, "c", "{\"x\": 3}")));
    topic.append(1, List.of(rec(TS, "d", "{\"x\": 4}")));
    Map<String, String> strict = Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "json", TableTopicConfig.ERRORS_TOLERANCE, "none");
    TableSync sync = sync(topic, strict, 1 << 20);

    sync.runRound();

    assertThat(sync.status(0).state()).isEqualTo(TableSync.PartitionState.PAUSED);
    assertThat(sync.status(0).pauseReason()).contains("offset 1").contains("not valid JSON");
    assertThat(sync.status(1).state()).isEqualTo(TableSync.PartitionState.RUNNING);
    assertThat(sorted(warehouse.readAll(sync.tableIdentifier()))).extracting(x -> x.getField("x")).containsExactly(1, 4);

    // while paused, later rounds leave the partition where it stopped
    topic.append(1, List.of(rec(TS, "e", "{\"x\": 5}")));
    sync.runRound();
    assertThat(new TableCommitter(warehouse.load(sync.tableIdentifier())).committed().nextOffsets())
        .containsExactlyInAnyOrderEntriesOf(Map.of(0, 1L, 1, 2L));

    Map<String, String> lenient = new HashMap<>(strict);
    lenient.put(TableTopicConfig.ERRORS_TOLERANCE, "invalid_data");
    lenient.put(TableTopicConfig.ENABLE, "true");
    sync.updateConfig(TableTopicConfig.parse(lenient));
    TableSync.RoundResult r = sync.runRound();

    assertThat(r.skipped()).isEqualTo(1);
    assertThat(sync.status(0).state()).isEqualTo(TableSync.PartitionState.RUNNING);
    assertThat(sorted(warehouse.readAll(sync.tableIdentifier()))).extracting(x -> x.getField("x")).containsExactly(1, 3, 4, 5);
  }

  @Test
  void unsupportedConvertersAreRejectedUpFront() {
    // goal: converters not built yet fail with a message naming the setting, instead of writing wrong data
    TestTopic topic = new TestTopic("avro", 1);
    assertThatThrownBy(() -> sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "by_schema_id"), 1 << 20))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("table.topic.convert.value.type=by_schema_id");
  }

  @Test
  void skippedRecordsGoToTheDeadLetterTableOnceEvenWhenTheMainCommitIsLost() {
    // goal: with the DLQ on, bad records land in <table>_dlq with the reason, exactly once across a crash between the two commits
    TestTopic topic = new TestTopic("dlq", 1);
    topic.append(0, List.of(rec(TS, "a", "{\"x\": 1}"), rec(TS + 1, "b", "not json", new RecordHeader("h", new byte[] {9})),
        rec(TS + 2, "c", "{\"x\": 2.5}"), rec(TS + 3, "d", "{\"x\": 3}")));
    Map<String, String> cfg = Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "json", TableTopicConfig.ERRORS_DLQ_ENABLE, "true");
    TableSync first = sync(topic, cfg, 1 << 20);
    TableSync.PreparedRound round = first.prepare();
    assertThat(round.deadLetters().files()).hasSize(1);
    // crash after the DLQ commit, before the main table's commit
    new TableCommitter(warehouse.load(first.dlqIdentifier())).commit(round.commitId(),
        round.deadLetters().baseOffsets(), round.deadLetters().nextOffsets(), round.deadLetters().files());

    TableSync restarted = sync(topic, cfg, 1 << 20);
    TableSync.RoundResult r = restarted.runRound();

    assertThat(r.skipped()).isEqualTo(2);
    assertThat(sorted(warehouse.readAll(restarted.tableIdentifier()))).extracting(x -> x.getField("x")).containsExactly(1, 3);
    List<Record> dead = sorted(warehouse.readAll(restarted.dlqIdentifier()));
    assertThat(dead).extracting(x -> x.getField(KafkaColumns.OFFSET)).containsExactly(1L, 2L);
    assertThat(text(dead.get(0).getField(KafkaColumns.VALUE))).isEqualTo("not json");
    assertThat(text(dead.get(0).getField(KafkaColumns.KEY))).isEqualTo("b");
    assertThat(dead.get(0).getField(KafkaColumns.TIMESTAMP)).isEqualTo(OffsetDateTime.ofInstant(Instant.ofEpochMilli(TS + 1), ZoneOffset.UTC));
    assertThat(dead.get(0).getField("_error").toString()).contains("not valid JSON");
    assertThat(dead.get(1).getField("_error").toString()).contains("column x is int");
    @SuppressWarnings("unchecked")
    Map<String, ByteBuffer> h = (Map<String, ByteBuffer>) dead.get(0).getField(KafkaColumns.HEADERS);
    assertThat(h.get("h").get(0)).isEqualTo((byte) 9);
  }

  @Test
  @SuppressWarnings("deprecation") // Snapshot.addedDataFiles(FileIO)
  void partitionByFromConfigAndFromAnExternalSpecChangeIsHonoured() throws Exception {
    // goal: partition.by builds the spec (fields whose column appears later are added then); an outside spec change is used from the next round
    TestTopic topic = new TestTopic("parts", 1);
    topic.append(0, List.of(rec(TS, "a", "{\"user\": \"ann\", \"page\": \"/home\"}"),
        rec(TS + 86_400_000L, "b", "{\"user\": \"bob\", \"page\": \"/buy\"}")));
    TableSync sync = sync(topic, Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "json",
        TableTopicConfig.PARTITION_BY, "[day(_kafka_timestamp), bucket(user, 4), truncate(page, 2), region]"), 1 << 20);
    sync.runRound();

    Table t1 = warehouse.load(sync.tableIdentifier());
    assertThat(t1.spec().fields()).extracting(f -> f.transform().toString()).containsExactly("day", "bucket[4]", "truncate[2]");
    assertThat(t1.currentSnapshot().addedDataFiles(t1.io())).hasSize(2)
        .allSatisfy(f -> assertThat(f.specId()).isEqualTo(t1.spec().specId()));

    topic.append(0, List.of(rec(TS, "c", "{\"user\": \"cy\", \"page\": \"/x\", \"region\": \"eu\"}"),
        rec(TS, "d", "{\"user\": \"di\", \"page\": \"/y\", \"region\": \"us\"}")));
    sync.runRound();
    Table t2 = warehouse.load(sync.tableIdentifier());
    assertThat(t2.spec().fields()).extracting(f -> f.transform().toString())
        .containsExactly("day", "bucket[4]", "truncate[2]", "identity");
    try (org.apache.iceberg.io.CloseableIterable<Record> eu = org.apache.iceberg.data.IcebergGenerics.read(t2)
        .where(org.apache.iceberg.expressions.Expressions.equal("region", "eu")).build()) {
      List<Object> users = new ArrayList<>();
      eu.forEach(r -> users.add(r.getField("user")));
      assertThat(users).containsExactly("cy");
    }

    // someone else changes the spec in the catalog: the next round writes with it
    Table external = warehouse.load(sync.tableIdentifier());
    external.updateSpec().addField(KafkaColumns.PARTITION).commit();
    topic.append(0, List.of(rec(TS, "e", "{\"user\": \"ed\", \"page\": \"/z\"}")));
    sync.runRound();
    Table t3 = warehouse.load(sync.tableIdentifier());
    assertThat(t3.currentSnapshot().addedDataFiles(t3.io())).singleElement()
        .satisfies(f -> assertThat(f.specId()).isEqualTo(t3.spec().specId()));
    assertThat(t3.spec().fields()).hasSize(5);
    assertThat(warehouse.readAll(sync.tableIdentifier())).extracting(r -> r.getField("user"))
        .containsExactlyInAnyOrder("ann", "bob", "cy", "di", "ed");
  }
}
