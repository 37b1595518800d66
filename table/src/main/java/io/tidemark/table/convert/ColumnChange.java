package io.tidemark.table.convert;

import org.apache.iceberg.types.Type;

/** A schema change a record needs before it can be written: a new optional column, or a column widened to {@code type}. */
public record ColumnChange(Kind kind, String column, Type type) {

  /** What the change does. */
  public enum Kind { ADD_COLUMN, WIDEN_TYPE }
}
