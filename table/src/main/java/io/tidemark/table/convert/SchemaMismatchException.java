package io.tidemark.table.convert;

/**
 * A row was about to be bound to, or written with, a schema that lacks one of its columns (or holds
 * it with another type): writing it would drop the value silently. Never the record's fault (the
 * table is evolved before every write), so never skipped as bad data: the round fails and is redone.
 */
public final class SchemaMismatchException extends IllegalStateException {
  public SchemaMismatchException(String message) {
    super(message);
  }
}
