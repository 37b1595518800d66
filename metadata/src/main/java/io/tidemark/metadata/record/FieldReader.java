package io.tidemark.metadata.record;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * Reads the fields of one record body written by {@link FieldWriter}. The evolution rule lives
 * here: a field added at the end of a record in a later version is read with an {@code ...Or}
 * method, which returns the given default when an older writer's body has already ended. Bytes
 * left after the last field this reader knows (written by a newer version) are skipped by the
 * caller. A body that ends inside a field, or a negative length, is corrupt.
 *
 * <p>Threading: one reader per decoding, not shared.
 */
public final class FieldReader {
  private final ByteBuffer body;

  public FieldReader(ByteBuffer body) {
    this.body = body;
  }

  public boolean hasMore() {
    return body.hasRemaining();
  }

  public int remaining() {
    return body.remaining();
  }

  public byte readByte() {
    return get(() -> body.get());
  }

  public boolean readBoolean() {
    return readByte() != 0;
  }

  public short readShort() {
    return get(body::getShort);
  }

  public int readInt() {
    return get(body::getInt);
  }

  public long readLong() {
    return get(body::getLong);
  }

  public UUID readUuid() {
    return new UUID(readLong(), readLong());
  }

  /** A field added in a later version: the default when the body ends before it. */
  public long readLongOr(long fallback) {
    return hasMore() ? readLong() : fallback;
  }

  public int readIntOr(int fallback) {
    return hasMore() ? readInt() : fallback;
  }

  public String readStringOr(String fallback) {
    return hasMore() ? readString() : fallback;
  }

  public byte[] readBytes() {
    int len = readInt();
    if (len == -1) {
      return null;
    }
    if (len < -1 || len > body.remaining()) {
      throw new CorruptRecordException("field length " + len + " with " + body.remaining() + " bytes left");
    }
    byte[] out = new byte[len];
    body.get(out);
    return out;
  }

  public String readString() {
    byte[] b = readBytes();
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  /** A count of list elements; each element takes at least {@code minElementBytes}. */
  public int readCount(int minElementBytes) {
    int n = readInt();
    if (n < 0 || (long) n * minElementBytes > body.remaining()) {
      throw new CorruptRecordException("list count " + n + " with " + body.remaining() + " bytes left");
    }
    return n;
  }

  public Map<String, String> readStringMap() {
    int n = readCount(8);
    Map<String, String> map = new TreeMap<>();
    for (int i = 0; i < n; i++) {
      map.put(readString(), readString());
    }
    return map;
  }

  private interface Getter<T> {
    T get();
  }

  private <T> T get(Getter<T> getter) {
    try {
      return getter.get();
    } catch (BufferUnderflowException e) {
      throw new CorruptRecordException("record body ended inside a field");
    }
  }
}
