package io.tidemark.table.convert;

/**
 * A record's bytes do not convert into the table's columns (undecodable, wrong type, a type
 * change Iceberg cannot apply). Skipped and counted under {@code invalid_data} and {@code all};
 * pauses the partition under {@code none}.
 */
public final class InvalidRecordException extends Exception {
  public InvalidRecordException(String message) {
    super(message);
  }

  public InvalidRecordException(String message, Throwable cause) {
    super(message, cause);
  }
}
