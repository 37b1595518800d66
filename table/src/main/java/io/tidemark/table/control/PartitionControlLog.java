package io.tidemark.table.control;

import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.record.KeyValue;
import io.tidemark.broker.record.RecordBatches;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control topic ({@value #TOPIC}, partition 0) of the table topics: every table topic's
 * coordinator and workers append {@link ControlMessage}s to it and read them back in order. An
 * append completes once the record is durable in the partition log (the coordinator's intent is
 * recorded before it acts on it). Thread-safe as {@link PartitionLog} is.
 */
public final class ControlLog {

  public static final String TOPIC = "__table_control";
  private static final Logger log = LoggerFactory.getLogger(ControlLog.class);

  /** A message and its offset in the control topic. */
  public record Entry(long offset, ControlMessage message) {}

  /** The messages read and the offset to read from next. */
  public record Page(List<Entry> entries, long nextOffset) {}

  private final PartitionLog partition;
  private final LongSupplier clockMs;
  private final int maxReadBytes;

  public ControlLog(PartitionLog partition, LongSupplier clockMs, int maxReadBytes) {
    this.partition = partition;
    this.clockMs = clockMs;
    this.maxReadBytes = maxReadBytes;
  }

  /** Appends one message; completes with its offset once durable. */
  public CompletableFuture<Long> append(ControlMessage message) {
    byte[][] kv = {ControlCodec.key(message), ControlCodec.encode(message)};
    return partition.append(RecordBatches.internalBatch(clockMs.getAsLong(), Collections.singletonList(kv)))
        .thenApply(r -> r.baseOffset());
  }

  public long startOffset() {
    return partition.logStartOffset();
  }

  public long endOffset() {
    return partition.highWatermark();
  }

  /** Messages from {@code offset} (or the log start, if later) up to about the read size; undecodable records are skipped. */
  public CompletableFuture<Page> read(long offset) {
    long from = Math.max(offset, partition.logStartOffset());
    if (from >= partition.highWatermark()) {
      return CompletableFuture.completedFuture(new Page(List.of(), from));
    }
    return partition.read(from, maxReadBytes).thenApply(result -> {
      List<Entry> entries = new ArrayList<>();
      long next = from;
      for (ByteBuffer batch : result.batches()) {
        for (KeyValue kv : RecordBatches.keyValues(batch)) {
          if (kv.offset() >= from && kv.value() != null) {
            decodeInto(kv, entries);
          }
        }
        next = Math.max(next, RecordBatches.header(batch).lastOffset() + 1);
      }
      return new Page(entries, next);
    });
  }

  /** Trims records below {@code offset} (none of them is needed any more). */
  public CompletableFuture<Long> trimBefore(long offset) {
    return partition.deleteRecordsBefore(offset);
  }

  private static void decodeInto(KeyValue kv, List<Entry> entries) {
    try {
      entries.add(new Entry(kv.offset(), ControlCodec.decode(kv.value())));
    } catch (IllegalArgumentException e) {
      log.warn("{} offset {}: skipping a record that is not a control message: {}", TOPIC, kv.offset(), e.getMessage());
    }
  }
}
