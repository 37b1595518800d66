package io.tidemark.table.sync;

import io.tidemark.broker.partition.LogSettings;
import io.tidemark.broker.partition.MemoryStreamStore;
import io.tidemark.broker.partition.PartitionLocation;
import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.record.RecordBatches;
import io.tidemark.table.source.PartitionLogSource;
import io.tidemark.table.source.PartitionRecordSource;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.Time;

/** A topic whose partitions are real broker {@link PartitionLog}s on an in-memory stream store. */
final class TestTopic {

  final String name;
  final Map<Integer, PartitionLog> logs = new TreeMap<>();
  private final MemoryStreamStore store = new MemoryStreamStore(1 << 28);

  TestTopic(String name, int partitions) {
    this.name = name;
    Uuid id = Uuid.randomUuid();
    for (int p = 0; p < partitions; p++) {
      long data = store.createStream(Map.of()).join();
      long meta = store.createStream(Map.of()).join();
      PartitionLocation location = new PartitionLocation(new TopicPartition(name, p), id, data, meta);
      logs.put(p, PartitionLog.open(store, location, 0, new LogSettings(1 << 20, false), Time.SYSTEM, l -> {}).join());
    }
  }

  /** Appends one batch holding {@code records} to {@code partition}; returns its base offset. */
  long append(int partition, List<SimpleRecord> records) {
    MemoryRecords batch = MemoryRecords.withRecords(Compression.NONE, records.toArray(new SimpleRecord[0]));
    return logs.get(partition).append(RecordBatches.validateProduced(batch, (short) 9, 1 << 20)).join().baseOffset();
  }

  /** Appends one transactional batch of {@code producerId} (sequence {@code sequence} onwards) to {@code partition}. */
  long appendTransactional(int partition, long producerId, int sequence, List<SimpleRecord> records) {
    MemoryRecords batch = MemoryRecords.withTransactionalRecords(Compression.NONE, producerId, (short) 0, sequence,
        records.toArray(new SimpleRecord[0]));
    return logs.get(partition).append(RecordBatches.validateProduced(batch, (short) 9, 1 << 20)).join().baseOffset();
  }

  /** Ends {@code producerId}'s transaction in {@code partition} with a COMMIT or ABORT marker. */
  void endTransaction(int partition, long producerId, boolean commit) {
    logs.get(partition).appendMarker(producerId, (short) 0, 0, commit).join();
  }

  /**
   * Appends bytes that are no record batch, as {@code records} offsets, to {@code partition}'s data
   * stream around the broker, then reopens the partition (as after a restart) past them.
   */
  void damage(int partition, int records) {
    PartitionLog log = logs.get(partition);
    store.stream(log.location().dataStreamId()).orElseThrow().append(records, ByteBuffer.wrap(new byte[] {1, 2, 3})).join();
    logs.put(partition, PartitionLog.open(store, log.location(), log.leaderEpoch() + 1, log.settings(), Time.SYSTEM, l -> {})
        .join());
  }

  /**
   * Closes {@code partition}'s log and opens it again with the next leader epoch, as a broker does
   * when it loses the partition (e.g. its lease) and gets it back.
   */
  void reopen(int partition) {
    PartitionLog log = logs.get(partition);
    log.close().join();
    logs.put(partition, PartitionLog.open(store, log.location(), log.leaderEpoch() + 1, log.settings(), Time.SYSTEM, l -> {})
        .join());
  }

  Map<Integer, PartitionRecordSource> sources() {
    Map<Integer, PartitionRecordSource> out = new TreeMap<>();
    logs.forEach((p, log) -> out.put(p, new PartitionLogSource(log)));
    return out;
  }
}
