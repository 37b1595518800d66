package io.tidemark.table.convert;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Matches converted values to a table schema: which columns must be added, widened or made
 * optional first ({@link #changesNeeded}), then the Iceberg row ({@link #bind}). Columns match by
 * name, nested ones too (struct fields, list elements, map values). Widening follows Iceberg's legal
 * promotions: int → long, float → double, decimal(p, s) → decimal(p', s) with p' > p; a narrower
 * value goes into a wider column as is (an int into a long column, a float into a double one,
 * decimal(p, s) into decimal(P ≥ p, s)), and int, long and float values go into a double column.
 * A required column the value leaves empty is made optional (columns Tidemark adds are always
 * optional). In lenient mode (schemaless JSON) a string column also takes numbers and booleans as
 * their text. Anything else (a fractional number for a long column, text for a number column, a
 * struct for a primitive) is invalid data. Stateless.
 */
public final class ColumnBinder {

  /**
   * At most this many field ids (columns at every depth, including dropped ones) per table: a stream
   * of values with ever new field names (schemaless JSON keyed by ids, say) cannot grow the schema
   * without bound; records needing more columns are invalid data.
   */
  public static final int MAX_FIELD_ID = 10_000;

  private ColumnBinder() {}

  /** The schema changes {@code row} needs (strict mode); empty when it fits the schema as is. */
  public static List<ColumnChange> changesNeeded(Schema schema, Map<String, FieldValue> row) throws InvalidRecordException {
    return changesNeeded(schema, row, false);
  }

  /**
   * The schema changes {@code row} needs, parents before children; empty when it fits the schema as is.
   *
   * @param lenient whether a string column takes scalar values as text (schemaless JSON)
   */
  public static List<ColumnChange> changesNeeded(Schema schema, Map<String, FieldValue> row, boolean lenient)
      throws InvalidRecordException {
    return changesNeeded(schema, row, lenient, java.util.Set.of());
  }

  /**
   * {@link #changesNeeded(Schema, Map, boolean)} where the top-level columns {@code keepRequired}
   * (the id columns of an upsert table, which every row has) stay required when the row has a value.
   */
  public static List<ColumnChange> changesNeeded(Schema schema, Map<String, FieldValue> row, boolean lenient,
      java.util.Set<String> keepRequired) throws InvalidRecordException {
    List<ColumnChange> changes = new ArrayList<>();
    for (Map.Entry<String, FieldValue> e : row.entrySet()) {
      FieldValue v = e.getValue();
      Types.NestedField column = schema.asStruct().field(e.getKey());
      if (column != null && column.isRequired() && v.value() != null && keepRequired.contains(e.getKey())) {
        column = Types.NestedField.optional(column.fieldId(), column.name(), column.type());
      }
      compare(null, e.getKey(), column, v.type(), v.value() == null, lenient, changes);
    }
    for (Types.NestedField column : schema.columns()) {
      if (column.isRequired() && !row.containsKey(column.name()) && !column.name().startsWith(KafkaColumns.PREFIX)) {
        changes.add(new ColumnChange(ColumnChange.Kind.MAKE_OPTIONAL, null, column.name(), null));
      }
    }
    if (schema.highestFieldId() >= MAX_FIELD_ID
        && changes.stream().anyMatch(c -> c.kind() == ColumnChange.Kind.ADD_COLUMN)) {
      throw new InvalidRecordException("the table has reached " + MAX_FIELD_ID + " field ids; new columns "
          + changes + " are refused (too many distinct field names: consider raw or string conversion)");
    }
    return changes;
  }

  private static void compare(String parent, String name, Types.NestedField column, Type valueType, boolean isNull,
      boolean lenient, List<ColumnChange> changes) throws InvalidRecordException {
    if (column == null) {
      changes.add(new ColumnChange(ColumnChange.Kind.ADD_COLUMN, parent, name, valueType));
      return;
    }
    String path = parent == null ? name : parent + "." + name;
    if (column.isRequired() && (isNull || !name.startsWith(KafkaColumns.PREFIX) || parent != null)) {
      changes.add(new ColumnChange(ColumnChange.Kind.MAKE_OPTIONAL, parent, name, null));
    }
    Type columnType = column.type();
    if (valueType.isStructType()) {
      if (!columnType.isStructType()) {
        throw mismatch(path, columnType, valueType);
      }
      Types.StructType table = columnType.asStructType();
      for (Types.NestedField f : valueType.asStructType().fields()) {
        compare(path, f.name(), table.field(f.name()), f.type(), false, lenient, changes);
      }
      for (Types.NestedField f : table.fields()) {
        if (f.isRequired() && valueType.asStructType().field(f.name()) == null) {
          changes.add(new ColumnChange(ColumnChange.Kind.MAKE_OPTIONAL, path, f.name(), null));
        }
      }
    } else if (valueType.isListType()) {
      if (!columnType.isListType()) {
        throw mismatch(path, columnType, valueType);
      }
      compare(path, "element", columnType.asListType().fields().get(0), valueType.asListType().elementType(), false, lenient,
          changes);
    } else if (valueType.isMapType()) {
      if (!columnType.isMapType()) {
        throw mismatch(path, columnType, valueType);
      }
      if (!columnType.asMapType().keyType().equals(valueType.asMapType().keyType())) {
        throw mismatch(path, columnType, valueType);
      }
      compare(path, "value", columnType.asMapType().fields().get(1), valueType.asMapType().valueType(), false, lenient,
          changes);
    } else {
      Type widened = widening(path, columnType, valueType, lenient);
      if (widened != null) {
        changes.add(new ColumnChange(ColumnChange.Kind.WIDEN_TYPE, parent, name, widened));
      }
    }
  }

  /** The type {@code column} must be widened to for {@code value}; null when it holds it as is. */
  private static Type widening(String path, Type column, Type value, boolean lenient) throws InvalidRecordException {
    if (column.equals(value)) {
      return null;
    }
    Type.TypeID to = column.typeId();
    Type.TypeID from = value.typeId();
    if (to == Type.TypeID.INTEGER && from == Type.TypeID.LONG) {
      return Types.LongType.get();
    }
    if (to == Type.TypeID.FLOAT && from == Type.TypeID.DOUBLE) {
      return Types.DoubleType.get();
    }
    if (to == Type.TypeID.DECIMAL && from == Type.TypeID.DECIMAL) {
      Types.DecimalType c = (Types.DecimalType) column;
      Types.DecimalType v = (Types.DecimalType) value;
      if (c.scale() == v.scale()) {
        return v.precision() > c.precision() ? v : null;
      }
    }
    if (holds(to, from, lenient)) {
      return null;
    }
    throw mismatch(path, column, value);
  }

  private static boolean holds(Type.TypeID to, Type.TypeID from, boolean lenient) {
    return switch (to) {
      case LONG -> from == Type.TypeID.INTEGER;
      case DOUBLE -> from == Type.TypeID.INTEGER || from == Type.TypeID.LONG || from == Type.TypeID.FLOAT;
      case STRING -> lenient && (from == Type.TypeID.INTEGER || from == Type.TypeID.LONG || from == Type.TypeID.DOUBLE
          || from == Type.TypeID.BOOLEAN);
      default -> false;
    };
  }

  private static InvalidRecordException mismatch(String path, Type column, Type value) {
    return new InvalidRecordException("column " + path + " is " + column + " and cannot hold a " + value
        + " value; Iceberg widens only int to long, float to double and decimal precision");
  }

  /**
   * The row of {@code schema} holding {@code row}; every needed change must have been applied. A
   * column of the row missing from {@code schema} is a {@link SchemaMismatchException}, never a
   * dropped value.
   */
  public static GenericRecord bind(Schema schema, Map<String, FieldValue> row) throws InvalidRecordException {
    GenericRecord record = GenericRecord.create(schema);
    for (Map.Entry<String, FieldValue> e : row.entrySet()) {
      Types.NestedField column = schema.asStruct().field(e.getKey());
      if (column == null) {
        throw new SchemaMismatchException("column " + e.getKey() + " is not in schema " + schema.schemaId()
            + "; the table must be evolved (changesNeeded) before the row is bound");
      }
      record.setField(e.getKey(), coerce(e.getKey(), column.type(), e.getValue().type(), e.getValue().value()));
    }
    return record;
  }

  private static Object coerce(String path, Type columnType, Type valueType, Object value) throws InvalidRecordException {
    if (value == null) {
      return null;
    }
    if (columnType.isStructType()) {
      Types.StructType struct = columnType.asStructType();
      GenericRecord out = GenericRecord.create(struct);
      Map<?, ?> fields = (Map<?, ?>) value;
      for (Types.NestedField f : valueType.asStructType().fields()) {
        Types.NestedField column = struct.field(f.name());
        if (column == null) {
          throw new SchemaMismatchException("column " + path + "." + f.name()
              + " is not in the schema; the table must be evolved (changesNeeded) before the row is bound");
        }
        out.setField(f.name(), coerce(path + "." + f.name(), column.type(), f.type(), fields.get(f.name())));
      }
      return out;
    }
    if (columnType.isListType()) {
      Type element = columnType.asListType().elementType();
      Type valueElement = valueType.asListType().elementType();
      List<?> in = (List<?>) value;
      List<Object> out = new ArrayList<>(in.size());
      for (Object o : in) {
        out.add(coerce(path + ".element", element, valueElement, o));
      }
      return out;
    }
    if (columnType.isMapType()) {
      Type mapValue = columnType.asMapType().valueType();
      Type valueOfValue = valueType.asMapType().valueType();
      Map<Object, Object> out = new LinkedHashMap<>();
      for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
        out.put(e.getKey(), coerce(path + ".value", mapValue, valueOfValue, e.getValue()));
      }
      return out;
    }
    return coercePrimitive(path, columnType, valueType, value);
  }

  private static Object coercePrimitive(String path, Type columnType, Type valueType, Object value)
      throws InvalidRecordException {
    Type.TypeID from = valueType.typeId();
    Type.TypeID to = columnType.typeId();
    if (from == to) {
      if (to == Type.TypeID.DECIMAL && ((BigDecimal) value).scale() != ((Types.DecimalType) columnType).scale()) {
        throw mismatch(path, columnType, valueType);
      }
      return value;
    }
    switch (to) {
      case LONG:
        if (from == Type.TypeID.INTEGER) {
          return ((Integer) value).longValue();
        }
        break;
      case DOUBLE:
        if (from == Type.TypeID.INTEGER || from == Type.TypeID.LONG || from == Type.TypeID.FLOAT) {
          return ((Number) value).doubleValue();
        }
        break;
      case STRING:
        if (from == Type.TypeID.INTEGER || from == Type.TypeID.LONG || from == Type.TypeID.DOUBLE
            || from == Type.TypeID.BOOLEAN) {
          return String.valueOf(value);
        }
        break;
      default:
        break;
    }
    throw mismatch(path, columnType, valueType);
  }
}
