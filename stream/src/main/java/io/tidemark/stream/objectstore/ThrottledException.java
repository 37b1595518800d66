package io.tidemark.stream.objectstore;

/**
 * The store asked the caller to slow down (S3 {@code 503 SlowDown}, {@code 429 Too Many
 * Requests}) and still did after the retries; nothing was changed by the refused request, so
 * trying again later is safe.
 */
public class ThrottledException extends ObjectStorageException {
  public ThrottledException(String message) {
    super(message);
  }

  public ThrottledException(String message, Throwable cause) {
    super(message, cause);
  }
}
