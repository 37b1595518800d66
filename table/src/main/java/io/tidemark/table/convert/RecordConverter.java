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
 * {@code _kafka_key} (raw, string, or decoded with its registry schema like values below, keeping
 * its own type: a struct, or a primitive for a primitive key schema), and the value either whole
 * as {@code _kafka_value} ({@code raw}: binary, {@code string}: UTF-8 text) or as columns: schemaless {@code json} objects field by field with
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
  private final boolean debezium;
  private final TableTopicConfig.Upsert upsert;
  private final SchemaSide keySchemas;
  private final SchemaSide valueSchemas;

  /** How one side of the records (key or value) decodes with registry schemas. */
  private record SchemaSide(String what, SchemaDecoders decoders, String latestSubject) {}

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

  /** @param topic names the default subjects of {@code by_latest_schema} ({@code <topic>-value}, {@code <topic>-key}) */
  public RecordConverter(String topic, TableTopicConfig config, SchemaSource schemas) {
    this(topic, config, schemas, null);
  }

  private RecordConverter(String topic, TableTopicConfig config, SchemaSource schemas, AvroSchemaSource avroOnly) {
    this.keyType = config.keyConvert();
    this.valueType = config.valueConvert();
    this.flatten = config.valueTransform().flattens();
    this.debezium = config.valueTransform().debezium();
    this.upsert = config.upsert();
    if (keyType == ConvertType.JSON) {
      throw new IllegalArgumentException(TableTopicConfig.CONVERT_KEY_TYPE
          + "=json is not supported; use raw, string, by_schema_id or by_latest_schema");
    }
    this.valueSchemas = side("value", TableTopicConfig.CONVERT_VALUE_TYPE, valueType, schemas, avroOnly,
        config.valueMessageFullName().orElse(null),
        topic == null ? config.valueSubject().orElse(null) : config.valueSubjectFor(topic), TableTopicConfig.CONVERT_VALUE_SUBJECT);
    this.keySchemas = side("key", TableTopicConfig.CONVERT_KEY_TYPE, keyType, schemas, avroOnly,
        config.keyMessageFullName().orElse(null),
        topic == null ? config.keySubject().orElse(null) : config.keySubjectFor(topic), TableTopicConfig.CONVERT_KEY_SUBJECT);
  }

  private static SchemaSide side(String what, String configKey, ConvertType type, SchemaSource schemas,
      AvroSchemaSource avroOnly, String messageFullName, String subject, String subjectKey) {
    if (type != ConvertType.BY_SCHEMA_ID && type != ConvertType.BY_LATEST_SCHEMA) {
      return null;
    }
    if (schemas == null && (avroOnly == null || type == ConvertType.BY_LATEST_SCHEMA)) {
      throw new IllegalArgumentException(configKey + "=" + name(type) + " needs the schema registry"
          + (avroOnly == null ? "" : " with every format"));
    }
    if (type == ConvertType.BY_LATEST_SCHEMA && subject == null) {
      throw new IllegalArgumentException(configKey + "=by_latest_schema needs " + subjectKey + " or the topic name");
    }
    return new SchemaSide(what, new SchemaDecoders(schemas, avroOnly, messageFullName),
        type == ConvertType.BY_LATEST_SCHEMA ? subject : null);
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
    boolean columns = valueType == ConvertType.JSON || valueSchemas != null;
    return KafkaColumns.initialSchema(keySchemas != null ? null : wholeType(keyType), columns ? null : wholeType(valueType));
  }

  private static Type wholeType(ConvertType type) {
    return type == ConvertType.RAW ? Types.BinaryType.get() : Types.StringType.get();
  }

  /** Every column value of {@code record}, read from partition {@code partition}. */
  public Map<String, FieldValue> convert(int partition, Record record)
      throws InvalidRecordException, ConversionFailedException {
    Map<String, FieldValue> row = systemColumns(partition, record);
    valueColumns(record.value(), row);
    return row;
  }

  /** The value's columns into {@code row}: whole, JSON fields or schema fields, as configured. */
  private void valueColumns(ByteBuffer value, Map<String, FieldValue> row)
      throws InvalidRecordException, ConversionFailedException {
    if (valueType == ConvertType.JSON) {
      jsonColumns(value, row);
    } else if (valueSchemas != null) {
      schemaColumns(value, row);
    } else {
      row.put(KafkaColumns.VALUE, new FieldValue(wholeType(valueType), whole(valueType, value, "value")));
    }
  }

  /** What a record does to an upsert table: replace its id's row, delete it, or nothing. */
  public enum ChangeKind { UPSERT, DELETE, IGNORE }

  /**
   * One record of an upsert table: its kind and the row (for a delete, the columns that identify
   * it: the Kafka columns with the key, and the value's or the envelope's {@code before} fields).
   */
  public record Change(ChangeKind kind, Map<String, FieldValue> row) {}

  /**
   * The change {@code record} makes to an upsert table ({@code table.topic.upsert}): a tombstone
   * deletes its key's row; a Debezium envelope is unwrapped ({@code after} upserts, {@code before}
   * identifies a delete); the {@code cdc.field} value says upsert or delete; anything else upserts.
   * A tombstone of a table whose ids are value columns deletes when the key is a struct holding
   * them and is otherwise ignored (Debezium writes one after each delete event, which already deleted).
   *
   * @throws InvalidRecordException for an operation value in neither list, or an envelope without its row
   */
  public Change change(int partition, Record record) throws InvalidRecordException, ConversionFailedException {
    Map<String, FieldValue> row = systemColumns(partition, record);
    if (record.value() == null) {
      return tombstone(row);
    }
    String op = null;
    if (debezium) {
      op = envelopeColumns(record.value(), row);
    } else {
      valueColumns(record.value(), row);
      if (upsert.cdcField().isPresent()) {
        FieldValue f = row.get(upsert.cdcField().get());
        if (f == null || f.value() == null) {
          throw new InvalidRecordException("the value has no operation field " + upsert.cdcField().get());
        }
        op = f.value().toString();
      }
    }
    return new Change(op == null ? ChangeKind.UPSERT : kindOf(op), row);
  }

  private ChangeKind kindOf(String op) throws InvalidRecordException {
    if (upsert.upsertOps().contains(op)) {
      return ChangeKind.UPSERT;
    }
    if (upsert.deleteOps().contains(op)) {
      return ChangeKind.DELETE;
    }
    throw new InvalidRecordException("operation '" + op + "' is neither an upsert " + upsert.upsertOps() + " nor a delete "
        + upsert.deleteOps() + " (" + TableTopicConfig.CDC_UPSERT_VALUES + ", " + TableTopicConfig.CDC_DELETE_VALUES + ")");
  }

  private Change tombstone(Map<String, FieldValue> row) {
    if (upsert.idIsKey()) {
      return new Change(ChangeKind.DELETE, row);
    }
    FieldValue key = row.get(KafkaColumns.KEY);
    if (key != null && key.type().isStructType() && key.value() instanceof Map<?, ?> fields) {
      for (String id : upsert.idColumns()) {
        Types.NestedField f = key.type().asStructType().field(id);
        if (f == null || fields.get(id) == null) {
          return new Change(ChangeKind.IGNORE, row);
        }
        row.put(id, new FieldValue(f.type(), fields.get(id)));
      }
      return new Change(ChangeKind.DELETE, row);
    }
    return new Change(ChangeKind.IGNORE, row);
  }

  /** Unwraps a Debezium envelope into {@code row}; returns its operation. */
  private String envelopeColumns(ByteBuffer value, Map<String, FieldValue> row)
      throws InvalidRecordException, ConversionFailedException {
    if (valueType == ConvertType.JSON) {
      JsonNode node = jsonObject(value);
      if (node.has("payload") && node.has("schema") && node.get("payload").isObject()) {
        node = node.get("payload"); // JsonConverter with schemas.enable=true
      }
      JsonNode op = node.get("op");
      if (op == null || !op.isTextual()) {
        throw new InvalidRecordException("the value is not a Debezium change event (no text field op)");
      }
      ChangeKind kind = kindOf(op.textValue());
      JsonNode image = node.get(kind == ChangeKind.DELETE ? "before" : "after");
      if (image != null && image.isObject()) {
        jsonFields("", image, row);
      } else if (kind == ChangeKind.UPSERT) {
        throw new InvalidRecordException("the Debezium event '" + op.textValue() + "' has no after object");
      }
      return op.textValue();
    }
    if (valueSchemas == null) {
      throw new InvalidRecordException(TableTopicConfig.TRANSFORM_VALUE_TYPE + "=debezium needs json or schema values");
    }
    FieldValue v = decode(valueSchemas, value);
    Types.StructType type = v.type().isStructType() ? v.type().asStructType() : null;
    Types.NestedField opField = type == null ? null : type.field("op");
    if (opField == null || !(v.value() instanceof Map<?, ?> envelope) || envelope.get("op") == null) {
      throw new InvalidRecordException("the value is not a Debezium change event (no field op)");
    }
    String op = envelope.get("op").toString();
    ChangeKind kind = kindOf(op);
    String side = kind == ChangeKind.DELETE ? "before" : "after";
    Types.NestedField imageField = type.field(side);
    Object image = envelope.get(side);
    if (imageField != null && imageField.type().isStructType() && image instanceof Map<?, ?>) {
      @SuppressWarnings("unchecked")
      Map<String, Object> fields = (Map<String, Object>) image;
      fields("", imageField.type().asStructType(), fields, row);
    } else if (kind == ChangeKind.UPSERT) {
      throw new InvalidRecordException("the Debezium event '" + op + "' has no after struct");
    }
    return op;
  }

  /** The Kafka columns, the key and the headers of {@code record}. */
  private Map<String, FieldValue> systemColumns(int partition, Record record)
      throws InvalidRecordException, ConversionFailedException {
    Map<String, FieldValue> row = new LinkedHashMap<>();
    row.put(KafkaColumns.PARTITION, new FieldValue(Types.IntegerType.get(), partition));
    row.put(KafkaColumns.OFFSET, new FieldValue(Types.LongType.get(), record.offset()));
    row.put(KafkaColumns.TIMESTAMP, new FieldValue(Types.TimestampType.withZone(),
        OffsetDateTime.ofInstant(Instant.ofEpochMilli(record.timestamp()), ZoneOffset.UTC)));
    if (keySchemas == null) {
      row.put(KafkaColumns.KEY, new FieldValue(wholeType(keyType), whole(keyType, record.key(), "key")));
    } else if (record.key() != null) {
      row.put(KafkaColumns.KEY, decode(keySchemas, record.key()));
    }
    Map<String, ByteBuffer> headers = new LinkedHashMap<>();
    for (Header h : record.headers()) {
      headers.put(h.key(), h.value() == null ? null : ByteBuffer.wrap(h.value()));
    }
    row.put(KafkaColumns.HEADERS, new FieldValue(
        Types.MapType.ofOptional(0, 0, Types.StringType.get(), Types.BinaryType.get()), headers));
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
    jsonFields("", jsonObject(value), row);
  }

  private static JsonNode jsonObject(ByteBuffer value) throws InvalidRecordException {
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
    return node;
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
    FieldValue v = decode(valueSchemas, value);
    if (!v.type().isStructType()) {
      throw new InvalidRecordException("the value's schema is a " + v.type()
          + "; value columns need an Avro record, a JSON Schema object with properties or a Protobuf message");
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> fields = (Map<String, Object>) v.value();
    fields("", v.type().asStructType(), fields, row);
  }

  /** The typed value of {@code bytes} (a key or a value) decoded with its registry schema. */
  private static FieldValue decode(SchemaSide side, ByteBuffer buffer) throws InvalidRecordException, ConversionFailedException {
    byte[] bytes = new byte[buffer.remaining()];
    buffer.duplicate().get(bytes);
    try {
      SchemaDecoders.Decoding d;
      Object decoded;
      if (side.latestSubject() == null) {
        d = side.decoders().framed(bytes);
        decoded = d.decoder().decode(d.payload());
      } else {
        d = side.decoders().latest(side.latestSubject(), bytes);
        try {
          decoded = d.decoder().decode(d.payload());
        } catch (InvalidRecordException e) {
          // perhaps written with a version registered since the cached one was fetched
          if (!side.decoders().refreshLatest(side.latestSubject())) {
            // fetched moments ago: wait for the next fetch rather than drop a record a new version may fit
            throw new ConversionFailedException("the " + side.what() + " does not decode with the latest schema of "
                + side.latestSubject() + " (fetched under a second ago); retrying after the next fetch: " + e.getMessage(), e);
          }
          SchemaDecoders.Decoding fresh = side.decoders().latest(side.latestSubject(), bytes);
          if (fresh.schemaId() == d.schemaId()) {
            throw e;
          }
          d = fresh;
          decoded = d.decoder().decode(d.payload());
        }
      }
      return new FieldValue(d.decoder().type(), decoded);
    } catch (InvalidRecordException e) {
      throw new InvalidRecordException("the " + side.what() + ": " + e.getMessage(), e);
    }
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
