package io.tidemark.registry.store;

/** The schema log could not be read or appended to; for an append, the outcome may be unknown and the registry re-reads the log. */
public class SchemaStoreException extends RuntimeException {
  public SchemaStoreException(String message, Throwable cause) {
    super(message, cause);
  }

  public SchemaStoreException(String message) {
    super(message);
  }
}
