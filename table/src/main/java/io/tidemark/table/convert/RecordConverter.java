package io.tidemark.table.convert;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeType;
import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.config.TableTopicConfig.ConvertType;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.internal.Record;

/**
 * Turns one Kafka record into column values: the Kafka system columns, the key as
 * {@code _kafka_key}, and the value either whole as {@code _kafka_value} ({@code raw}: binary,
 * {@code string}: UTF-8 text) or, for schemaless {@code json}, each top-level field of a JSON
 * object as its own column with the type inferred from the data (boolean, int, long, double,
 * string; nested objects and arrays are kept as their JSON text). Stateless and thread-safe.
 */
public final class RecordConverter {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final ConvertType keyType;
  private final ConvertType valueType;

  public RecordConverter(TableTopicConfig config) {
    this.keyType = config.keyConvert();
    this.valueType = config.valueConvert();
    if (keyType != ConvertType.RAW && keyType != ConvertType.STRING) {
      throw new IllegalArgumentException(TableTopicConfig.CONVERT_KEY_TYPE + "=" + name(keyType)
          + " is not supported yet; use raw or string");
    }
    if (valueType != ConvertType.RAW && valueType != ConvertType.STRING && valueType != ConvertType.JSON) {
      throw new IllegalArgumentException(TableTopicConfig.CONVERT_VALUE_TYPE + "=" + name(valueType)
          + " is not supported yet; use raw, string or json");
    }
  }

  private static String name(ConvertType t) {
    return t.name().toLowerCase(java.util.Locale.ROOT);
  }

  /** The schema a new table of this converter starts with. */
  public Schema initialSchema() {
    return KafkaColumns.initialSchema(wholeType(keyType), valueType == ConvertType.JSON ? null : wholeType(valueType));
  }

  private static Type wholeType(ConvertType type) {
    return type == ConvertType.RAW ? Types.BinaryType.get() : Types.StringType.get();
  }

  /** Every column value of {@code record}, read from partition {@code partition}. */
  public Map<String, FieldValue> convert(int partition, Record record) throws InvalidRecordException {
    Map<String, FieldValue> row = new LinkedHashMap<>();
    row.put(KafkaColumns.PARTITION, new FieldValue(Types.IntegerType.get(), partition));
    row.put(KafkaColumns.OFFSET, new FieldValue(Types.LongType.get(), record.offset()));
    row.put(KafkaColumns.TIMESTAMP, new FieldValue(Types.TimestampType.withZone(),
        OffsetDateTime.ofInstant(Instant.ofEpochMilli(record.timestamp()), ZoneOffset.UTC)));
    row.put(KafkaColumns.KEY, new FieldValue(wholeType(keyType), whole(keyType, record.key(), "key")));
    Map<String, ByteBuffer> headers = new LinkedHashMap<>();
    for (Header h : record.headers()) {
      headers.put(h.key(), h.value() == null ? null : ByteBuffer.wrap(h.value()));
    }
    row.put(KafkaColumns.HEADERS, new FieldValue(
        Types.MapType.ofOptional(0, 0, Types.StringType.get(), Types.BinaryType.get()), headers));
    if (valueType == ConvertType.JSON) {
      jsonColumns(record.value(), row);
    } else {
      row.put(KafkaColumns.VALUE, new FieldValue(wholeType(valueType), whole(valueType, record.value(), "value")));
    }
    return row;
  }

  private static Object whole(ConvertType type, ByteBuffer bytes, String what) throws InvalidRecordException {
    if (bytes == null) {
      return null;
    }
    if (type == ConvertType.RAW) {
      ByteBuffer copy = ByteBuffer.allocate(bytes.remaining());
      copy.put(bytes.duplicate()).flip();
      return copy;
    }
    try {
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(bytes.duplicate()).toString();
    } catch (CharacterCodingException e) {
      throw new InvalidRecordException("the " + what + " is not valid UTF-8 text", e);
    }
  }

  private static void jsonColumns(ByteBuffer value, Map<String, FieldValue> row) throws InvalidRecordException {
    if (value == null) {
      return; // a tombstone: only the Kafka columns
    }
    byte[] bytes = new byte[value.remaining()];
    value.duplicate().get(bytes);
    JsonNode node;
    try {
      node = JSON.readTree(bytes);
    } catch (JsonProcessingException e) {
      throw new InvalidRecordException("the value is not valid JSON: " + e.getOriginalMessage(), e);
    } catch (IOException e) {
      throw new InvalidRecordException("the value is not valid JSON: " + e.getMessage(), e);
    }
    if (node == null || node.getNodeType() != JsonNodeType.OBJECT) {
      throw new InvalidRecordException("the value is JSON but not an object (json conversion needs an object)");
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> field = it.next();
      String name = field.getKey();
      if (name.startsWith(KafkaColumns.PREFIX)) {
        throw new InvalidRecordException("field " + name + " uses the reserved prefix " + KafkaColumns.PREFIX);
      }
      if (name.isEmpty()) {
        throw new InvalidRecordException("the value has a field with an empty name");
      }
      FieldValue v = jsonValue(field.getValue());
      if (v != null) {
        row.put(name, v);
      }
    }
  }

  private static FieldValue jsonValue(JsonNode v) throws InvalidRecordException {
    return switch (v.getNodeType()) {
      case NULL, MISSING -> null;
      case BOOLEAN -> new FieldValue(Types.BooleanType.get(), v.booleanValue());
      case NUMBER -> {
        if (v.isIntegralNumber()) {
          if (v.canConvertToInt()) {
            yield new FieldValue(Types.IntegerType.get(), v.intValue());
          }
          if (v.canConvertToLong()) {
            yield new FieldValue(Types.LongType.get(), v.longValue());
          }
          throw new InvalidRecordException("number " + v.asText() + " does not fit in a 64-bit long");
        }
        yield new FieldValue(Types.DoubleType.get(), v.doubleValue());
      }
      case STRING -> new FieldValue(Types.StringType.get(), v.textValue());
      default -> new FieldValue(Types.StringType.get(), v.toString());
    };
  }
}
