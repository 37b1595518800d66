package io.tidemark.stream.objectstore;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

/**
 * Checks of call arguments shared by every store, so that bad input is refused the same way
 * everywhere (with {@link IllegalArgumentException} in the returned future) and changes nothing.
 */
final class ObjectKeys {
  /** S3's limit on the UTF-8 length of a key. */
  static final int MAX_KEY_BYTES = 1024;

  private ObjectKeys() {}

  /** Null when {@code key} is usable, else the reason. */
  static String checkKey(String key) {
    if (key == null || key.isEmpty()) {
      return "object key must not be empty";
    }
    if (key.getBytes(StandardCharsets.UTF_8).length > MAX_KEY_BYTES) {
      return "object key longer than " + MAX_KEY_BYTES + " UTF-8 bytes: " + key.substring(0, 64) + "...";
    }
    return null;
  }

  /** Null when {@code [start, end)} is a usable range, else the reason. */
  static String checkRange(String key, long start, long end) {
    if (start < 0) {
      return "range start " + start + " is negative for " + key;
    }
    if (end != ObjectStorage.TO_END && end < start) {
      return "invalid range [" + start + ", " + end + ") for " + key;
    }
    return null;
  }

  static <T> CompletableFuture<T> invalid(String reason) {
    return CompletableFuture.failedFuture(new IllegalArgumentException(reason));
  }
}
