package io.tidemark.broker.record;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.UnsupportedCompressionTypeException;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.BaseRecords;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.utils.internals.BufferSupplier;
import org.apache.kafka.common.utils.internals.CloseableIterator;

/**
 * The only door to Kafka's record classes ({@code org.apache.kafka.common.record.internal}, a
 * non-public package that moved in 4.3): validation of produced batches, in-place offset
 * assignment, header reads of stored batches, and building record sets for responses and
 * internal topics. Stateless; every method is safe from any thread.
 */
public final class RecordBatches {

  private RecordBatches() {}

  /**
   * Checks a produced partition's records: exactly one magic-2 batch, intact CRC, dense offset
   * deltas matching the record count, no control batch, size within {@code maxMessageBytes}.
   * Compressed batches are decompressed to check their records (the codecs come with
   * kafka-clients). Throws {@link BatchRejectedException}; never changes the bytes.
   */
  public static ProducedBatch validateProduced(BaseRecords records, short produceVersion, int maxMessageBytes) {
    return validateProduced(records, produceVersion, maxMessageBytes, false);
  }

  /**
   * As {@link #validateProduced(BaseRecords, short, int)}; with {@code requireKeys} (a compacted
   * topic) a record without a key is refused as INVALID_RECORD, as Kafka refuses it.
   */
  public static ProducedBatch validateProduced(BaseRecords records, short produceVersion, int maxMessageBytes,
      boolean requireKeys) {
    return validateProduced(records, produceVersion, maxMessageBytes, requireKeys, Integer.MAX_VALUE - 8);
  }

  /**
   * As {@link #validateProduced(BaseRecords, short, int, boolean)}, refusing as INVALID_RECORD any record
   * whose decompressed size passes {@code maxDecompressedRecordBytes} ({@code max.decompressed.message.bytes}),
   * found from the record's length prefix before its bytes are allocated, as Kafka does: the bound on
   * what a small compressed batch may make the broker allocate.
   */
  public static ProducedBatch validateProduced(BaseRecords records, short produceVersion, int maxMessageBytes,
      boolean requireKeys, int maxDecompressedRecordBytes) {
    if (!(records instanceof MemoryRecords memory)) {
      throw new BatchRejectedException(BatchRejectedException.Reason.INVALID, "produce request without in-memory records");
    }
    try {
      ProduceRequest.validateRecords(produceVersion, memory);
    } catch (UnsupportedCompressionTypeException e) {
      throw new BatchRejectedException(BatchRejectedException.Reason.UNSUPPORTED_COMPRESSION, e.getMessage());
    } catch (InvalidRecordException e) {
      throw new BatchRejectedException(BatchRejectedException.Reason.INVALID, e.getMessage());
    } catch (CorruptRecordException e) {
      throw new BatchRejectedException(BatchRejectedException.Reason.CORRUPT, e.getMessage());
    } catch (RuntimeException e) {
      throw new BatchRejectedException(BatchRejectedException.Reason.CORRUPT, "unreadable record batch: " + e.getMessage(), e);
    }
    ByteBuffer buffer = memory.buffer();
    if (buffer.remaining() < DefaultRecordBatch.RECORD_BATCH_OVERHEAD) {
      throw new BatchRejectedException(BatchRejectedException.Reason.CORRUPT, "record batch shorter than its header: " + buffer.remaining() + " bytes");
    }
    MutableRecordBatch batch;
    try {
      Iterator<MutableRecordBatch> it = memory.batches().iterator();
      batch = it.next();
      if (it.hasNext()) {
        throw new BatchRejectedException(BatchRejectedException.Reason.INVALID, "more than one record batch per partition");
      }
      if (batch.sizeInBytes() != buffer.remaining()) {
        throw new BatchRejectedException(BatchRejectedException.Reason.CORRUPT,
            "batch length " + batch.sizeInBytes() + " does not match the " + buffer.remaining() + " bytes sent");
      }
      batch.ensureValid();
    } catch (BatchRejectedException e) {
      throw e;
    } catch (CorruptRecordException e) {
      throw new BatchRejectedException(BatchRejectedException.Reason.CORRUPT, e.getMessage());
    } catch (RuntimeException e) {
      throw new BatchRejectedException(BatchRejectedException.Reason.CORRUPT, "unreadable record batch: " + e, e);
    }
    if (batch.sizeInBytes() > maxMessageBytes) {
      throw new BatchRejectedException(BatchRejectedException.Reason.TOO_LARGE,
          "record batch of " + batch.sizeInBytes() + " bytes is larger than max.message.bytes=" + maxMessageBytes);
    }
    if (batch.magic() != RecordBatch.MAGIC_VALUE_V2) {
      throw new BatchRejectedException(BatchRejectedException.Reason.INVALID, "record batch magic " + batch.magic() + " is not 2");
    }
    if (batch.isControlBatch()) {
      throw new BatchRejectedException(BatchRejectedException.Reason.INVALID, "clients may not produce control batches");
    }
    int declared = batch.countOrNull() == null ? -1 : batch.countOrNull();
    long lastDelta = batch.lastOffset() - batch.baseOffset();
    if (declared <= 0 || lastDelta != declared - 1) {
      throw new BatchRejectedException(BatchRejectedException.Reason.INVALID,
          "record count " + declared + " does not match last offset delta " + lastDelta);
    }
    checkRecords(batch, declared, requireKeys, maxDecompressedRecordBytes);
    return new ProducedBatch(buffer.slice(), declared, batch.producerId(), batch.producerEpoch(), batch.baseSequence(),
        batch.lastSequence(), batch.isTransactional(), batch.maxTimestamp(), batch.compressionType().name);
  }

  private static void checkRecords(MutableRecordBatch batch, int declared, boolean requireKeys, int maxDecompressedRecordBytes) {
    int seen = 0;
    long expected = batch.baseOffset();
    try (CloseableIterator<Record> it = batch.streamingIterator(BufferSupplier.NO_CACHING, maxDecompressedRecordBytes)) {
      while (it.hasNext()) {
        Record record = it.next();
        record.ensureValid();
        if (record.offset() != expected) {
          throw new BatchRejectedException(BatchRejectedException.Reason.INVALID,
              "record offset delta " + (record.offset() - batch.baseOffset()) + " where " + (expected - batch.baseOffset()) + " was expected");
        }
        if (requireKeys && !record.hasKey()) {
          throw new BatchRejectedException(BatchRejectedException.Reason.INVALID,
              "Compacted topic cannot accept message without key (record offset delta " + (record.offset() - batch.baseOffset())
                  + ")");
        }
        expected++;
        seen++;
        if (seen > declared) {
          break;
        }
      }
    } catch (BatchRejectedException e) {
      throw e;
    } catch (InvalidRecordException e) {
      throw new BatchRejectedException(BatchRejectedException.Reason.INVALID, e.getMessage()); // max.decompressed.message.bytes
    } catch (RuntimeException e) {
      throw new BatchRejectedException(BatchRejectedException.Reason.CORRUPT, "records inside the batch cannot be read: " + e.getMessage(), e);
    }
    if (seen != declared) {
      throw new BatchRejectedException(BatchRejectedException.Reason.INVALID, "batch declares " + declared + " records but holds " + seen);
    }
  }

  /**
   * Writes the partition's values into a validated batch, in place: base offset and leader epoch
   * (outside the CRC), and for LogAppendTime topics ({@code logAppendTimeMs >= 0}) the timestamp
   * type and max timestamp (which rewrites the CRC).
   */
  public static void assignOffsets(ByteBuffer batchBuffer, long baseOffset, int leaderEpoch, long logAppendTimeMs) {
    MutableRecordBatch batch = batchOf(batchBuffer);
    batch.setLastOffset(baseOffset + (batch.lastOffset() - batch.baseOffset()));
    batch.setPartitionLeaderEpoch(leaderEpoch);
    if (logAppendTimeMs >= 0) {
      batch.setMaxTimestamp(TimestampType.LOG_APPEND_TIME, logAppendTimeMs);
    }
  }

  private static MutableRecordBatch batchOf(ByteBuffer buffer) {
    Iterator<MutableRecordBatch> it = MemoryRecords.readableRecords(buffer.duplicate()).batches().iterator();
    if (!it.hasNext()) {
      throw new IllegalArgumentException("no complete record batch in " + buffer.remaining() + " bytes");
    }
    return it.next();
  }

  /**
   * Why {@code stored} cannot be served as the partition's batch at
   * {@code [baseOffset, baseOffset + recordCount)}, or null when it can: it must be exactly one
   * magic-2 batch with that base offset and record count, and with {@code checkCrc} an intact CRC
   * (header and records). Reads the header only unless {@code checkCrc}; never throws.
   */
  public static String storedBatchProblem(ByteBuffer stored, long baseOffset, int recordCount, boolean checkCrc) {
    int size = stored.remaining();
    if (size < DefaultRecordBatch.RECORD_BATCH_OVERHEAD) {
      return size + " bytes, shorter than a record batch header";
    }
    try {
      Iterator<MutableRecordBatch> it = MemoryRecords.readableRecords(stored.duplicate()).batches().iterator();
      if (!it.hasNext()) {
        return "no complete record batch in " + size + " bytes";
      }
      MutableRecordBatch b = it.next();
      if (b.sizeInBytes() != size) {
        return "batch length " + b.sizeInBytes() + " where " + size + " bytes are stored";
      }
      if (b.magic() != RecordBatch.MAGIC_VALUE_V2) {
        return "magic " + b.magic() + " is not 2";
      }
      if (b.baseOffset() != baseOffset || b.lastOffset() - b.baseOffset() + 1 != recordCount) {
        return "batch covers offsets " + b.baseOffset() + ".." + b.lastOffset() + " where the stream holds "
            + baseOffset + ".." + (baseOffset + recordCount - 1);
      }
      if (checkCrc && !b.isValid()) {
        return "CRC mismatch";
      }
      return null;
    } catch (RuntimeException e) {
      return "unreadable record batch: " + e.getMessage();
    }
  }

  /** Header of a stored batch (no CRC check, no decompression). */
  public static StoredBatch header(ByteBuffer stored) {
    MutableRecordBatch b = batchOf(stored);
    int count = b.countOrNull() == null ? (int) (b.lastOffset() - b.baseOffset() + 1) : b.countOrNull();
    return new StoredBatch(b.baseOffset(), b.lastOffset(), count, b.producerId(), b.producerEpoch(), b.baseSequence(),
        b.lastSequence(), b.maxTimestamp(), b.partitionLeaderEpoch(), b.isControlBatch(), b.isTransactional());
  }

  /**
   * Offset of the first record in {@code stored} whose timestamp is at least {@code timestampMs},
   * with that timestamp, or null when none is.
   */
  public static long[] firstAtOrAfter(ByteBuffer stored, long timestampMs) {
    MutableRecordBatch b = batchOf(stored);
    if (b.maxTimestamp() < timestampMs) {
      return null;
    }
    if (b.timestampType() == TimestampType.LOG_APPEND_TIME) {
      return new long[] {b.baseOffset(), b.maxTimestamp()};
    }
    try (CloseableIterator<Record> it = b.streamingIterator(BufferSupplier.NO_CACHING)) {
      while (it.hasNext()) {
        Record r = it.next();
        if (r.timestamp() >= timestampMs) {
          return new long[] {r.offset(), r.timestamp()};
        }
      }
    }
    return null;
  }

  /** Offset of the record carrying {@code maxTimestamp} in {@code stored}, or its last offset. */
  public static long offsetOfTimestamp(ByteBuffer stored, long maxTimestamp) {
    MutableRecordBatch b = batchOf(stored);
    if (b.timestampType() == TimestampType.LOG_APPEND_TIME) {
      return b.baseOffset();
    }
    try (CloseableIterator<Record> it = b.streamingIterator(BufferSupplier.NO_CACHING)) {
      while (it.hasNext()) {
        Record r = it.next();
        if (r.timestamp() == maxTimestamp) {
          return r.offset();
        }
      }
    }
    return b.lastOffset();
  }

  /** Records for a Fetch response: the given whole batches back to back. */
  public static BaseRecords concat(List<ByteBuffer> batches) {
    if (batches.isEmpty()) {
      return MemoryRecords.EMPTY;
    }
    if (batches.size() == 1) {
      return MemoryRecords.readableRecords(batches.get(0).duplicate());
    }
    int size = 0;
    for (ByteBuffer b : batches) {
      size += b.remaining();
    }
    ByteBuffer all = ByteBuffer.allocate(size);
    for (ByteBuffer b : batches) {
      all.put(b.duplicate());
    }
    all.flip();
    return MemoryRecords.readableRecords(all);
  }

  public static BaseRecords empty() {
    return MemoryRecords.EMPTY;
  }

  /** Bytes of a record set (for byte accounting). */
  public static int sizeInBytes(BaseRecords records) {
    return records == null ? 0 : records.sizeInBytes();
  }

  /** One uncompressed batch of key/value records (base offset 0) for an internal topic. */
  public static ByteBuffer keyValueBatch(long timestampMs, List<byte[][]> keyValues) {
    SimpleRecord[] records = new SimpleRecord[keyValues.size()];
    for (int i = 0; i < records.length; i++) {
      records[i] = new SimpleRecord(timestampMs, keyValues.get(i)[0], keyValues.get(i)[1]);
    }
    return MemoryRecords.withRecords(Compression.NONE, records).buffer();
  }

  /** A batch for an internal topic, ready for {@code PartitionLog.append}. */
  public static ProducedBatch internalBatch(long timestampMs, List<byte[][]> keyValues) {
    ByteBuffer buffer = keyValueBatch(timestampMs, keyValues);
    return new ProducedBatch(buffer, keyValues.size(), -1, (short) -1, -1, -1, false, timestampMs, "none");
  }

  /** Number of records in a batch built by {@link #keyValueBatch}. */
  public static int recordCount(ByteBuffer batch) {
    return header(batch).recordCount();
  }

  /** The key/value records of every whole batch in {@code stored}, with their offsets. */
  public static List<KeyValue> keyValues(ByteBuffer stored) {
    return keyValues(stored, false);
  }

  /**
   * The key/value records of every whole batch in {@code stored}; with {@code withMarkers}, records
   * of transactional batches carry their producer id and end-transaction markers are included
   * ({@link KeyValue#marker()}).
   */
  public static List<KeyValue> keyValues(ByteBuffer stored, boolean withMarkers) {
    List<KeyValue> out = new ArrayList<>();
    for (MutableRecordBatch batch : MemoryRecords.readableRecords(stored.duplicate()).batches()) {
      if (batch.isControlBatch()) {
        Boolean commit = withMarkers ? markerCommits(batch) : null;
        if (commit != null) {
          out.add(new KeyValue(batch.baseOffset(), null, null, batch.producerId(), commit));
        }
        continue;
      }
      long txnProducer = withMarkers && batch.isTransactional() ? batch.producerId() : -1;
      try (CloseableIterator<Record> it = batch.streamingIterator(BufferSupplier.NO_CACHING)) {
        while (it.hasNext()) {
          Record r = it.next();
          out.add(new KeyValue(r.offset(), bytes(r.key()), r.hasValue() ? bytes(r.value()) : null, txnProducer, null));
        }
      }
    }
    return out;
  }

  /** For a control batch: true for a COMMIT marker, false for ABORT, null for any other control record. */
  private static Boolean markerCommits(RecordBatch batch) {
    try (CloseableIterator<Record> it = batch.streamingIterator(BufferSupplier.NO_CACHING)) {
      if (!it.hasNext()) {
        return null;
      }
      ControlRecordType type = ControlRecordType.parse(it.next().key());
      return type == ControlRecordType.COMMIT ? Boolean.TRUE : type == ControlRecordType.ABORT ? Boolean.FALSE : null;
    }
  }

  /** An end-transaction marker as stored: COMMIT or ABORT, and the coordinator epoch that wrote it. */
  public record Marker(boolean commit, int coordinatorEpoch) {}

  /** The end-transaction marker in a stored control batch, or null when it holds another control record. */
  public static Marker marker(ByteBuffer stored) {
    MutableRecordBatch batch = batchOf(stored);
    try (CloseableIterator<Record> it = batch.streamingIterator(BufferSupplier.NO_CACHING)) {
      if (!it.hasNext()) {
        return null;
      }
      Record r = it.next();
      ControlRecordType type = ControlRecordType.parse(r.key());
      if (type != ControlRecordType.COMMIT && type != ControlRecordType.ABORT) {
        return null;
      }
      return new Marker(type == ControlRecordType.COMMIT, EndTransactionMarker.deserialize(r).coordinatorEpoch());
    }
  }

  /**
   * An end-transaction marker batch (one control record) for {@code producerId} at
   * {@code producerEpoch}, base offset 0 until the partition assigns it.
   */
  public static ByteBuffer endTxnMarker(long producerId, short producerEpoch, int coordinatorEpoch, boolean commit, long timestampMs) {
    return MemoryRecords.withEndTransactionMarker(0L, timestampMs, RecordBatch.NO_PARTITION_LEADER_EPOCH, producerId, producerEpoch,
        new EndTransactionMarker(commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT, coordinatorEpoch)).buffer();
  }

  /** A transactional batch for an internal topic (the group coordinator's TxnOffsetCommit records). */
  public static ProducedBatch transactionalInternalBatch(long timestampMs, long producerId, short producerEpoch,
      List<byte[][]> keyValues) {
    SimpleRecord[] records = new SimpleRecord[keyValues.size()];
    for (int i = 0; i < records.length; i++) {
      records[i] = new SimpleRecord(timestampMs, keyValues.get(i)[0], keyValues.get(i)[1]);
    }
    // the batch format wants a sequence; the partition knows this write by the missing sequence of the ProducedBatch
    ByteBuffer buffer = MemoryRecords.withTransactionalRecords(Compression.NONE, producerId, producerEpoch, 0, records).buffer();
    return new ProducedBatch(buffer, records.length, producerId, producerEpoch, RecordBatch.NO_SEQUENCE, RecordBatch.NO_SEQUENCE,
        true, timestampMs, "none");
  }

  private static byte[] bytes(ByteBuffer b) {
    if (b == null) {
      return null;
    }
    byte[] out = new byte[b.remaining()];
    b.duplicate().get(out);
    return out;
  }
}
