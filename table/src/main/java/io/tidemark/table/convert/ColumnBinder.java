package io.tidemark.table.convert;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Matches converted values to a table schema: which columns must be added or widened first
 * ({@link #changesNeeded}), then the Iceberg row ({@link #bind}). Widening follows Iceberg's legal
 * promotions: an int column becomes long, a float column double; int, long and float values go
 * into a double column as doubles;
 * any scalar goes into a string column as text. Anything else (a fractional number for a long
 * column, text for a number column) is invalid data. Stateless.
 */
public final class ColumnBinder {

  private ColumnBinder() {}

  /** The schema changes {@code row} needs, in column order; empty when it fits the schema as is. */
  public static List<ColumnChange> changesNeeded(Schema schema, Map<String, FieldValue> row) throws InvalidRecordException {
    List<ColumnChange> changes = new ArrayList<>();
    for (Map.Entry<String, FieldValue> e : row.entrySet()) {
      Types.NestedField column = schema.findField(e.getKey());
      Type valueType = e.getValue().type();
      if (column == null) {
        changes.add(new ColumnChange(ColumnChange.Kind.ADD_COLUMN, e.getKey(), valueType));
      } else if (column.type().typeId() == Type.TypeID.INTEGER && valueType.typeId() == Type.TypeID.LONG) {
        changes.add(new ColumnChange(ColumnChange.Kind.WIDEN_TYPE, e.getKey(), Types.LongType.get()));
      } else if (column.type().typeId() == Type.TypeID.FLOAT && valueType.typeId() == Type.TypeID.DOUBLE) {
        changes.add(new ColumnChange(ColumnChange.Kind.WIDEN_TYPE, e.getKey(), Types.DoubleType.get()));
      } else {
        coerce(e.getKey(), column.type(), e.getValue());
      }
    }
    return changes;
  }

  /** The row of {@code schema} holding {@code row}; every needed change must have been applied. */
  public static GenericRecord bind(Schema schema, Map<String, FieldValue> row) throws InvalidRecordException {
    GenericRecord record = GenericRecord.create(schema);
    for (Map.Entry<String, FieldValue> e : row.entrySet()) {
      Types.NestedField column = schema.findField(e.getKey());
      if (column == null) {
        throw new IllegalStateException("column " + e.getKey() + " is missing; apply changesNeeded first");
      }
      record.setField(e.getKey(), coerce(e.getKey(), column.type(), e.getValue()));
    }
    return record;
  }

  private static Object coerce(String name, Type columnType, FieldValue v) throws InvalidRecordException {
    Object value = v.value();
    if (value == null) {
      return null;
    }
    Type.TypeID from = v.type().typeId();
    Type.TypeID to = columnType.typeId();
    if (from == to) {
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
    throw new InvalidRecordException("column " + name + " is " + columnType + " and cannot hold a " + v.type()
        + " value (" + value + "); Iceberg allows only int to long and float to double widening");
  }
}
