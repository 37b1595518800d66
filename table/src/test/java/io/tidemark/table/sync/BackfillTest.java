package io.tidemark.table.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.convert.KafkaColumns;
import io.tidemark.table.source.PartitionRecordSource;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.iceberg.data.Record;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: a table enabled on a topic that already holds data converts it from the configured position (earliest,
 * latest, a timestamp) at the configured byte rate while new records keep arriving, and ends with exactly the
 * expected rows, each once, across a restart in the middle of the backfill.
 */
class BackfillTest {

  private static final long TS = 1_700_000_000_000L;
  private static final int RECORDS_PER_BATCH = 10;

  @TempDir
  Path dir;
  private TestWarehouse warehouse;
  private final AtomicInteger ids = new AtomicInteger();
  /** The backfill rate's clock, advanced by the test only. */
  private final AtomicLong nanos = new AtomicLong();

  @BeforeEach
  void setUp() {
    warehouse = new TestWarehouse(dir);
  }

  @AfterEach
  void tearDown() throws Exception {
    warehouse.close();
  }

  private TableSync sync(TestTopic topic, Map<String, String> configs) {
    Map<String, String> all = new HashMap<>(configs);
    all.put(TableTopicConfig.ENABLE, "true");
    all.put(TableTopicConfig.CONVERT_VALUE_TYPE, "string");
    TableSync sync = new TableSync(topic.name, TableTopicConfig.parse(all), warehouse.freshCatalog(), topic.sources(),
        () -> "commit-" + ids.incrementAndGet(), 1 << 20, 64L << 20);
    sync.useNanoClock(nanos::get);
    return sync;
  }

  /** Appends batches of {@link #RECORDS_PER_BATCH} records {@code v<n>} with timestamps TS + n to partition 0. */
  private static void produce(TestTopic topic, int from, int to) {
    for (int n = from; n < to; n += RECORDS_PER_BATCH) {
      List<SimpleRecord> batch = new ArrayList<>();
      for (int i = n; i < Math.min(to, n + RECORDS_PER_BATCH); i++) {
        batch.add(new SimpleRecord(TS + i, ("k" + i).getBytes(StandardCharsets.UTF_8),
            ("v" + i).getBytes(StandardCharsets.UTF_8)));
      }
      topic.append(0, batch);
    }
  }

  /** The table's values by offset; fails on an offset written twice. */
  private Map<Long, String> table(TableSync sync) {
    Map<Long, String> out = new TreeMap<>();
    for (Record r : warehouse.readAll(sync.tableIdentifier())) {
      assertThat(out.put((Long) r.getField(KafkaColumns.OFFSET), (String) r.getField(KafkaColumns.VALUE)))
          .as("offset written twice").isNull();
    }
    return out;
  }

  private static Map<Long, String> expected(int from, int to) {
    Map<Long, String> out = new TreeMap<>();
    for (int i = from; i < to; i++) {
      out.put((long) i, "v" + i);
    }
    return out;
  }

  @Test
  void aRoundWhoseBudgetRunsOutDuringAReadStopsAtABatchBoundaryAndTheRestFollows() {
    // Goal: the round budget holds while a read's batches are being converted (a starved converter took
    // minutes over one 16 MiB read and no round reached the table): the round ends after the batch during
    // which its budget ran out, and the next rounds land the rest, each record once.
    TestTopic topic = new TestTopic("budget", 1);
    produce(topic, 0, 50); // five batches, read at once
    java.util.concurrent.atomic.AtomicBoolean budgetGone = new java.util.concurrent.atomic.AtomicBoolean();
    PartitionRecordSource source = topic.sources().get(0);
    PartitionRecordSource slowToConvert = new PartitionRecordSource() {
      @Override
      public java.util.concurrent.CompletableFuture<Batches> read(long offset, int maxBytes) {
        return source.read(offset, maxBytes).thenApply(read -> {
          budgetGone.set(true); // converting what this read returned takes the whole budget
          return read;
        });
      }

      @Override
      public long logStartOffset() {
        return source.logStartOffset();
      }

      @Override
      public long highWatermark() {
        return source.highWatermark();
      }
    };
    TableSync sync = new TableSync(topic.name, TableTopicConfig.parse(Map.of(TableTopicConfig.ENABLE, "true",
        TableTopicConfig.CONVERT_VALUE_TYPE, "string")), warehouse.freshCatalog(), Map.of(0, slowToConvert),
        () -> "commit-" + ids.incrementAndGet(), 1 << 20, 64L << 20);

    TableSync.PreparedRound first = sync.prepare(() -> budgetGone.get() ? 0 : 10_000);
    assertThat(first.rows()).as("one batch converted").isEqualTo(RECORDS_PER_BATCH);
    assertThat(first.moreData()).isTrue();
    assertThat(first.nextOffsets()).containsEntry(0, (long) RECORDS_PER_BATCH);
    sync.commit(first);
    for (int round = 0; round < 10 && !table(sync).equals(expected(0, 50)); round++) {
      budgetGone.set(false);
      sync.commit(sync.prepare(() -> budgetGone.get() ? 0 : 10_000));
    }
    assertThat(table(sync)).isEqualTo(expected(0, 50));
  }

  @Test
  void existingDataIsConvertedAtTheBoundedRateWhileNewDataArrivesAcrossARestart() throws Exception {
    TestTopic topic = new TestTopic("history", 1);
    produce(topic, 0, 300); // history, before the table is enabled
    long batchBytes = topic.sources().get(0).read(0, 1).join().batches().get(0).remaining();
    Map<String, String> configs = Map.of(TableTopicConfig.BACKFILL_MAX_BYTES_PER_SEC, String.valueOf(3 * batchBytes));

    TableSync first = sync(topic, configs);
    first.runRound(); // the bucket starts with one second of bytes: about 3 batches
    long afterOneRound = table(first).size();
    assertThat(afterOneRound).isBetween(20L, 40L);
    first.runRound(); // no time passed: nothing more may be read
    assertThat(table(first)).hasSize((int) afterOneRound);
    assertThat(first.status(0).backfillEndOffset()).isEqualTo(300);
    produce(topic, 300, 320); // new data keeps flowing during the backfill
    nanos.addAndGet(1_000_000_000L);
    first.runRound();
    assertThat(table(first).size()).isBetween((int) afterOneRound + 20, (int) afterOneRound + 40);
    warehouse.closeCatalogs(); // restart in the middle of the backfill

    TableSync second = sync(topic, configs);
    for (int round = 0; round < 200 && table(second).size() < 330; round++) {
      nanos.addAndGet(1_000_000_000L);
      second.runRound();
      if (round == 3) {
        produce(topic, 320, 330);
      }
    }
    assertThat(table(second)).isEqualTo(expected(0, 330));
    assertThat(second.status(0).nextOffset()).isEqualTo(330);
  }

  @Test
  void latestSkipsTheHistoryAndKeepsItsStartAcrossARestartBeforeAnyNewRecord() throws Exception {
    TestTopic topic = new TestTopic("recent", 1);
    produce(topic, 0, 50);
    Map<String, String> configs = Map.of(TableTopicConfig.BACKFILL_START, "latest");
    TableSync first = sync(topic, configs);
    first.runRound(); // no new record yet: the start offset is committed anyway
    assertThat(table(first)).isEmpty();
    warehouse.closeCatalogs();
    produce(topic, 50, 60); // produced while the node is down: after the chosen start, so they land
    TableSync second = sync(topic, configs);
    second.runRound();
    assertThat(table(second)).isEqualTo(expected(50, 60));
  }

  @Test
  void aTimestampStartsAtTheFirstRecordAtOrAfterIt() {
    TestTopic topic = new TestTopic("since", 1);
    produce(topic, 0, 100);
    TableSync sync = sync(topic, Map.of(TableTopicConfig.BACKFILL_START, String.valueOf(TS + 42)));
    sync.runRound();
    produce(topic, 100, 110);
    sync.runRound();
    assertThat(table(sync)).isEqualTo(expected(42, 110));
    assertThat(sync.status(0).backfillStartOffset()).isEqualTo(42);
  }

  @Test
  void badBackfillSettingsAreRefusedWithTheKey() {
    assertThatThrownBy(() -> TableTopicConfig.parse(Map.of(TableTopicConfig.BACKFILL_START, "yesterday")))
        .hasMessageContaining(TableTopicConfig.BACKFILL_START);
    assertThatThrownBy(() -> TableTopicConfig.parse(Map.of(TableTopicConfig.BACKFILL_MAX_BYTES_PER_SEC, "-1")))
        .hasMessageContaining(TableTopicConfig.BACKFILL_MAX_BYTES_PER_SEC);
    assertThat(TableTopicConfig.parse(Map.of("automq.table.topic.backfill.start", "latest")).backfill().start())
        .isEqualTo(TableTopicConfig.BackfillStart.LATEST);
  }
}
