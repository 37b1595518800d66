package io.tidemark.stream.wal;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The framing of one record in a block WAL's data area. Records are laid out back to back in
 * the <em>logical</em> address space (a byte position that only grows; the physical position is
 * {@code dataStart + logical % dataCapacity}), so a record may wrap around the physical end of
 * the circular area: reads and writes split at the boundary.
 *
 * <p>Encoding (big-endian), followed by {@code length} payload bytes:
 * <pre>
 *  0 magic "TMWR"       4      24 session      8  (header sequence of the writing session)
 *  4 headerCrc          4      32 length       4
 *  8 offset (logical)   8      36 payloadCrc   4  (CRC32C)
 * 16 next (logical)     8      40 flags        4  (bit 0: last record of a group commit)
 * </pre>
 * {@code headerCrc} is the CRC32C of the log's format id followed by bytes 8..43, so a record
 * written under an earlier format of the same file never validates. {@code offset} is the
 * record's own logical position, which is also its WAL offset: a record left over from an earlier
 * lap of the circle sits at a position whose expected offset is larger by a multiple of the
 * capacity and is rejected. {@code next} is where the following record starts: right after this
 * one, or, for the last record of a group commit, rounded up to the next block (the padding).
 */
final class BlockRecordFrame {

  static final int MAGIC = 0x544D5752; // "TMWR"
  static final int HEADER_BYTES = 44;
  static final int FLAG_BATCH_END = 1;

  private BlockRecordFrame() {}

  /** Writes the frame header and payload at {@code dst}'s position, advancing it. */
  static void encode(ByteBuffer dst, long formatId, long offset, long next, long session, ByteBuffer payload, int flags) {
    encode(dst, formatId, offset, next, session, EMPTY, payload, flags);
  }

  private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

  /** As {@link #encode(ByteBuffer, long, long, long, long, ByteBuffer, int)} with the payload {@code head} then {@code body}. */
  static void encode(ByteBuffer dst, long formatId, long offset, long next, long session, ByteBuffer head,
      ByteBuffer body, int flags) {
    int start = dst.position();
    int length = head.remaining() + body.remaining();
    dst.position(start + HEADER_BYTES);
    dst.put(head.duplicate());
    dst.put(body.duplicate());
    // The CRC is taken over the bytes as copied into dst (the one copy), whatever kind of buffer the payload is.
    CRC32C payloadCrc = new CRC32C();
    payloadCrc.update(dst.slice(start + HEADER_BYTES, length));
    int end = dst.position();
    dst.position(start);
    dst.putInt(MAGIC).putInt(0).putLong(offset).putLong(next).putLong(session).putInt(length)
        .putInt((int) payloadCrc.getValue()).putInt(flags);
    dst.putInt(start + 4, headerCrc(formatId, dst, start));
    dst.position(end);
  }

  static int headerCrc(long formatId, ByteBuffer frame, int frameStart) {
    CRC32C crc = new CRC32C();
    crc.update(ByteBuffer.allocate(8).putLong(0, formatId));
    crc.update(frame.slice(frameStart + 8, HEADER_BYTES - 8));
    return (int) crc.getValue();
  }

  static int payloadCrc(byte[] payload) {
    CRC32C crc = new CRC32C();
    crc.update(payload, 0, payload.length);
    return (int) crc.getValue();
  }

  /** A decoded frame header; {@link #decode} returns null for anything not a valid header. */
  record Header(long offset, long next, long session, int length, int payloadCrc, int flags) {
    boolean batchEnd() {
      return (flags & FLAG_BATCH_END) != 0;
    }
  }

  /** Decodes the {@link #HEADER_BYTES} at {@code frame}'s start; null when magic or CRC do not match. */
  static Header decode(ByteBuffer frame, long formatId) {
    if (frame.getInt(0) != MAGIC || frame.getInt(4) != headerCrc(formatId, frame, 0)) {
      return null;
    }
    return new Header(frame.getLong(8), frame.getLong(16), frame.getLong(24), frame.getInt(32),
        frame.getInt(36), frame.getInt(40));
  }
}
