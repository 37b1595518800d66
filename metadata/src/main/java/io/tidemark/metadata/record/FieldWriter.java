package io.tidemark.metadata.record;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * Writes the fields of one record body in order: fixed-width big-endian numbers, length-prefixed
 * UTF-8 strings and byte arrays (length -1 for null), counted lists. Maps are written in key
 * order so that equal records always encode to equal bytes.
 *
 * <p>Threading: one writer per encoding, not shared.
 */
public final class FieldWriter {
  private byte[] buf;
  private int pos;

  public FieldWriter() {
    this(64);
  }

  public FieldWriter(int initialCapacity) {
    buf = new byte[Math.max(16, initialCapacity)];
  }

  private void ensure(int n) {
    if (pos + n > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(buf.length * 2, pos + n));
    }
  }

  public FieldWriter writeByte(int v) {
    ensure(1);
    buf[pos++] = (byte) v;
    return this;
  }

  public FieldWriter writeBoolean(boolean v) {
    return writeByte(v ? 1 : 0);
  }

  public FieldWriter writeShort(int v) {
    ensure(2);
    buf[pos++] = (byte) (v >>> 8);
    buf[pos++] = (byte) v;
    return this;
  }

  public FieldWriter writeInt(int v) {
    ensure(4);
    for (int shift = 24; shift >= 0; shift -= 8) {
      buf[pos++] = (byte) (v >>> shift);
    }
    return this;
  }

  public FieldWriter writeLong(long v) {
    ensure(8);
    for (int shift = 56; shift >= 0; shift -= 8) {
      buf[pos++] = (byte) (v >>> shift);
    }
    return this;
  }

  public FieldWriter writeUuid(UUID v) {
    return writeLong(v.getMostSignificantBits()).writeLong(v.getLeastSignificantBits());
  }

  public FieldWriter writeBytes(byte[] v) {
    if (v == null) {
      return writeInt(-1);
    }
    writeInt(v.length);
    ensure(v.length);
    System.arraycopy(v, 0, buf, pos, v.length);
    pos += v.length;
    return this;
  }

  public FieldWriter writeString(String v) {
    return writeBytes(v == null ? null : v.getBytes(StandardCharsets.UTF_8));
  }

  public FieldWriter writeStringMap(Map<String, String> map) {
    Map<String, String> sorted = new TreeMap<>(map);
    writeInt(sorted.size());
    sorted.forEach((k, v) -> writeString(k).writeString(v));
    return this;
  }

  /** Reserves an int to be filled later with {@link #patchInt}; returns its position. */
  public int reserveInt() {
    int at = pos;
    writeInt(0);
    return at;
  }

  public void patchInt(int at, int v) {
    for (int i = 0; i < 4; i++) {
      buf[at + i] = (byte) (v >>> (24 - 8 * i));
    }
  }

  public int position() {
    return pos;
  }

  public byte[] toByteArray() {
    return Arrays.copyOf(buf, pos);
  }

  public ByteBuffer toByteBuffer() {
    return ByteBuffer.wrap(buf, 0, pos);
  }
}
