package io.tidemark.table.convert;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.avro.LogicalType;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.IndexedRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Avro binary values of one record schema. Records become structs, arrays lists, maps maps (string
 * keys), enums strings; {@code ["null", T]} is an optional T and any other union a struct with one
 * optional field per non-null branch (named after the branch: its record, enum or fixed name, else
 * its type, e.g. {@code int}), of which the written branch is set. Logical types: decimal →
 * decimal(p, s), date → date, time-millis/micros → time, timestamp-millis/micros →
 * timestamptz, local-timestamp-millis/micros → timestamp, uuid → string. A recursive record is
 * refused (bad data). Immutable and thread-safe.
 */
final class AvroDecoder implements ValueDecoder {

  private final Schema schema;
  private final Type type;

  AvroDecoder(Schema schema) throws InvalidRecordException {
    this.schema = schema;
    Type t = typeOf(schema, new FieldIds(), new HashSet<>());
    this.type = t == null ? Types.StringType.get() : t;
  }

  @Override
  public Type type() {
    return type;
  }

  @Override
  public Object decode(ByteBuffer payload) throws InvalidRecordException {
    Object decoded;
    try {
      BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(payload.array(), payload.arrayOffset() + payload.position(),
          payload.remaining(), null);
      decoded = new GenericDatumReader<>(schema).read(null, decoder);
      if (!decoder.isEnd()) {
        throw new InvalidRecordException("there are bytes after the Avro datum");
      }
    } catch (IOException | RuntimeException e) {
      throw new InvalidRecordException("the bytes do not decode with the Avro schema " + schema.getFullName() + ": " + e, e);
    }
    return valueOf(schema, decoded);
  }

  private static Type typeOf(Schema s, FieldIds ids, Set<String> visiting) throws InvalidRecordException {
    LogicalType logical = s.getLogicalType();
    switch (s.getType()) {
      case RECORD: {
        if (!visiting.add(s.getFullName())) {
          throw new InvalidRecordException("Avro record " + s.getFullName() + " is recursive; it cannot be a table column");
        }
        List<Types.NestedField> fields = new ArrayList<>();
        for (Schema.Field f : s.getFields()) {
          Type t = typeOf(f.schema(), ids, visiting);
          if (t != null) {
            fields.add(Types.NestedField.optional(ids.next(), f.name(), t));
          }
        }
        visiting.remove(s.getFullName());
        return Types.StructType.of(fields);
      }
      case UNION: {
        List<Schema> branches = nonNull(s);
        if (branches.isEmpty()) {
          return null;
        }
        if (branches.size() == 1) {
          return typeOf(branches.get(0), ids, visiting);
        }
        List<Types.NestedField> fields = new ArrayList<>();
        List<String> names = branchNames(branches);
        for (int i = 0; i < branches.size(); i++) {
          fields.add(Types.NestedField.optional(ids.next(), names.get(i), orString(typeOf(branches.get(i), ids, visiting))));
        }
        return Types.StructType.of(fields);
      }
      case ARRAY:
        return Types.ListType.ofOptional(ids.next(), orString(typeOf(s.getElementType(), ids, visiting)));
      case MAP:
        return Types.MapType.ofOptional(ids.next(), ids.next(), Types.StringType.get(),
            orString(typeOf(s.getValueType(), ids, visiting)));
      case ENUM:
      case STRING:
        return Types.StringType.get();
      case BYTES:
      case FIXED:
        if (logical instanceof LogicalTypes.Decimal d) {
          return Types.DecimalType.of(d.getPrecision(), d.getScale());
        }
        return Types.BinaryType.get();
      case INT:
        if (logical instanceof LogicalTypes.Date) {
          return Types.DateType.get();
        }
        if (logical instanceof LogicalTypes.TimeMillis) {
          return Types.TimeType.get();
        }
        return Types.IntegerType.get();
      case LONG:
        if (logical instanceof LogicalTypes.TimestampMillis || logical instanceof LogicalTypes.TimestampMicros) {
          return Types.TimestampType.withZone();
        }
        if (logical instanceof LogicalTypes.LocalTimestampMillis || logical instanceof LogicalTypes.LocalTimestampMicros) {
          return Types.TimestampType.withoutZone();
        }
        if (logical instanceof LogicalTypes.TimeMicros) {
          return Types.TimeType.get();
        }
        return Types.LongType.get();
      case FLOAT:
        return Types.FloatType.get();
      case DOUBLE:
        return Types.DoubleType.get();
      case BOOLEAN:
        return Types.BooleanType.get();
      default:
        return null; // NULL: no column
    }
  }

  private static Type orString(Type t) {
    return t == null ? Types.StringType.get() : t;
  }

  private static List<Schema> nonNull(Schema union) {
    List<Schema> out = new ArrayList<>();
    for (Schema b : union.getTypes()) {
      if (b.getType() != Schema.Type.NULL) {
        out.add(b);
      }
    }
    return out;
  }

  /** Field names of a union's branches: the record, enum or fixed name, else the type; a number appended to repeats. */
  private static List<String> branchNames(List<Schema> branches) {
    List<String> names = new ArrayList<>();
    for (Schema b : branches) {
      String base = switch (b.getType()) {
        case RECORD, ENUM, FIXED -> b.getName();
        default -> b.getType().getName();
      };
      String name = base;
      for (int i = 2; names.contains(name); i++) {
        name = base + i;
      }
      names.add(name);
    }
    return names;
  }

  private static Object valueOf(Schema s, Object v) {
    if (v == null) {
      return null;
    }
    LogicalType logical = s.getLogicalType();
    switch (s.getType()) {
      case RECORD: {
        IndexedRecord r = (IndexedRecord) v;
        Map<String, Object> out = new LinkedHashMap<>();
        for (Schema.Field f : s.getFields()) {
          out.put(f.name(), valueOf(f.schema(), r.get(f.pos())));
        }
        return out;
      }
      case UNION: {
        Schema branch = s.getTypes().get(GenericData.get().resolveUnion(s, v));
        List<Schema> branches = nonNull(s);
        if (branches.size() == 1) {
          return valueOf(branch, v);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        List<String> names = branchNames(branches);
        for (int i = 0; i < branches.size(); i++) {
          Schema b = branches.get(i);
          out.put(names.get(i), b == branch ? valueOf(b, v) : null);
        }
        return out;
      }
      case ARRAY: {
        List<Object> out = new ArrayList<>();
        for (Object e : (Iterable<?>) v) {
          out.add(valueOf(s.getElementType(), e));
        }
        return out;
      }
      case MAP: {
        Map<Object, Object> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
          out.put(e.getKey().toString(), valueOf(s.getValueType(), e.getValue()));
        }
        return out;
      }
      case ENUM:
      case STRING:
        return v.toString();
      case BYTES: {
        ByteBuffer b = (ByteBuffer) v;
        byte[] bytes = new byte[b.remaining()];
        b.duplicate().get(bytes);
        return bytesValue(logical, bytes);
      }
      case FIXED:
        return bytesValue(logical, ((GenericData.Fixed) v).bytes().clone());
      case INT:
        if (logical instanceof LogicalTypes.Date) {
          return LocalDate.ofEpochDay((Integer) v);
        }
        if (logical instanceof LogicalTypes.TimeMillis) {
          return LocalTime.ofNanoOfDay((Integer) v * 1_000_000L);
        }
        return v;
      case LONG: {
        long l = (Long) v;
        if (logical instanceof LogicalTypes.TimestampMillis) {
          return OffsetDateTime.ofInstant(Instant.ofEpochMilli(l), ZoneOffset.UTC);
        }
        if (logical instanceof LogicalTypes.TimestampMicros) {
          return OffsetDateTime.ofInstant(micros(l), ZoneOffset.UTC);
        }
        if (logical instanceof LogicalTypes.LocalTimestampMillis) {
          return LocalDateTime.ofInstant(Instant.ofEpochMilli(l), ZoneOffset.UTC);
        }
        if (logical instanceof LogicalTypes.LocalTimestampMicros) {
          return LocalDateTime.ofInstant(micros(l), ZoneOffset.UTC);
        }
        if (logical instanceof LogicalTypes.TimeMicros) {
          return LocalTime.ofNanoOfDay(l * 1_000L);
        }
        return v;
      }
      default:
        return v;
    }
  }

  private static Instant micros(long micros) {
    return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
  }

  private static Object bytesValue(LogicalType logical, byte[] bytes) {
    if (logical instanceof LogicalTypes.Decimal d) {
      return new BigDecimal(new BigInteger(bytes), d.getScale());
    }
    return ByteBuffer.wrap(bytes);
  }
}
