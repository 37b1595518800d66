package io.tidemark.table.control;

import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.record.KeyValue;
import io.tidemark.broker.record.RecordBatches;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control log over the {@value ControlLog#TOPIC} partition this broker leads: appends and reads
 * go straight to the partition log. Thread-safe as {@link PartitionLog} is.
 */
final class PartitionControlLog implements ControlLog {

  private static final Logger log = LoggerFactory.getLogger(PartitionControlLog.class);

  private final PartitionLog partition;
  private final LongSupplier clockMs;
  private final int maxReadBytes;

  PartitionControlLog(PartitionLog partition, LongSupplier clockMs, int maxReadBytes) {
    this.partition = partition;
    this.clockMs = clockMs;
    this.maxReadBytes = maxReadBytes;
  }

  @Override
  public CompletableFuture<Long> append(ControlMessage message) {
    byte[][] kv = {ControlCodec.key(message), ControlCodec.encode(message)};
    return partition.append(RecordBatches.internalBatch(clockMs.getAsLong(), Collections.singletonList(kv)))
        .thenApply(r -> r.baseOffset());
  }

  @Override
  public long startOffset() {
    return partition.logStartOffset();
  }

  @Override
  public long endOffset() {
    return partition.highWatermark();
  }

  @Override
  public CompletableFuture<Page> read(long offset) {
    long from = Math.max(offset, partition.logStartOffset());
    if (from >= partition.highWatermark()) {
      return CompletableFuture.completedFuture(new Page(List.of(), from));
    }
    return partition.readRecords(from, maxReadBytes).thenApply(page -> {
      List<Entry> entries = new ArrayList<>();
      for (KeyValue kv : page.records()) {
        if (kv.value() != null) {
          decodeInto(kv.offset(), kv.value(), entries);
        }
      }
      return new Page(entries, page.nextOffset()); // past a damaged range too
    });
  }

  @Override
  public CompletableFuture<Long> trimBefore(long offset) {
    return partition.deleteRecordsBefore(offset);
  }

  /** Adds the message at {@code offset} to {@code entries}, or logs and skips a record that is not one. */
  static void decodeInto(long offset, byte[] value, List<Entry> entries) {
    try {
      entries.add(new Entry(offset, ControlCodec.decode(value)));
    } catch (RuntimeException e) { // bad bytes in the control topic must not stop the table topics
      log.warn("{} offset {}: skipping a record that is not a control message: {}", TOPIC, offset, e.getMessage());
    }
  }
}
