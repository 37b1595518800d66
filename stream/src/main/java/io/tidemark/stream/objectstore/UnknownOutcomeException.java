package io.tidemark.stream.objectstore;

/**
 * The request may or may not have taken effect (for example it timed out after being sent).
 * Callers must reconcile by reading the store, never assume either outcome.
 */
public class UnknownOutcomeException extends ObjectStorageException {
  public UnknownOutcomeException(String message, Throwable cause) {
    super(message, cause);
  }
}
