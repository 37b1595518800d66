package io.tidemark.table.convert;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeType;
import io.tidemark.registry.client.WireFormat;
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
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;
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
 * string; nested objects and arrays are kept as their JSON text), or for {@code by_schema_id}
 * each top-level field of an Avro record framed with a registry schema id (primitives typed,
 * nested records, arrays and maps kept as JSON text; logical types not yet mapped). Stateless
 * and thread-safe (the schema source caches).
 */
public final class RecordConverter {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final ConvertType keyType;
  private final ConvertType valueType;
  private final AvroSchemaSource schemas;

  public RecordConverter(TableTopicConfig config) {
    this(config, null);
  }

  /** @param schemas where {@code by_schema_id} finds Avro schemas; null when no registry is available */
  public RecordConverter(TableTopicConfig config, AvroSchemaSource schemas) {
    this.keyType = config.keyConvert();
    this.valueType = config.valueConvert();
    this.schemas = schemas;
    if (valueType == ConvertType.BY_SCHEMA_ID && schemas == null) {
      throw new IllegalArgumentException(TableTopicConfig.CONVERT_VALUE_TYPE + "=by_schema_id needs the schema registry");
    }
    if (keyType != ConvertType.RAW && keyType != ConvertType.STRING) {
      throw new IllegalArgumentException(TableTopicConfig.CONVERT_KEY_TYPE + "=" + name(keyType)
          + " is not supported yet; use raw or string");
    }
    if (valueType == ConvertType.BY_LATEST_SCHEMA) {
      throw new IllegalArgumentException(TableTopicConfig.CONVERT_VALUE_TYPE + "=" + name(valueType)
          + " is not supported yet; use raw, string, json or by_schema_id");
    }
  }

  private static String name(ConvertType t) {
    return t.name().toLowerCase(java.util.Locale.ROOT);
  }

  /** The schema a new table of this converter starts with. */
  public Schema initialSchema() {
    boolean columns = valueType == ConvertType.JSON || valueType == ConvertType.BY_SCHEMA_ID;
    return KafkaColumns.initialSchema(wholeType(keyType), columns ? null : wholeType(valueType));
  }

  private static Type wholeType(ConvertType type) {
    return type == ConvertType.RAW ? Types.BinaryType.get() : Types.StringType.get();
  }

  /** Every column value of {@code record}, read from partition {@code partition}. */
  public Map<String, FieldValue> convert(int partition, Record record)
      throws InvalidRecordException, ConversionFailedException {
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
    } else if (valueType == ConvertType.BY_SCHEMA_ID) {
      avroColumns(record.value(), row);
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
    for (Map.Entry<String, JsonNode> field : node.properties()) {
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

  private void avroColumns(ByteBuffer value, Map<String, FieldValue> row)
      throws InvalidRecordException, ConversionFailedException {
    if (value == null) {
      return; // a tombstone: only the Kafka columns
    }
    byte[] framed = new byte[value.remaining()];
    value.duplicate().get(framed);
    int id;
    try {
      id = WireFormat.schemaId(framed);
    } catch (IllegalArgumentException e) {
      throw new InvalidRecordException("the value is " + e.getMessage(), e);
    }
    org.apache.avro.Schema schema = schemas.avroSchema(id);
    if (schema.getType() != org.apache.avro.Schema.Type.RECORD) {
      throw new InvalidRecordException("schema id " + id + " is an Avro " + schema.getType() + "; by_schema_id needs a record");
    }
    ByteBuffer payload = WireFormat.payload(framed);
    GenericData.Record decoded;
    try {
      BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(payload.array(), payload.arrayOffset() + payload.position(),
          payload.remaining(), null);
      decoded = new GenericDatumReader<GenericData.Record>(schema).read(null, decoder);
      if (!decoder.isEnd()) {
        throw new InvalidRecordException("the value has bytes after the Avro record of schema id " + id);
      }
    } catch (IOException | RuntimeException e) {
      throw new InvalidRecordException("the value does not decode with Avro schema id " + id + ": " + e, e);
    }
    for (org.apache.avro.Schema.Field field : schema.getFields()) {
      if (field.name().startsWith(KafkaColumns.PREFIX)) {
        throw new InvalidRecordException("field " + field.name() + " uses the reserved prefix " + KafkaColumns.PREFIX);
      }
      FieldValue v = avroValue(field.schema(), decoded.get(field.pos()));
      if (v != null) {
        row.put(field.name(), v);
      }
    }
  }

  private static FieldValue avroValue(org.apache.avro.Schema schema, Object v) {
    if (v == null) {
      return null;
    }
    org.apache.avro.Schema s = schema;
    if (s.getType() == org.apache.avro.Schema.Type.UNION) {
      List<org.apache.avro.Schema> branches = s.getTypes().stream()
          .filter(b -> b.getType() != org.apache.avro.Schema.Type.NULL).toList();
      s = branches.size() == 1 ? branches.get(0) : s;
    }
    return switch (s.getType()) {
      case BOOLEAN -> new FieldValue(Types.BooleanType.get(), v);
      case INT -> new FieldValue(Types.IntegerType.get(), v);
      case LONG -> new FieldValue(Types.LongType.get(), v);
      case FLOAT -> new FieldValue(Types.FloatType.get(), v);
      case DOUBLE -> new FieldValue(Types.DoubleType.get(), v);
      case STRING, ENUM -> new FieldValue(Types.StringType.get(), v.toString());
      case BYTES -> new FieldValue(Types.BinaryType.get(), copy((ByteBuffer) v));
      case FIXED -> new FieldValue(Types.BinaryType.get(), ByteBuffer.wrap(((GenericData.Fixed) v).bytes().clone()));
      default -> new FieldValue(Types.StringType.get(), GenericData.get().toString(v));
    };
  }

  private static ByteBuffer copy(ByteBuffer b) {
    ByteBuffer out = ByteBuffer.allocate(b.remaining());
    out.put(b.duplicate()).flip();
    return out;
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
