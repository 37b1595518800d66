package io.tidemark.broker.cleaner;

import io.tidemark.broker.record.RecordBatches;
import io.tidemark.stream.api.StreamBatch;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.internals.BufferSupplier;
import org.apache.kafka.common.utils.internals.ByteBufferOutputStream;
import org.apache.kafka.common.utils.internals.CloseableIterator;

/**
 * One cleaning of stored Kafka batches (a pure function of the batches, the key map and the time),
 * with Kafka's rules for a compacted log:
 * <ul>
 *   <li>below the map's end, a record whose key has a later offset in the map is dropped, and so is
 *       a record without a key (as Kafka's cleaner drops it);
 *   <li>a tombstone (null value) in a batch the cleaner reaches for the first time is kept and its
 *       batch gets a delete horizon of now + {@code delete.retention.ms} (KIP-534, the batch's
 *       delete-horizon flag, which Kafka consumers read); once that horizon has passed and the
 *       tombstone lies in the already clean part (below {@code firstDirty}, so every older value of
 *       its key is gone), it is dropped;
 *   <li>a batch keeps its base offset, last offset, producer id, epoch, sequence, leader epoch and
 *       codec (Kafka keeps them too: consumers see the same offsets, with gaps); a batch left
 *       without records and its empty neighbours become one empty batch (a header with no records,
 *       as Kafka keeps for producer state) spanning their offsets, so the stream stays gap-free while
 *       what remains grows with the live keys, not with the history;
 *   <li>transactions follow {@link CleanedTransactions}: a batch of an aborted transaction loses
 *       all its records; a marker stays while its transaction has data left, then gets a delete
 *       horizon and goes once that has passed;
 *   <li>batches at or above the map's end are kept as they are.
 * </ul>
 */
final class CompactedBatches {

  /** What a cleaning changed. */
  record Outcome(List<StreamBatch> batches, long recordsKept, long recordsDropped) {}

  private CompactedBatches() {}

  static Outcome clean(List<StreamBatch> batches, KeyOffsetMap map, CleanedTransactions txns, long firstDirty, long mapEnd,
      long nowMs, long deleteRetentionMs) {
    List<StreamBatch> out = new ArrayList<>(batches.size());
    Gap gap = new Gap();
    long kept = 0;
    long dropped = 0;
    for (StreamBatch b : batches) {
      MutableRecordBatch kb = MemoryRecords.readableRecords(b.payload().duplicate()).batches().iterator().next();
      if (b.baseOffset() >= mapEnd) {
        gap.flushInto(out);
        out.add(b);
        continue;
      }
      if (kb.isControlBatch()) {
        ByteBuffer marker = marker(b, kb, txns, nowMs, deleteRetentionMs);
        if (marker == null) {
          gap.extend(b, kb);
          dropped++;
        } else {
          gap.flushInto(out);
          out.add(marker == b.payload() ? b : new StreamBatch(b.baseOffset(), b.recordCount(), marker));
        }
        continue;
      }
      if (kb.isTransactional() && kb.hasProducerId() && txns.onDataBatch(kb.producerId(), kb.baseOffset())) {
        int count = kb.countOrNull() == null ? (int) (kb.lastOffset() - kb.baseOffset() + 1) : kb.countOrNull();
        dropped += count; // an aborted transaction's records
        gap.extend(b, kb);
        continue;
      }
      List<Record> retained = new ArrayList<>();
      boolean tombstoneWithoutHorizon = false;
      int total = 0;
      OptionalLong horizon = kb.deleteHorizonMs();
      try (CloseableIterator<Record> it = kb.streamingIterator(BufferSupplier.NO_CACHING)) {
        while (it.hasNext()) {
          Record r = it.next();
          total++;
          if (keep(r, kb, map, firstDirty, nowMs)) {
            retained.add(r);
            tombstoneWithoutHorizon |= !r.hasValue() && horizon.isEmpty();
          }
        }
      }
      kept += retained.size();
      dropped += total - retained.size();
      if (retained.isEmpty()) {
        gap.extend(b, kb);
      } else if (retained.size() == total && !tombstoneWithoutHorizon) {
        gap.flushInto(out);
        out.add(b);
      } else {
        gap.flushInto(out);
        long newHorizon = horizon.isPresent() ? horizon.getAsLong()
            : tombstoneWithoutHorizon ? nowMs + deleteRetentionMs : RecordBatch.NO_TIMESTAMP;
        out.add(new StreamBatch(b.baseOffset(), b.recordCount(), rebuild(kb, retained, newHorizon)));
      }
    }
    gap.flushInto(out);
    return new Outcome(out, kept, dropped);
  }

  private static boolean keep(Record r, MutableRecordBatch kb, KeyOffsetMap map, long firstDirty, long nowMs) {
    if (!r.hasKey()) {
      return false;
    }
    byte[] key = new byte[r.keySize()];
    r.key().duplicate().get(key);
    long latest = map.get(key);
    if (latest > r.offset()) {
      return false;
    }
    if (!r.hasValue()) {
      OptionalLong horizon = kb.deleteHorizonMs();
      return !(horizon.isPresent() && nowMs >= horizon.getAsLong() && r.offset() < firstDirty);
    }
    return true;
  }

  /**
   * A marker batch as this cleaning leaves it: as it is while its transaction has data left (or it
   * is not an end-transaction marker); with a delete horizon the first time it is found empty;
   * null (dropped) once that horizon has passed.
   */
  private static ByteBuffer marker(StreamBatch b, MutableRecordBatch kb, CleanedTransactions txns, long nowMs,
      long deleteRetentionMs) {
    RecordBatches.Marker m = kb.hasProducerId() ? RecordBatches.marker(b.payload()) : null;
    if (m == null || !txns.onMarker(kb.producerId(), kb.baseOffset(), m.commit())) {
      return b.payload();
    }
    OptionalLong horizon = kb.deleteHorizonMs();
    if (horizon.isEmpty()) {
      List<Record> records = new ArrayList<>();
      try (CloseableIterator<Record> it = kb.streamingIterator(BufferSupplier.NO_CACHING)) {
        it.forEachRemaining(records::add);
      }
      return rebuild(kb, records, nowMs + deleteRetentionMs);
    }
    return nowMs >= horizon.getAsLong() ? null : b.payload();
  }

  /** The batch with only {@code retained}, every header field kept (last offset included). */
  private static ByteBuffer rebuild(MutableRecordBatch kb, List<Record> retained, long deleteHorizonMs) {
    ByteBufferOutputStream out = new ByteBufferOutputStream(Math.max(DefaultRecordBatch.RECORD_BATCH_OVERHEAD, kb.sizeInBytes()));
    long logAppendTime = kb.timestampType() == TimestampType.LOG_APPEND_TIME ? kb.maxTimestamp() : RecordBatch.NO_TIMESTAMP;
    MemoryRecordsBuilder builder = new MemoryRecordsBuilder(out, RecordBatch.MAGIC_VALUE_V2,
        Compression.of(kb.compressionType()).build(), kb.timestampType(), kb.baseOffset(), logAppendTime, kb.producerId(),
        kb.producerEpoch(), kb.baseSequence(), kb.isTransactional(), kb.isControlBatch(), kb.partitionLeaderEpoch(),
        Integer.MAX_VALUE, deleteHorizonMs);
    for (Record r : retained) {
      if (kb.isControlBatch()) {
        builder.appendControlRecordWithOffset(r.offset(), new SimpleRecord(r.timestamp(), r.key(), r.value(), r.headers()));
      } else {
        builder.appendWithOffset(r.offset(), r.timestamp(), r.key(), r.value(), r.headers());
      }
    }
    builder.overrideLastOffset(kb.lastOffset());
    MemoryRecords built = builder.build();
    ByteBuffer result = ByteBuffer.allocate(built.sizeInBytes());
    result.put(built.buffer().duplicate()).flip();
    return result;
  }

  /** Consecutive batches left without records, written as one empty batch spanning them. */
  private static final class Gap {
    long start = -1;
    long end;
    int leaderEpoch;
    long maxTimestamp;

    void extend(StreamBatch b, MutableRecordBatch kb) {
      if (start < 0) {
        start = b.baseOffset();
      }
      end = b.nextOffset();
      leaderEpoch = kb.partitionLeaderEpoch();
      maxTimestamp = Math.max(maxTimestamp, kb.maxTimestamp());
    }

    void flushInto(List<StreamBatch> out) {
      if (start < 0) {
        return;
      }
      for (long from = start; from < end; ) {
        int span = (int) Math.min(end - from, Integer.MAX_VALUE);
        ByteBuffer header = ByteBuffer.allocate(DefaultRecordBatch.RECORD_BATCH_OVERHEAD);
        DefaultRecordBatch.writeEmptyHeader(header, RecordBatch.MAGIC_VALUE_V2, RecordBatch.NO_PRODUCER_ID,
            RecordBatch.NO_PRODUCER_EPOCH, RecordBatch.NO_SEQUENCE, from, from + span - 1, leaderEpoch,
            TimestampType.CREATE_TIME, maxTimestamp, false, false);
        header.position(0).limit(DefaultRecordBatch.RECORD_BATCH_OVERHEAD);
        out.add(new StreamBatch(from, span, header));
        from += span;
      }
      start = -1;
      maxTimestamp = 0;
    }
  }
}
