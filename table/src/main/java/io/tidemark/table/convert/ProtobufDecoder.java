package io.tidemark.table.convert;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Message;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Protobuf binary values of one message type, decoded as {@code DynamicMessage}s. Messages become
 * structs (fields by their .proto names, members of a {@code oneof} are optional fields of which
 * one is set), repeated fields lists, map fields maps, enums strings (the value's name); int32,
 * sint32, sfixed32 → int; uint32, fixed32 → long; int64, sint64, sfixed64 → long; uint64, fixed64 →
 * decimal(20, 0) (unsigned, exact); bytes → binary; {@code google.protobuf.Timestamp} →
 * timestamptz; the wrapper types ({@code google.protobuf.Int64Value}, ...) → their optional
 * primitive. Proto3 scalars without presence read as their default when unset; fields with
 * presence (messages, {@code optional}, oneof members) as null. Recursive messages are refused
 * (bad data). Immutable and thread-safe.
 */
final class ProtobufDecoder implements ValueDecoder {

  private static final String TIMESTAMP = "google.protobuf.Timestamp";
  private static final Set<String> WRAPPERS = Set.of("google.protobuf.DoubleValue", "google.protobuf.FloatValue",
      "google.protobuf.Int64Value", "google.protobuf.UInt64Value", "google.protobuf.Int32Value", "google.protobuf.UInt32Value",
      "google.protobuf.BoolValue", "google.protobuf.StringValue", "google.protobuf.BytesValue");

  private final Descriptor message;
  private final Types.StructType type;

  ProtobufDecoder(Descriptor message) throws InvalidRecordException {
    this.message = message;
    this.type = structOf(message, new FieldIds(), new HashSet<>());
  }

  @Override
  public Types.StructType type() {
    return type;
  }

  @Override
  public Object decode(ByteBuffer payload) throws InvalidRecordException {
    DynamicMessage m;
    try {
      m = DynamicMessage.parseFrom(message, CodedInputStream.newInstance(payload.duplicate()));
    } catch (IOException | RuntimeException e) {
      throw new InvalidRecordException("the bytes do not decode as Protobuf message " + message.getFullName() + ": " + e, e);
    }
    return structValue(m);
  }

  /**
   * Reads the Confluent message-index list at the start of a framed Protobuf payload (zig-zag
   * varints: a count, then that many indexes; a lone 0 means {@code [0]}) and returns the message
   * type it names in {@code file}; {@code payload} is left just after the list.
   */
  static Descriptor messageAt(com.google.protobuf.Descriptors.FileDescriptor file, ByteBuffer payload)
      throws InvalidRecordException {
    int count = zigZagVarint(payload);
    if (count < 0 || count > 64) {
      throw new InvalidRecordException("the Protobuf message-index list has a bad length " + count);
    }
    List<Integer> indexes = new ArrayList<>();
    if (count == 0) {
      indexes.add(0);
    }
    for (int i = 0; i < count; i++) {
      indexes.add(zigZagVarint(payload));
    }
    Descriptor d = null;
    for (int index : indexes) {
      List<Descriptor> candidates = d == null ? file.getMessageTypes() : d.getNestedTypes();
      if (index < 0 || index >= candidates.size()) {
        throw new InvalidRecordException("the Protobuf message index " + indexes + " names no message of the schema");
      }
      d = candidates.get(index);
    }
    return d;
  }

  private static int zigZagVarint(ByteBuffer in) throws InvalidRecordException {
    int raw = 0;
    for (int shift = 0; shift < 32; shift += 7) {
      if (!in.hasRemaining()) {
        throw new InvalidRecordException("the bytes end inside the Protobuf message-index list");
      }
      byte b = in.get();
      raw |= (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        return (raw >>> 1) ^ -(raw & 1);
      }
    }
    throw new InvalidRecordException("the Protobuf message-index list has a varint longer than 5 bytes");
  }

  private static Types.StructType structOf(Descriptor d, FieldIds ids, Set<String> visiting) throws InvalidRecordException {
    if (!visiting.add(d.getFullName())) {
      throw new InvalidRecordException("Protobuf message " + d.getFullName() + " is recursive; it cannot be a table column");
    }
    List<Types.NestedField> fields = new ArrayList<>();
    for (FieldDescriptor f : d.getFields()) {
      fields.add(Types.NestedField.optional(ids.next(), f.getName(), fieldType(f, ids, visiting)));
    }
    visiting.remove(d.getFullName());
    return Types.StructType.of(fields);
  }

  private static Type fieldType(FieldDescriptor f, FieldIds ids, Set<String> visiting) throws InvalidRecordException {
    if (f.isMapField()) {
      Descriptor entry = f.getMessageType();
      return Types.MapType.ofOptional(ids.next(), ids.next(), elementType(entry.findFieldByNumber(1), ids, visiting),
          elementType(entry.findFieldByNumber(2), ids, visiting));
    }
    Type element = elementType(f, ids, visiting);
    return f.isRepeated() ? Types.ListType.ofOptional(ids.next(), element) : element;
  }

  private static Type elementType(FieldDescriptor f, FieldIds ids, Set<String> visiting) throws InvalidRecordException {
    return switch (f.getJavaType()) {
      case INT -> unsigned32(f) ? Types.LongType.get() : Types.IntegerType.get();
      case LONG -> unsigned64(f) ? Types.DecimalType.of(20, 0) : Types.LongType.get();
      case FLOAT -> Types.FloatType.get();
      case DOUBLE -> Types.DoubleType.get();
      case BOOLEAN -> Types.BooleanType.get();
      case STRING, ENUM -> Types.StringType.get();
      case BYTE_STRING -> Types.BinaryType.get();
      case MESSAGE -> {
        String name = f.getMessageType().getFullName();
        if (name.equals(TIMESTAMP)) {
          yield Types.TimestampType.withZone();
        }
        if (WRAPPERS.contains(name)) {
          yield elementType(f.getMessageType().findFieldByNumber(1), ids, visiting);
        }
        yield structOf(f.getMessageType(), ids, visiting);
      }
    };
  }

  private static boolean unsigned32(FieldDescriptor f) {
    return f.getType() == FieldDescriptor.Type.UINT32 || f.getType() == FieldDescriptor.Type.FIXED32;
  }

  private static boolean unsigned64(FieldDescriptor f) {
    return f.getType() == FieldDescriptor.Type.UINT64 || f.getType() == FieldDescriptor.Type.FIXED64;
  }

  private static Map<String, Object> structValue(Message m) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (FieldDescriptor f : m.getDescriptorForType().getFields()) {
      out.put(f.getName(), fieldValue(m, f));
    }
    return out;
  }

  private static Object fieldValue(Message m, FieldDescriptor f) {
    if (f.isMapField()) {
      Map<Object, Object> out = new LinkedHashMap<>();
      for (Object o : (List<?>) m.getField(f)) {
        Message entry = (Message) o;
        Descriptor d = entry.getDescriptorForType();
        out.put(elementValue(d.findFieldByNumber(1), entry.getField(d.findFieldByNumber(1))),
            elementValue(d.findFieldByNumber(2), entry.getField(d.findFieldByNumber(2))));
      }
      return out;
    }
    if (f.isRepeated()) {
      List<Object> out = new ArrayList<>();
      for (Object o : (List<?>) m.getField(f)) {
        out.add(elementValue(f, o));
      }
      return out;
    }
    if (f.hasPresence() && !m.hasField(f)) {
      return null;
    }
    return elementValue(f, m.getField(f));
  }

  private static Object elementValue(FieldDescriptor f, Object v) {
    return switch (f.getJavaType()) {
      case INT -> unsigned32(f) ? Integer.toUnsignedLong((Integer) v) : v;
      case LONG -> unsigned64(f) ? new BigDecimal(Long.toUnsignedString((Long) v)) : v;
      case ENUM -> ((EnumValueDescriptor) v).getName();
      case BYTE_STRING -> ByteBuffer.wrap(((ByteString) v).toByteArray());
      case MESSAGE -> {
        Message msg = (Message) v;
        String name = f.getMessageType().getFullName();
        if (name.equals(TIMESTAMP)) {
          Descriptor d = msg.getDescriptorForType();
          long seconds = (Long) msg.getField(d.findFieldByName("seconds"));
          int nanos = (Integer) msg.getField(d.findFieldByName("nanos"));
          yield OffsetDateTime.ofInstant(Instant.ofEpochSecond(seconds, nanos), ZoneOffset.UTC);
        }
        if (WRAPPERS.contains(name)) {
          FieldDescriptor inner = f.getMessageType().findFieldByNumber(1);
          yield elementValue(inner, msg.getField(inner));
        }
        yield structValue(msg);
      }
      default -> v;
    };
  }
}
