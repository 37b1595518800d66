package io.tidemark.metadata.record;

/**
 * Lifecycle of an object in storage: PREPARED (id reserved, expires unless committed) →
 * COMMITTED (readable) → MARKED_FOR_DELETION (replaced, trimmed or expired; physically deleted
 * after a delay) → removed from the metadata once the controller leader has deleted it.
 */
public enum ObjectState {
  PREPARED,
  COMMITTED,
  MARKED_FOR_DELETION;

  static ObjectState of(int code) {
    ObjectState[] all = values();
    if (code < 0 || code >= all.length) {
      throw new CorruptRecordException("unknown object state " + code);
    }
    return all[code];
  }
}
