package io.tidemark.registry.schema;

/** A schema text is not a valid schema of its language; the message says where and why. */
public class InvalidSchemaException extends RuntimeException {
  public InvalidSchemaException(String message) {
    super(message);
  }

  public InvalidSchemaException(String message, Throwable cause) {
    super(message, cause);
  }
}
