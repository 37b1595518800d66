package io.tidemark.table.sync;

import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.convert.ColumnChange;
import io.tidemark.table.convert.FieldValue;
import io.tidemark.table.convert.InvalidRecordException;
import io.tidemark.table.convert.KafkaColumns;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.types.Types;

/**
 * The rules of an upsert table's rows and schema, apart from the writing: which columns are the
 * ids, which rows may be written (every id column has a value), what a delete keeps of its row,
 * and when the id columns become the schema's identifier fields (Iceberg wants them required, so
 * only id columns that are required primitives qualify: the key column of a table created for
 * upsert, and value id columns created in a table with no rows yet). Stateless.
 */
final class UpsertRows {

  private UpsertRows() {}

  /** The id columns: the configured ones, or {@code _kafka_key}. */
  static List<String> idColumns(TableTopicConfig.Upsert upsert) {
    return upsert.idIsKey() ? List.of(KafkaColumns.KEY) : upsert.idColumns();
  }

  /**
   * The schema a new upsert table starts with: {@code base}, with a primitive {@code _kafka_key}
   * made required and the identifier field when the key is the id.
   */
  static Schema initialSchema(Schema base, TableTopicConfig.Upsert upsert) {
    Types.NestedField key = base.findField(KafkaColumns.KEY);
    if (!upsert.idIsKey() || key == null || !key.type().isPrimitiveType()) {
      return base;
    }
    List<Types.NestedField> fields = new ArrayList<>();
    for (Types.NestedField f : base.columns()) {
      fields.add(f.fieldId() == key.fieldId() ? Types.NestedField.required(f.fieldId(), f.name(), f.type()) : f);
    }
    return new Schema(fields, Set.of(key.fieldId()));
  }

  /**
   * {@code row} if every id column has a value; for a delete, only the Kafka columns and the ids.
   *
   * @throws InvalidRecordException naming the id column without a value
   */
  static Map<String, FieldValue> checked(Map<String, FieldValue> row, TableTopicConfig.Upsert upsert, boolean delete)
      throws InvalidRecordException {
    for (String id : idColumns(upsert)) {
      FieldValue v = row.get(id);
      if (v == null || v.value() == null) {
        throw new InvalidRecordException(id.equals(KafkaColumns.KEY) ? "an upsert table needs a key (the id) on every record"
            : "the value has no id column " + id + " (" + TableTopicConfig.ID_COLUMNS + "=" + upsert.idColumns() + ")");
      }
    }
    if (!delete) {
      return row;
    }
    Map<String, FieldValue> kept = new LinkedHashMap<>();
    for (Map.Entry<String, FieldValue> e : row.entrySet()) {
      if (e.getKey().startsWith(KafkaColumns.PREFIX) || upsert.idColumns().contains(e.getKey())) {
        kept.put(e.getKey(), e.getValue());
      }
    }
    kept.remove(KafkaColumns.VALUE);
    return kept;
  }

  /**
   * The id of a converted row (checked by {@link #checked}) as a value that compares equal for equal ids: numbers
   * widened, strings and byte arrays by content, structs by field name.
   */
  static List<Object> idKey(Map<String, FieldValue> row, TableTopicConfig.Upsert upsert) {
    List<Object> key = new ArrayList<>();
    for (String id : idColumns(upsert)) {
      key.add(normalized(row.get(id).value()));
    }
    return key;
  }

  private static Object normalized(Object v) {
    return switch (v) {
      case Integer i -> i.longValue();
      case Float f -> f.doubleValue();
      case java.math.BigDecimal d -> d.stripTrailingZeros();
      case CharSequence cs -> cs.toString();
      case byte[] b -> java.nio.ByteBuffer.wrap(b);
      case Map<?, ?> m -> {
        Map<String, Object> out = new java.util.TreeMap<>();
        m.forEach((k, x) -> out.put(String.valueOf(k), normalized(x instanceof FieldValue fv ? fv.value() : x)));
        yield out;
      }
      case List<?> l -> l.stream().map(UpsertRows::normalized).toList();
      case null, default -> v;
    };
  }

  /** Whether the table holds no rows (a new table): its id columns can still be created required. */
  static boolean holdsNoRows(Table table) {
    Snapshot s = table.currentSnapshot();
    return s == null || "0".equals(s.summary().getOrDefault(SnapshotSummary.TOTAL_RECORDS_PROP, "0"));
  }

  /**
   * Sets the identifier fields in {@code update} when, after {@code changes}, every id column is a
   * required primitive and they are not the identifier fields yet.
   */
  static void identifierFieldsAfter(UpdateSchema update, Schema before, List<ColumnChange> changes, List<String> ids,
      boolean empty) {
    if (before.identifierFieldNames().containsAll(ids) && before.identifierFieldNames().size() == ids.size()) {
      return;
    }
    for (String id : ids) {
      Types.NestedField f = before.findField(id);
      boolean ok = f != null ? f.isRequired() && f.type().isPrimitiveType()
          : empty && changes.stream().anyMatch(c -> c.kind() == ColumnChange.Kind.ADD_COLUMN && c.parent() == null
              && c.name().equals(id) && c.type().isPrimitiveType());
      if (!ok) {
        return;
      }
    }
    update.setIdentifierFields(ids);
  }
}
