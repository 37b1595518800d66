package io.tidemark.table.sync;

import io.tidemark.table.convert.KafkaColumns;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.types.Types;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.internal.Record;

/**
 * Rows of the dead-letter table {@code <table>_dlq}: the Kafka columns with key and value kept as
 * raw bytes, plus the reason the record was skipped. Stateless.
 */
final class DeadLetterRows {

  static final String ERROR = "_error";

  static final Schema SCHEMA = new Schema(
      Types.NestedField.required(1, KafkaColumns.PARTITION, Types.IntegerType.get()),
      Types.NestedField.required(2, KafkaColumns.OFFSET, Types.LongType.get()),
      Types.NestedField.required(3, KafkaColumns.TIMESTAMP, Types.TimestampType.withZone()),
      Types.NestedField.optional(4, KafkaColumns.KEY, Types.BinaryType.get()),
      Types.NestedField.optional(5, KafkaColumns.VALUE, Types.BinaryType.get()),
      Types.NestedField.optional(6, KafkaColumns.HEADERS,
          Types.MapType.ofOptional(8, 9, Types.StringType.get(), Types.BinaryType.get())),
      Types.NestedField.required(7, ERROR, Types.StringType.get()));

  private DeadLetterRows() {}

  /** The dead-letter row of {@code record}, bound to {@code schema} (the DLQ table's current schema, {@link #SCHEMA} or later). */
  static GenericRecord row(Schema schema, int partition, Record record, String reason) {
    GenericRecord row = GenericRecord.create(schema);
    row.setField(KafkaColumns.PARTITION, partition);
    row.setField(KafkaColumns.OFFSET, record.offset());
    row.setField(KafkaColumns.TIMESTAMP, OffsetDateTime.ofInstant(Instant.ofEpochMilli(record.timestamp()), ZoneOffset.UTC));
    row.setField(KafkaColumns.KEY, copy(record.key()));
    row.setField(KafkaColumns.VALUE, copy(record.value()));
    Map<String, ByteBuffer> headers = new LinkedHashMap<>();
    for (Header h : record.headers()) {
      headers.put(h.key(), h.value() == null ? null : ByteBuffer.wrap(h.value()));
    }
    row.setField(KafkaColumns.HEADERS, headers);
    row.setField(ERROR, reason);
    return row;
  }

  private static ByteBuffer copy(ByteBuffer b) {
    if (b == null) {
      return null;
    }
    ByteBuffer out = ByteBuffer.allocate(b.remaining());
    out.put(b.duplicate()).flip();
    return out;
  }
}
