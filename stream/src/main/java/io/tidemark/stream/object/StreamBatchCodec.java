package io.tidemark.stream.object;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The binary form of a {@link StreamRecordBatch}, used for WAL records and inside object data
 * blocks. Big-endian, 37-byte header then the payload:
 *
 * <pre>
 *   magic        u8   0xB7
 *   streamId     i64
 *   epoch        i64
 *   baseOffset   i64
 *   recordCount  i32  (>= 1)
 *   payloadLen   i32  (>= 0)
 *   crc32c       i32  over the 33 header bytes before it, then the payload
 *   payload      payloadLen bytes
 * </pre>
 *
 * Stateless and thread-safe.
 */
public final class StreamBatchCodec {

  /** Encoded header size in bytes. */
  public static final int HEADER_BYTES = 37;

  static final byte MAGIC = (byte) 0xB7;
  private static final int CRC_POSITION = 33;

  private StreamBatchCodec() {}

  /** Encodes one batch into a new heap buffer (position 0, limit = encoded size). */
  public static ByteBuffer encode(StreamRecordBatch batch) {
    ByteBuffer out = ByteBuffer.allocate(batch.encodedBytes());
    encodeTo(batch, out);
    return out.flip();
  }

  /**
   * Encodes only the {@link #HEADER_BYTES}-byte header of one batch (its CRC taken over the
   * payload in place) into a new heap buffer: the header followed by {@code batch.payload()} is
   * exactly {@link #encode}'s output, without copying the payload (the WAL writes both parts).
   */
  public static ByteBuffer encodeHeader(StreamRecordBatch batch) {
    ByteBuffer out = ByteBuffer.allocate(HEADER_BYTES);
    putHeader(batch, out, batch.payload().duplicate());
    return out.flip();
  }

  /** Encodes one batch at {@code out}'s position, advancing it. */
  public static void encodeTo(StreamRecordBatch batch, ByteBuffer out) {
    ByteBuffer payload = batch.payload().duplicate();
    putHeader(batch, out, payload);
    out.put(payload);
  }

  private static void putHeader(StreamRecordBatch batch, ByteBuffer out, ByteBuffer payload) {
    int start = out.position();
    out.put(MAGIC)
        .putLong(batch.streamId())
        .putLong(batch.epoch())
        .putLong(batch.baseOffset())
        .putInt(batch.recordCount())
        .putInt(payload.remaining());
    CRC32C crc = new CRC32C();
    crc.update(out.duplicate().position(start).limit(start + CRC_POSITION));
    crc.update(payload.duplicate());
    out.putInt((int) crc.getValue());
  }

  /**
   * Decodes the batch at {@code in}'s position and advances past it. The payload is a read-only
   * slice of {@code in} (no copy). Throws {@link CorruptBatchException} and leaves the position
   * unchanged when the bytes are not a valid batch.
   */
  public static StreamRecordBatch decode(ByteBuffer in) {
    int start = in.position();
    if (in.remaining() < HEADER_BYTES) {
      throw new CorruptBatchException("truncated batch header: " + in.remaining() + " bytes left, need " + HEADER_BYTES);
    }
    byte magic = in.get(start);
    if (magic != MAGIC) {
      throw new CorruptBatchException(String.format("bad batch magic 0x%02x at position %d", magic & 0xff, start));
    }
    long streamId = in.getLong(start + 1);
    long epoch = in.getLong(start + 9);
    long baseOffset = in.getLong(start + 17);
    int recordCount = in.getInt(start + 25);
    int payloadLength = in.getInt(start + 29);
    int storedCrc = in.getInt(start + CRC_POSITION);
    if (recordCount < 1 || payloadLength < 0 || baseOffset < 0) {
      throw new CorruptBatchException("invalid batch header at position " + start + ": recordCount " + recordCount
          + ", payload length " + payloadLength + ", base offset " + baseOffset);
    }
    if (in.remaining() - HEADER_BYTES < payloadLength) {
      throw new CorruptBatchException("truncated batch payload at position " + start + ": need " + payloadLength
          + " bytes, " + (in.remaining() - HEADER_BYTES) + " left");
    }
    int payloadStart = start + HEADER_BYTES;
    ByteBuffer payload = in.duplicate().position(payloadStart).limit(payloadStart + payloadLength).slice();
    CRC32C crc = new CRC32C();
    crc.update(in.duplicate().position(start).limit(start + CRC_POSITION));
    crc.update(payload.duplicate());
    if ((int) crc.getValue() != storedCrc) {
      throw new CorruptBatchException("batch CRC mismatch at position " + start + " (stream " + streamId
          + ", base offset " + baseOffset + ")");
    }
    in.position(payloadStart + payloadLength);
    return new StreamRecordBatch(streamId, epoch, baseOffset, recordCount, payload.asReadOnlyBuffer());
  }
}
