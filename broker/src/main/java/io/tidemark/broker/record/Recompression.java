package io.tidemark.broker.record;

import java.nio.ByteBuffer;
import java.util.Iterator;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.internals.BufferSupplier;
import org.apache.kafka.common.utils.internals.ByteBufferOutputStream;
import org.apache.kafka.common.utils.internals.CloseableIterator;

/**
 * Rewrites a produced batch into the topic's codec, as Kafka's broker does when a topic's
 * {@code compression.type} is not {@code producer} and differs from the batch's codec. The new
 * batch keeps what the partition and the producer rely on: the record count and offset deltas
 * (offsets are still assigned later, by the partition), every record's timestamp, key, value and
 * headers, the batch's timestamp type, producer id, epoch, base sequence and transactional flag;
 * so idempotent retries and LogAppendTime work unchanged. A batch already in the topic's codec is
 * returned as is (whatever level its producer used, KIP-390).
 *
 * <p>Memory is bounded: records are decompressed one at a time (streaming), and the rewrite stops
 * with {@link BatchRejectedException.Reason#TOO_LARGE} as soon as the codec has written more than
 * {@code max.message.bytes} (Kafka checks the recompressed size against the same limit), so the
 * output buffer never holds more than that limit plus one codec block. Stateless.
 */
public final class Recompression {

  private static final int INITIAL_BUFFER_BYTES = 16 * 1024;

  private Recompression() {}

  /** The produced batch in {@code target}'s codec; {@code batch} itself when no rewrite is needed. */
  public static ProducedBatch toTopicCodec(ProducedBatch batch, TopicCompression target, int maxMessageBytes) {
    if (target.keepsProducerCodec() || target.codecName().equals(batch.compression())) {
      return batch;
    }
    MutableRecordBatch source = single(batch.buffer());
    Compression codec = compression(target);
    int initial = Math.min(Math.max(batch.sizeBytes(), INITIAL_BUFFER_BYTES), maxMessageBytes);
    MemoryRecordsBuilder builder = new MemoryRecordsBuilder(new ByteBufferOutputStream(initial), RecordBatch.MAGIC_VALUE_V2, codec,
        source.timestampType(), source.baseOffset(), RecordBatch.NO_TIMESTAMP, source.producerId(), source.producerEpoch(),
        source.baseSequence(), source.isTransactional(), false, source.partitionLeaderEpoch(), maxMessageBytes);
    try (CloseableIterator<Record> records = source.streamingIterator(BufferSupplier.NO_CACHING)) {
      while (records.hasNext()) {
        Record r = records.next();
        builder.appendWithOffset(r.offset(), r.timestamp(), r.key(), r.value(), r.headers());
        int written = builder.bufferStream().position(); // what the codec has emitted, not an estimate
        if (written > maxMessageBytes) {
          throw tooLarge(batch, target, written, maxMessageBytes);
        }
      }
    }
    MemoryRecords rewritten = builder.build();
    if (rewritten.sizeInBytes() > maxMessageBytes) {
      throw tooLarge(batch, target, rewritten.sizeInBytes(), maxMessageBytes);
    }
    ByteBuffer out = rewritten.buffer();
    return new ProducedBatch(out, batch.recordCount(), batch.producerId(), batch.producerEpoch(), batch.baseSequence(),
        batch.lastSequence(), batch.transactional(), batch.maxTimestamp(), target.codecName());
  }

  /**
   * Checks a {@code compression.<codec>.level} value with Kafka's own rule for that codec; returns
   * null when valid, or the reason.
   */
  public static String checkLevel(String codec, String value) {
    int level;
    try {
      level = Integer.parseInt(value.trim());
    } catch (NumberFormatException e) {
      return "is not a whole number";
    }
    try {
      CompressionType.forName(codec).levelValidator().ensureValid("compression." + codec + ".level", level);
      return null;
    } catch (ConfigException e) {
      return e.getMessage();
    }
  }

  /** Kafka's default level of {@code codec} (gzip, lz4 or zstd). */
  public static int defaultLevel(String codec) {
    return CompressionType.forName(codec).defaultLevel();
  }

  private static Compression compression(TopicCompression target) {
    return switch (target.type()) {
      case "uncompressed" -> Compression.NONE;
      case "gzip" -> Compression.gzip().level(target.level()).build();
      case "snappy" -> Compression.snappy().build();
      case "lz4" -> Compression.lz4().level(target.level()).build();
      case "zstd" -> Compression.zstd().level(target.level()).build();
      default -> throw new IllegalArgumentException("no codec for compression.type " + target.type());
    };
  }

  private static MutableRecordBatch single(ByteBuffer buffer) {
    Iterator<MutableRecordBatch> it = MemoryRecords.readableRecords(buffer.duplicate()).batches().iterator();
    if (!it.hasNext()) {
      throw new BatchRejectedException(BatchRejectedException.Reason.CORRUPT, "no complete record batch to recompress");
    }
    return it.next();
  }

  private static BatchRejectedException tooLarge(ProducedBatch batch, TopicCompression target, int size, int max) {
    return new BatchRejectedException(BatchRejectedException.Reason.TOO_LARGE, "record batch recompressed from "
        + batch.compression() + " to " + target.type() + " is " + size + " bytes or more, larger than max.message.bytes=" + max);
  }
}
