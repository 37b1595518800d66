package io.tidemark.stream.wal;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Keys and bytes of an object WAL.
 *
 * <h2>Keys</h2>
 * Numbers are zero-padded to 20 digits so that listing returns them in numeric order.
 * <ul>
 *   <li>{@code wal/<node>/<epoch>/<firstOffset>-<lastOffset>}: a batch of records (offsets inclusive);</li>
 *   <li>{@code wal/<node>/fence/<epoch>}: written by a writer of that epoch before it lists for recovery;</li>
 *   <li>{@code wal/<node>/start/<epoch>/<offset>}: written after recovery; the writer of that epoch
 *       continues at {@code offset}, so no record of an older epoch at or above it is ever valid;</li>
 *   <li>{@code wal/<node>/trim/<offset>}: records below {@code offset} are trimmed.</li>
 * </ul>
 *
 * <h2>Batch object</h2>
 * A 68-byte header (big-endian) then, per record, its length (4 bytes) and payload:
 * <pre>
 *  0 magic "TMWALOBJ" 8     32 lastOffset   8     60 bodyCrc   4 (CRC32C of everything after the header)
 *  8 version          4     40 trimOffset   8     64 headerCrc 4 (CRC32C of bytes 0..63)
 * 12 nodeId           4     48 recordCount  4
 * 16 epoch            8     52 bodyLength   8
 * 24 firstOffset      8
 * </pre>
 * Marker objects carry a 28-byte body: magic "TMWALMRK", epoch, value, CRC32C; their meaning is in the key.
 */
final class WalObjectFormat {

  static final long MAGIC = 0x544D57414C4F424AL; // "TMWALOBJ"
  static final long MARKER_MAGIC = 0x544D57414C4D524BL; // "TMWALMRK"
  static final int VERSION = 1;
  static final int HEADER_BYTES = 68;

  private WalObjectFormat() {}

  static String nodePrefix(int nodeId) {
    return "wal/" + nodeId + "/";
  }

  static String fencePrefix(int nodeId) {
    return nodePrefix(nodeId) + "fence/";
  }

  static String batchKey(int nodeId, long epoch, long firstOffset, long lastOffset) {
    return nodePrefix(nodeId) + pad(epoch) + "/" + pad(firstOffset) + "-" + pad(lastOffset);
  }

  static String fenceKey(int nodeId, long epoch) {
    return fencePrefix(nodeId) + pad(epoch);
  }

  static String startKey(int nodeId, long epoch, long offset) {
    return nodePrefix(nodeId) + "start/" + pad(epoch) + "/" + pad(offset);
  }

  static String trimKey(int nodeId, long offset) {
    return nodePrefix(nodeId) + "trim/" + pad(offset);
  }

  static String pad(long value) {
    return String.format("%020d", value);
  }

  /** What a listed key under {@link #nodePrefix} is; {@code kind} is null for keys this log does not own. */
  record ParsedKey(Kind kind, long epoch, long offset, long lastOffset, String key) {}

  enum Kind { BATCH, FENCE, START, TRIM }

  static ParsedKey parse(int nodeId, String key) {
    String prefix = nodePrefix(nodeId);
    if (!key.startsWith(prefix)) {
      return new ParsedKey(null, 0, 0, 0, key);
    }
    String[] parts = key.substring(prefix.length()).split("/", -1);
    try {
      if (parts.length == 2 && parts[0].equals("fence") && digits(parts[1])) {
        return new ParsedKey(Kind.FENCE, Long.parseLong(parts[1]), 0, 0, key);
      }
      if (parts.length == 2 && parts[0].equals("trim") && digits(parts[1])) {
        return new ParsedKey(Kind.TRIM, 0, Long.parseLong(parts[1]), 0, key);
      }
      if (parts.length == 3 && parts[0].equals("start") && digits(parts[1]) && digits(parts[2])) {
        return new ParsedKey(Kind.START, Long.parseLong(parts[1]), Long.parseLong(parts[2]), 0, key);
      }
      if (parts.length == 2 && digits(parts[0]) && parts[1].length() == 41 && parts[1].charAt(20) == '-'
          && digits(parts[1].substring(0, 20)) && digits(parts[1].substring(21))) {
        long first = Long.parseLong(parts[1].substring(0, 20));
        long last = Long.parseLong(parts[1].substring(21));
        if (last >= first) {
          return new ParsedKey(Kind.BATCH, Long.parseLong(parts[0]), first, last, key);
        }
      }
    } catch (NumberFormatException e) {
      // falls through: not ours
    }
    return new ParsedKey(null, 0, 0, 0, key);
  }

  private static boolean digits(String s) {
    return s.length() == 20 && s.chars().allMatch(c -> c >= '0' && c <= '9');
  }

  static ByteBuffer encodeMarker(long epoch, long value) {
    ByteBuffer b = ByteBuffer.allocate(28).putLong(MARKER_MAGIC).putLong(epoch).putLong(value);
    b.putInt(crc(b.array(), 0, 24));
    return b.flip();
  }

  /** Encodes a batch of records with offsets {@code firstOffset ..}. */
  static ByteBuffer encodeBatch(int nodeId, long epoch, long firstOffset, long trimOffset, List<ByteBuffer> records) {
    long bodyLength = 0;
    for (ByteBuffer r : records) {
      bodyLength += 4 + r.remaining();
    }
    ByteBuffer b = ByteBuffer.allocate(Math.toIntExact(HEADER_BYTES + bodyLength));
    b.position(HEADER_BYTES);
    for (ByteBuffer r : records) {
      b.putInt(r.remaining()).put(r.duplicate());
    }
    b.putLong(0, MAGIC).putInt(8, VERSION).putInt(12, nodeId).putLong(16, epoch).putLong(24, firstOffset)
        .putLong(32, firstOffset + records.size() - 1).putLong(40, trimOffset).putInt(48, records.size())
        .putLong(52, bodyLength).putInt(60, crc(b.array(), HEADER_BYTES, (int) bodyLength));
    b.putInt(64, crc(b.array(), 0, 64));
    return b.position(0);
  }

  /** A decoded batch. */
  record Batch(int nodeId, long epoch, long firstOffset, long lastOffset, long trimOffset, List<ByteBuffer> records) {}

  /** Decodes a batch object; throws {@link WalException} naming the key when anything does not check out. */
  static Batch decodeBatch(String key, ByteBuffer data) {
    ByteBuffer b = data.slice();
    if (b.remaining() < HEADER_BYTES || b.getLong(0) != MAGIC || b.getInt(8) != VERSION) {
      throw corrupt(key, "not a WAL batch object (bad magic, version or size " + b.remaining() + ")");
    }
    byte[] head = new byte[64];
    b.get(0, head);
    if (crc(head, 0, 64) != b.getInt(64)) {
      throw corrupt(key, "header CRC mismatch");
    }
    int count = b.getInt(48);
    long bodyLength = b.getLong(52);
    if (count < 0 || bodyLength != b.remaining() - HEADER_BYTES) {
      throw corrupt(key, "body length " + bodyLength + " does not match the object size " + b.remaining());
    }
    byte[] body = new byte[(int) bodyLength];
    b.get(HEADER_BYTES, body);
    if (crc(body, 0, body.length) != b.getInt(60)) {
      throw corrupt(key, "body CRC mismatch");
    }
    ByteBuffer in = ByteBuffer.wrap(body);
    List<ByteBuffer> records = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      if (in.remaining() < 4) {
        throw corrupt(key, "truncated record " + i);
      }
      int length = in.getInt();
      if (length < 0 || length > in.remaining()) {
        throw corrupt(key, "record " + i + " length " + length + " exceeds the body");
      }
      byte[] payload = new byte[length];
      in.get(payload);
      records.add(ByteBuffer.wrap(payload));
    }
    long first = b.getLong(24);
    if (in.hasRemaining() || b.getLong(32) != first + count - 1) {
      throw corrupt(key, "record count and offsets disagree");
    }
    return new Batch(b.getInt(12), b.getLong(16), first, first + count - 1, b.getLong(40), records);
  }

  private static WalException corrupt(String key, String why) {
    return new WalException("WAL object " + key + " is corrupt: " + why);
  }

  static int crc(byte[] bytes, int offset, int length) {
    CRC32C crc = new CRC32C();
    crc.update(bytes, offset, length);
    return (int) crc.getValue();
  }
}
