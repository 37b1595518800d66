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
 * {@code string}: UTF-8 text) or as columns: schemaless {@code json} objects field by field with
 * types inferred from the data (boolean, int, long, double, string; nested objects and arrays kept
 * as their JSON text); {@code by_schema_id} values in the Confluent framing decoded with the
 * registered schema of their id (Avro, JSON Schema, Protobuf: see {@link AvroDecoder},
 * {@link JsonSchemaDecoder}, {@link ProtobufDecoder}); {@code by_latest_schema} values without
 * framing decoded with the latest schema of the topic's value subject (re-fetched once when a
 * value does not decode with it). With {@code transform.value.type=flatten} every struct field
 * becomes a top-level column named {@code parent_child} (and nested JSON objects of schemaless
 * JSON likewise). Thread-safe (the schema caches are).
 */
public final class RecordConverter {

  /** Joins a struct's name and its field's name when values are flattened. */
  public static final String FLATTEN_SEPARATOR = "_";

  private static final ObjectMapper JSON = new ObjectMapper();

  private final ConvertType keyType;
  private final ConvertType valueType;
  private final boolean flatten;
  private final SchemaDecoders decoders;
  private final String valueSubject;

  public RecordConverter(TableTopicConfig config) {
    this(null, config, (SchemaSource) null);
  }

  /**
   * @param schemas where {@code by_schema_id} finds schemas: a {@link SchemaSource} (such as
   *     {@link RegistrySchemas}) serves every format, any other source Avro only; null when no
   *     registry is available
   */
  public RecordConverter(TableTopicConfig config, AvroSchemaSource schemas) {
    this(null, config, schemas instanceof SchemaSource full ? full : null, schemas);
  }

  /** @param topic names the default subject of {@code by_latest_schema} ({@code <topic>-value}) */
  public RecordConverter(String topic, TableTopicConfig config, SchemaSource schemas) {
    this(topic, config, schemas, null);
  }

  private RecordConverter(String topic, TableTopicConfig config, SchemaSource schemas, AvroSchemaSource avroOnly) {
    this.keyType = config.keyConvert();
    this.valueType = config.valueConvert();
    this.flatten = config.valueTransform() == TableTopicConfig.TransformType.FLATTEN;
    boolean registry = valueType == ConvertType.BY_SCHEMA_ID || valueType == ConvertType.BY_LATEST_SCHEMA;
    if (registry && schemas == null && (avroOnly == null || valueType == ConvertType.BY_LATEST_SCHEMA)) {
      throw new IllegalArgumentException(TableTopicConfig.CONVERT_VALUE_TYPE + "=" + name(valueType) + " needs the schema registry");
    }
    this.decoders = registry ? new SchemaDecoders(schemas, avroOnly, config.valueMessageFullName().orElse(null)) : null;
    if (valueType == ConvertType.BY_LATEST_SCHEMA && topic == null && config.valueSubject().isEmpty()) {
      throw new IllegalArgumentException(TableTopicConfig.CONVERT_VALUE_TYPE + "=by_latest_schema needs "
          + TableTopicConfig.CONVERT_VALUE_SUBJECT + " or the topic name");
    }
    this.valueSubject = valueType == ConvertType.BY_LATEST_SCHEMA ? config.valueSubjectFor(topic) : null;
    if (keyType != ConvertType.RAW && keyType != ConvertType.STRING) {
      throw new IllegalArgumentException(TableTopicConfig.CONVERT_KEY_TYPE + "=" + name(keyType)
          + " is not supported yet; use raw or string");
    }
  }

  private static String name(ConvertType t) {
    return t.name().toLowerCase(java.util.Locale.ROOT);
  }

  /** Whether string columns take numbers and booleans as text (schemaless JSON, whose types are guessed). */
  public boolean lenientStrings() {
    return valueType == ConvertType.JSON;
  }

  /** The schema a new table of this converter starts with. */
  public Schema initialSchema() {
    boolean columns = valueType == ConvertType.JSON || valueType == ConvertType.BY_SCHEMA_ID
        || valueType == ConvertType.BY_LATEST_SCHEMA;
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
    } else if (valueType == ConvertType.BY_SCHEMA_ID || valueType == ConvertType.BY_LATEST_SCHEMA) {
      schemaColumns(record.value(), row);
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

  private void jsonColumns(ByteBuffer value, Map<String, FieldValue> row) throws InvalidRecordException {
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
    jsonFields("", node, row);
  }

  private void jsonFields(String prefix, JsonNode object, Map<String, FieldValue> row) throws InvalidRecordException {
    for (Map.Entry<String, JsonNode> field : object.properties()) {
      if (field.getKey().isEmpty()) {
        throw new InvalidRecordException("the value has a field with an empty name");
      }
      String name = prefix + field.getKey();
      if (flatten && field.getValue().isObject()) {
        jsonFields(name + FLATTEN_SEPARATOR, field.getValue(), row);
        continue;
      }
      FieldValue v = jsonValue(field.getValue());
      if (v != null) {
        put(row, name, v);
      }
    }
  }

  private static void put(Map<String, FieldValue> row, String name, FieldValue v) throws InvalidRecordException {
    if (name.startsWith(KafkaColumns.PREFIX)) {
      throw new InvalidRecordException("field " + name + " uses the reserved prefix " + KafkaColumns.PREFIX);
    }
    if (row.putIfAbsent(name, v) != null) {
      throw new InvalidRecordException("two fields of the value become column " + name
          + (name.contains(FLATTEN_SEPARATOR) ? " (flatten joins names with " + FLATTEN_SEPARATOR + ")" : ""));
    }
  }

  private void schemaColumns(ByteBuffer value, Map<String, FieldValue> row)
      throws InvalidRecordException, ConversionFailedException {
    if (value == null) {
      return; // a tombstone: only the Kafka columns
    }
    byte[] bytes = new byte[value.remaining()];
    value.duplicate().get(bytes);
    SchemaDecoders.Decoding d;
    Map<String, Object> decoded;
    if (valueSubject == null) {
      d = decoders.framed(bytes);
      decoded = d.decoder().decode(d.payload());
    } else {
      d = decoders.latest(valueSubject, bytes);
      try {
        decoded = d.decoder().decode(d.payload());
      } catch (InvalidRecordException e) {
        // perhaps written with a version registered since the cached one was fetched
        if (!decoders.refreshLatest(valueSubject)) {
          throw e;
        }
        SchemaDecoders.Decoding fresh = decoders.latest(valueSubject, bytes);
        if (fresh.schemaId() == d.schemaId()) {
          throw e;
        }
        d = fresh;
        decoded = d.decoder().decode(d.payload());
      }
    }
    fields("", d.decoder().type(), decoded, row);
  }

  private void fields(String prefix, Types.StructType type, Map<String, Object> values, Map<String, FieldValue> row)
      throws InvalidRecordException {
    for (Types.NestedField f : type.fields()) {
      Object v = values == null ? null : values.get(f.name());
      if (flatten && f.type().isStructType()) {
        @SuppressWarnings("unchecked")
        Map<String, Object> nested = (Map<String, Object>) v;
        fields(prefix + f.name() + FLATTEN_SEPARATOR, f.type().asStructType(), nested, row);
      } else {
        put(row, prefix + f.name(), new FieldValue(f.type(), v));
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
