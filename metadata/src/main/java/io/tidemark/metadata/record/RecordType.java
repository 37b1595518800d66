package io.tidemark.metadata.record;

/**
 * Stable ids and current versions of record types. An id is never reused; a version grows when
 * a field is appended (never when one is removed or reordered).
 */
public enum RecordType {
  BROKER_REGISTRATION(1, 2),
  BROKER_FENCING(2, 1),
  TOPIC(3, 1),
  REMOVE_TOPIC(4, 1),
  PARTITION(5, 2),
  CONFIG(6, 1),
  STREAM(7, 1),
  STREAM_END_OFFSETS(8, 1),
  REMOVE_STREAM(9, 1),
  STORAGE_OBJECT(10, 1),
  REMOVE_OBJECT(11, 1),
  NEXT_ID(12, 1),
  PRODUCER_ID_BLOCK(13, 1),
  KEY_VALUE(14, 1),
  USER_SCRAM_CREDENTIAL(30, 1),
  REMOVE_USER_SCRAM_CREDENTIAL(31, 1),
  ACCESS_CONTROL_ENTRY(35, 1),
  REMOVE_ACCESS_CONTROL_ENTRY(36, 1);

  private final short id;
  private final short version;

  RecordType(int id, int version) {
    this.id = (short) id;
    this.version = (short) version;
  }

  public short id() {
    return id;
  }

  public short currentVersion() {
    return version;
  }

  public static RecordType ofId(int id) {
    for (RecordType t : values()) {
      if (t.id == id) {
        return t;
      }
    }
    throw new CorruptRecordException("unknown record type id " + id);
  }
}
