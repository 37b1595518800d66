package io.tidemark.table.convert;

/**
 * Converting a record failed for a reason other than its data (a schema registry that cannot be
 * reached, a converter not available). Skipped only under {@code errors.tolerance=all}.
 */
public final class ConversionFailedException extends Exception {
  public ConversionFailedException(String message, Throwable cause) {
    super(message, cause);
  }
}
