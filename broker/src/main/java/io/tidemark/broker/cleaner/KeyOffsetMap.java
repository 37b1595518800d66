package io.tidemark.broker.cleaner;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The cleaner's bounded map from a record key to the offset of its latest record, as Kafka's
 * {@code SkimpyOffsetMap}: a key is kept as its 16-byte MD5 digest, so an entry takes 24 bytes
 * whatever the key's size, in an open-addressing table sized from a byte budget
 * ({@code kafka.log.cleaner.dedupe.buffer.bytes}) and filled to at most 90%. Two keys with the same
 * digest would count as one (probability about 2^-128 per pair, the risk Kafka takes too).
 * Not thread-safe: one cleaner pass owns it at a time.
 */
final class KeyOffsetMap {

  static final int BYTES_PER_ENTRY = 24;
  private static final double MAX_LOAD = 0.9;

  private final long[] hashHigh;
  private final long[] hashLow;
  private final long[] offsets;
  private final int capacity;
  private final MessageDigest md5;
  private int size;

  KeyOffsetMap(long bufferBytes) {
    int slots = (int) Math.max(2, Math.min(Integer.MAX_VALUE - 8, bufferBytes / BYTES_PER_ENTRY));
    hashHigh = new long[slots];
    hashLow = new long[slots];
    offsets = new long[slots];
    java.util.Arrays.fill(offsets, -1);
    capacity = Math.max(1, (int) (slots * MAX_LOAD));
    try {
      md5 = MessageDigest.getInstance("MD5");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no MD5", e);
    }
  }

  /** Keys it can still take before it is full. */
  int remaining() {
    return capacity - size;
  }

  int size() {
    return size;
  }

  /** Sets the key's latest offset (a later put of the same key replaces it); false when full and the key is new. */
  boolean put(byte[] key, long offset) {
    byte[] d = md5.digest(key);
    long hi = longAt(d, 0);
    long lo = longAt(d, 8);
    int slot = slotOf(hi, lo);
    if (offsets[slot] >= 0) {
      offsets[slot] = offset;
      return true;
    }
    if (size >= capacity) {
      return false;
    }
    hashHigh[slot] = hi;
    hashLow[slot] = lo;
    offsets[slot] = offset;
    size++;
    return true;
  }

  /** The latest offset put for the key, or -1. */
  long get(byte[] key) {
    byte[] d = md5.digest(key);
    return offsets[slotOf(longAt(d, 0), longAt(d, 8))];
  }

  /** The slot holding this digest, or the empty slot where it would go (linear probing; never full). */
  private int slotOf(long hi, long lo) {
    int n = offsets.length;
    int slot = (int) Math.floorMod(lo ^ (lo >>> 29), (long) n);
    while (offsets[slot] >= 0 && (hashHigh[slot] != hi || hashLow[slot] != lo)) {
      slot = slot + 1 == n ? 0 : slot + 1;
    }
    return slot;
  }

  private static long longAt(byte[] b, int from) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (b[from + i] & 0xff);
    }
    return v;
  }
}
