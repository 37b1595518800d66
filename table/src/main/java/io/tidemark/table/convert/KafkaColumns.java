package io.tidemark.table.convert;

import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The Kafka system columns every table-topic row carries, and the starting schema of a table.
 * Column names start with {@code _kafka_}; value fields may not use that prefix. Stateless.
 */
public final class KafkaColumns {

  public static final String PREFIX = "_kafka_";
  public static final String KEY = "_kafka_key";
  public static final String VALUE = "_kafka_value";
  public static final String HEADERS = "_kafka_headers";
  public static final String TIMESTAMP = "_kafka_timestamp";
  public static final String PARTITION = "_kafka_partition";
  public static final String OFFSET = "_kafka_offset";

  private KafkaColumns() {}

  /**
   * The schema a new table starts with: the system columns, {@code _kafka_key} of {@code keyType}
   * (null when the key's type comes from its schema: the column is added with the first key), and
   * {@code _kafka_value} of {@code valueType} when the value is kept whole (null when value fields
   * become columns).
   */
  public static Schema initialSchema(Type keyType, Type valueType) {
    List<Types.NestedField> fields = new ArrayList<>();
    int id = 1;
    fields.add(Types.NestedField.required(id++, PARTITION, Types.IntegerType.get()));
    fields.add(Types.NestedField.required(id++, OFFSET, Types.LongType.get()));
    fields.add(Types.NestedField.required(id++, TIMESTAMP, Types.TimestampType.withZone()));
    if (keyType != null) {
      fields.add(Types.NestedField.optional(id, KEY, keyType));
    }
    id++;
    int keyId = id++;
    int valueId = id++;
    fields.add(Types.NestedField.optional(id++, HEADERS,
        Types.MapType.ofOptional(keyId, valueId, Types.StringType.get(), Types.BinaryType.get())));
    if (valueType != null) {
      fields.add(Types.NestedField.optional(id, VALUE, valueType));
    }
    return new Schema(fields);
  }
}
