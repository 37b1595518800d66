package io.tidemark.table.convert;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** Goal: the binder's evolution decisions at the edges: the column bound, decimal scale, nested list elements. */
class ColumnBinderTest {

  @Test
  void newColumnsStopAtTheFieldIdBound() throws Exception {
    // goal: a table at the bound takes values of known columns but refuses new ones
    Schema full = new Schema(Types.NestedField.optional(ColumnBinder.MAX_FIELD_ID, "x", Types.IntegerType.get()));
    assertThat(ColumnBinder.changesNeeded(full, Map.of("x", new FieldValue(Types.IntegerType.get(), 1)), true)).isEmpty();
    assertThatThrownBy(() -> ColumnBinder.changesNeeded(full, Map.of("y", new FieldValue(Types.IntegerType.get(), 1)), true))
        .isInstanceOf(InvalidRecordException.class).hasMessageContaining("10000 field ids");
  }

  @Test
  void decimalPrecisionWidensButScaleChangesAreRefused() throws Exception {
    // goal: decimal(9,2) → decimal(12,2) is a widening; decimal(9,3) for a decimal(9,2) column is invalid data
    Schema s = new Schema(Types.NestedField.optional(1, "d", Types.DecimalType.of(9, 2)));
    assertThat(ColumnBinder.changesNeeded(s, Map.of("d", new FieldValue(Types.DecimalType.of(12, 2), null))))
        .singleElement().satisfies(c -> {
          assertThat(c.kind()).isEqualTo(ColumnChange.Kind.WIDEN_TYPE);
          assertThat(c.type()).isEqualTo(Types.DecimalType.of(12, 2));
        });
    assertThat(ColumnBinder.changesNeeded(s, Map.of("d", new FieldValue(Types.DecimalType.of(5, 2), null)))).isEmpty();
    assertThatThrownBy(() -> ColumnBinder.changesNeeded(s, Map.of("d", new FieldValue(Types.DecimalType.of(9, 3), null))))
        .isInstanceOf(InvalidRecordException.class);
  }

  @Test
  void structsInsideListsGainFieldsThroughTheElementPath() throws Exception {
    // goal: a new field of a list's struct element is added under "<list>.element"; strings never take numbers in strict mode
    Schema s = new Schema(Types.NestedField.optional(1, "l", Types.ListType.ofOptional(2,
        Types.StructType.of(Types.NestedField.optional(3, "a", Types.StringType.get())))));
    FieldValue v = new FieldValue(Types.ListType.ofOptional(9, Types.StructType.of(
        Types.NestedField.optional(10, "a", Types.StringType.get()), Types.NestedField.optional(11, "b", Types.LongType.get()))),
        null);
    assertThat(ColumnBinder.changesNeeded(s, Map.of("l", v))).singleElement().satisfies(c -> {
      assertThat(c.kind()).isEqualTo(ColumnChange.Kind.ADD_COLUMN);
      assertThat(c.parent()).isEqualTo("l.element");
      assertThat(c.name()).isEqualTo("b");
    });
    FieldValue numberForString = new FieldValue(Types.ListType.ofOptional(9, Types.StructType.of(
        Types.NestedField.optional(10, "a", Types.LongType.get()))), null);
    assertThatThrownBy(() -> ColumnBinder.changesNeeded(s, Map.of("l", numberForString)))
        .isInstanceOf(InvalidRecordException.class).hasMessageContaining("column l.element.a is string");
  }

  @Test
  void aRowIsNeverBoundToASchemaMissingOneOfItsColumnsAtAnyDepth() {
    // goal: binding to a schema without one of the row's columns (top level or nested) is an error, never a dropped value
    Schema s = new Schema(Types.NestedField.optional(1, "a", Types.StringType.get()),
        Types.NestedField.optional(2, "m", Types.StructType.of(Types.NestedField.optional(3, "x", Types.StringType.get()))));
    assertThatThrownBy(() -> ColumnBinder.bind(s, Map.of("note", new FieldValue(Types.StringType.get(), "n"))))
        .isInstanceOf(SchemaMismatchException.class).hasMessageContaining("column note");
    FieldValue nested = new FieldValue(Types.StructType.of(Types.NestedField.optional(8, "x", Types.StringType.get()),
        Types.NestedField.optional(9, "y", Types.StringType.get())), Map.of("x", "1", "y", "2"));
    assertThatThrownBy(() -> ColumnBinder.bind(s, Map.of("m", nested)))
        .isInstanceOf(SchemaMismatchException.class).hasMessageContaining("column m.y");
  }
}
