package io.tidemark.table.convert;

import org.apache.iceberg.types.Type;

/**
 * A schema change a record needs before it can be written: a new optional column {@code name}
 * inside {@code parent} (null for a top-level column; a list's or map's parent path ends in
 * {@code .element} / {@code .value}), a column widened to {@code type}, or a required column made
 * optional. {@code type} is null for {@link Kind#MAKE_OPTIONAL}.
 */
public record ColumnChange(Kind kind, String parent, String name, Type type) {

  /** What the change does. */
  public enum Kind { ADD_COLUMN, WIDEN_TYPE, MAKE_OPTIONAL }

  /** The full dotted name of the column the change is about. */
  public String column() {
    return parent == null ? name : parent + "." + name;
  }

  @Override
  public String toString() {
    return switch (kind) {
      case ADD_COLUMN -> "add " + column() + " " + type;
      case WIDEN_TYPE -> "widen " + column() + " to " + type;
      case MAKE_OPTIONAL -> "make " + column() + " optional";
    };
  }
}
