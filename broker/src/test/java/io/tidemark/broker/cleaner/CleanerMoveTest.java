package io.tidemark.broker.cleaner;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.broker.partition.LogSettings;
import io.tidemark.broker.partition.PartitionLocation;
import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.partition.Partitions;
import io.tidemark.broker.record.KeyValue;
import io.tidemark.broker.record.RecordBatches;
import io.tidemark.stream.engine.StreamEngine;
import io.tidemark.stream.engine.StreamEngineConfig;
import io.tidemark.stream.metadata.MemoryStreamMetadata;
import io.tidemark.stream.metadata.StreamMetadataConfig;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.MemoryObjectStorage;
import io.tidemark.stream.wal.MemoryWriteAheadLog;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Goal: compaction survives a partition move. Node 1 writes keyed records and tombstones and cleans
 * part of them with a key map too small for one pass; the partition then moves to node 2 (closed on
 * node 1, opened with a newer epoch), which finds the cleaner's checkpoint where node 1 left it,
 * takes more writes and finishes cleaning; opened on node 3, the log holds exactly the latest record
 * of every key at its original offset. Seeded; the seed is printed.
 */
class CleanerMoveTest {

  private static final long SEED = Long.getLong("tidemark.test.seed", System.nanoTime());
  private static final CleanerPolicy POLICY = new CleanerPolicy(true, 3_600_000, 0, Long.MAX_VALUE, 0.0);
  private static final LogSettings SETTINGS = new LogSettings(1 << 20, false,
      io.tidemark.broker.record.TopicCompression.PRODUCER, true);

  final MemoryObjectStorage storage = new MemoryObjectStorage();
  final ObjectKeys keys = ObjectKeys.defaults();
  final MemoryStreamMetadata metadata = new MemoryStreamMetadata(System::currentTimeMillis, storage, keys,
      new StreamMetadataConfig(1000, 1000, 10_000));
  final List<StreamEngine> engines = new ArrayList<>();

  private StreamEngine engine(int node) {
    StreamEngineConfig config = new StreamEngineConfig(4L * 1024 * 1024, 256 * 1024, 100, 1, 4096, 1024 * 1024, 60_000,
        8L * 1024 * 1024, 5, 50, 8);
    StreamEngine e = StreamEngine.builder().node(metadata.registerNode(node)).wal(new MemoryWriteAheadLog())
        .objectStorage(storage).streamManager(metadata).objectManager(metadata).objectKeys(keys).config(config).build();
    e.start().join();
    engines.add(e);
    return e;
  }

  @AfterEach
  void close() {
    engines.forEach(StreamEngine::close);
  }

  @Test
  void cleaningGoesOnWhereTheLastOwnerLeftIt() throws Exception {
    System.out.println("CleanerMoveTest seed=" + SEED);
    Random random = new Random(SEED);
    StreamEngine first = engine(1);
    TopicPartition tp = new TopicPartition("moved", 0);
    PartitionLocation location = new PartitionLocation(tp, Uuid.randomUuid(), first.createStream(Map.of()).join(),
        first.createStream(Map.of()).join());
    Map<String, long[]> latest = new HashMap<>();
    Map<String, String> latestValue = new HashMap<>();

    PartitionLog log1 = PartitionLog.open(first, location, 1, SETTINGS, Time.SYSTEM, p -> {}).join();
    write(log1, random, 300, latest, latestValue);
    first.flush().get(60, TimeUnit.SECONDS);
    // 1 KiB key map: about 38 keys a pass, fewer than the 60 keys written, so one pass cleans a part only
    LogCleaner cleaner1 = cleaner(log1, first);
    LogCleaner.RunReport report = cleaner1.runOnce();
    assertThat(report.failures()).isEmpty();
    long checkpoint = log1.cleanedOffset();
    assertThat(checkpoint).isGreaterThan(0).isLessThan(log1.highWatermark());
    log1.close().get(60, TimeUnit.SECONDS);

    StreamEngine second = engine(2);
    PartitionLog log2 = PartitionLog.open(second, location, 2, SETTINGS, Time.SYSTEM, p -> {}).join();
    assertThat(log2.cleanedOffset()).as("checkpoint after the move").isEqualTo(checkpoint);
    write(log2, random, 200, latest, latestValue);
    second.flush().get(60, TimeUnit.SECONDS);
    LogCleaner cleaner2 = cleaner(log2, second);
    for (int pass = 0; pass < 50 && log2.cleanedOffset() < log2.highWatermark(); pass++) {
      assertThat(cleaner2.runOnce().failures()).isEmpty();
    }
    assertThat(log2.cleanedOffset()).isEqualTo(log2.highWatermark());
    log2.close().get(60, TimeUnit.SECONDS);

    StreamEngine third = engine(3);
    PartitionLog log3 = PartitionLog.open(third, location, 3, SETTINGS, Time.SYSTEM, p -> {}).join();
    Map<String, long[]> seen = new HashMap<>();
    Map<String, String> seenValue = new HashMap<>();
    long offset = log3.logStartOffset();
    int records = 0;
    while (offset < log3.highWatermark()) {
      PartitionLog.RecordPage page = log3.readRecords(offset, 4096).get(60, TimeUnit.SECONDS);
      for (KeyValue kv : page.records()) {
        String key = new String(kv.key(), StandardCharsets.UTF_8);
        assertThat(seen).as("key %s appears once after cleaning", key).doesNotContainKey(key);
        seen.put(key, new long[] {kv.offset()});
        seenValue.put(key, kv.value() == null ? null : new String(kv.value(), StandardCharsets.UTF_8));
        records++;
      }
      offset = page.nextOffset();
    }
    assertThat(records).isEqualTo(latest.size());
    for (Map.Entry<String, long[]> e : latest.entrySet()) {
      assertThat(seen.get(e.getKey())).as("offset of key %s", e.getKey()).containsExactly(e.getValue());
      assertThat(seenValue.get(e.getKey())).as("value of key %s", e.getKey()).isEqualTo(latestValue.get(e.getKey()));
    }
    log3.close().get(60, TimeUnit.SECONDS);
  }

  private LogCleaner cleaner(PartitionLog log, StreamEngine engine) {
    Partitions partitions = new Partitions();
    partitions.put(log);
    return new LogCleaner(partitions, tp -> POLICY, engine.rewriter().orElseThrow(), Time.SYSTEM,
        new LogCleaner.Limits(1024, 1 << 20, 1L << 30));
  }

  /** Appends {@code n} records over 60 keys, in batches of 1 to 5, about one in eight a tombstone. */
  private static void write(PartitionLog log, Random random, int n, Map<String, long[]> latest, Map<String, String> values)
      throws Exception {
    int written = 0;
    while (written < n) {
      int size = 1 + random.nextInt(5);
      List<byte[][]> batch = new ArrayList<>();
      List<String[]> plain = new ArrayList<>();
      for (int i = 0; i < size; i++) {
        String key = "key-" + random.nextInt(60);
        String value = random.nextInt(8) == 0 ? null : "v" + random.nextInt(1_000_000);
        batch.add(new byte[][] {key.getBytes(StandardCharsets.UTF_8), value == null ? null : value.getBytes(StandardCharsets.UTF_8)});
        plain.add(new String[] {key, value});
      }
      long base = log.append(RecordBatches.internalBatch(System.currentTimeMillis(), batch)).get(60, TimeUnit.SECONDS)
          .baseOffset();
      for (int i = 0; i < size; i++) {
        latest.put(plain.get(i)[0], new long[] {base + i});
        values.put(plain.get(i)[0], plain.get(i)[1]);
      }
      written += size;
    }
  }
}
