package io.tidemark.table.convert;

import org.apache.iceberg.types.Type;

/**
 * One converted column value with the Iceberg type inferred from the data ({@code value} is in
 * Iceberg's generic representation for {@code type}; null for a null value).
 */
public record FieldValue(Type type, Object value) {}
