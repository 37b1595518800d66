package io.tidemark.stream.objectstore;

import java.util.Map;
import java.util.TreeMap;

/**
 * A batch delete removed some keys but not all: {@link #failedKeys()} maps each key that may
 * still exist to the store's reason. Every key not listed was deleted (or was already absent).
 */
public class DeleteFailedException extends ObjectStorageException {
  private static final int KEYS_IN_MESSAGE = 5;

  private final Map<String, String> failedKeys;

  public DeleteFailedException(Map<String, String> failedKeys) {
    super(message(failedKeys));
    this.failedKeys = Map.copyOf(failedKeys);
  }

  /** Key to reason (error code and message) for every key that was not deleted. */
  public Map<String, String> failedKeys() {
    return failedKeys;
  }

  private static String message(Map<String, String> failedKeys) {
    StringBuilder sb = new StringBuilder()
        .append(failedKeys.size()).append(" key(s) not deleted; retry the delete for them: ");
    int shown = 0;
    for (Map.Entry<String, String> e : new TreeMap<>(failedKeys).entrySet()) {
      if (shown++ == KEYS_IN_MESSAGE) {
        sb.append(", ...");
        break;
      }
      sb.append(shown > 1 ? ", " : "").append(e.getKey()).append(" (").append(e.getValue()).append(')');
    }
    return sb.toString();
  }
}
