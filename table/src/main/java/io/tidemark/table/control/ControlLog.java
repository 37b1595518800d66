package io.tidemark.table.control;

import io.tidemark.broker.partition.PartitionLog;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * The control topic ({@value #TOPIC}, partition 0) of the table topics: every table topic's
 * coordinator and workers append {@link ControlMessage}s to it and read them back in order. An
 * append completes once the record is durable (the coordinator's intent is recorded before it acts
 * on it). The broker leading the partition reads and writes its log directly
 * ({@link #local}); every other broker goes through the Kafka protocol ({@link KafkaControlLog}).
 */
public interface ControlLog {

  String TOPIC = "__table_control";

  /** A message and its offset in the control topic. */
  record Entry(long offset, ControlMessage message) {}

  /** The messages read and the offset to read from next. */
  record Page(List<Entry> entries, long nextOffset) {}

  /** The control log over the partition led by this broker. */
  static ControlLog local(PartitionLog partition, LongSupplier clockMs, int maxReadBytes) {
    return new PartitionControlLog(partition, clockMs, maxReadBytes);
  }

  /** Appends one message; completes with its offset once durable. */
  CompletableFuture<Long> append(ControlMessage message);

  long startOffset();

  long endOffset();

  /**
   * Messages from {@code offset} (or the log start, if later) up to about the read size;
   * undecodable records are skipped. A page without entries whose next offset is {@code offset}
   * means nothing more is there yet.
   */
  CompletableFuture<Page> read(long offset);

  /** Trims records below {@code offset} (none of them is needed any more). */
  CompletableFuture<Long> trimBefore(long offset);
}
