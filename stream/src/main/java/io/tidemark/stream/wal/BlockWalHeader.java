package io.tidemark.stream.wal;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * One header slot of a block WAL. The file starts with two slots of one block each; writes
 * alternate between them and the valid one with the higher {@code sequence} wins, so a torn
 * header write always leaves the previous header intact.
 *
 * <p>Encoding (big-endian, then zeros to the end of the block):
 * <pre>
 *  0 magic "TMWALHDR"   8      48 sequence      8
 *  8 version            4      56 scanStart     8  (batch boundary where recovery starts)
 * 12 blockSize          4      64 trimOffset    8  (records below it are not returned)
 * 16 capacity           8      72 nextWriteHint 8  (write position when this header was written)
 * 24 formatId           8      80 crc32c        4  (of bytes 0..79)
 * 32 writerId (node)    8
 * 40 epoch              8
 * </pre>
 *
 * @param formatId chosen when the file is formatted; seeds every record CRC so that records of
 *     an earlier format of the same file never validate
 */
record BlockWalHeader(
    int blockSize,
    long capacityBytes,
    long formatId,
    long writerId,
    long epoch,
    long sequence,
    long scanStart,
    long trimOffset,
    long nextWriteHint) {

  static final long MAGIC = 0x544D57414C484452L; // "TMWALHDR"
  static final int VERSION = 1;
  static final int ENCODED_BYTES = 84;

  /** Writes this header into {@code block} (cleared, one whole block). */
  void encode(ByteBuffer block) {
    block.clear();
    while (block.hasRemaining()) {
      block.put((byte) 0);
    }
    block.clear();
    block.putLong(MAGIC).putInt(VERSION).putInt(blockSize).putLong(capacityBytes).putLong(formatId)
        .putLong(writerId).putLong(epoch).putLong(sequence).putLong(scanStart).putLong(trimOffset)
        .putLong(nextWriteHint);
    block.putInt(crc(block, ENCODED_BYTES - 4));
    block.clear();
  }

  /** The header in {@code block}, or null when the slot holds no valid header (never throws). */
  static BlockWalHeader decode(ByteBuffer block) {
    if (block.remaining() < ENCODED_BYTES) {
      return null;
    }
    ByteBuffer b = block.duplicate();
    int base = b.position();
    if (b.getLong(base) != MAGIC || b.getInt(base + 8) != VERSION) {
      return null;
    }
    ByteBuffer region = b.slice(base, ENCODED_BYTES);
    if (crc(region, ENCODED_BYTES - 4) != region.getInt(ENCODED_BYTES - 4)) {
      return null;
    }
    BlockWalHeader header = new BlockWalHeader(region.getInt(12), region.getLong(16), region.getLong(24),
        region.getLong(32), region.getLong(40), region.getLong(48), region.getLong(56), region.getLong(64),
        region.getLong(72));
    boolean sane = header.blockSize >= 512 && Integer.bitCount(header.blockSize) == 1
        && header.capacityBytes >= 4L * header.blockSize
        && header.scanStart >= 0 && header.trimOffset >= header.scanStart && header.nextWriteHint >= header.scanStart
        && header.scanStart % header.blockSize == 0;
    return sane ? header : null;
  }

  /** True when the first {@code ENCODED_BYTES} of the slot are all zero (never written). */
  static boolean blank(ByteBuffer block) {
    for (int i = 0; i < ENCODED_BYTES; i++) {
      if (block.get(block.position() + i) != 0) {
        return false;
      }
    }
    return true;
  }

  BlockWalHeader next(long newEpoch, long newScanStart, long newTrimOffset, long newHint) {
    return new BlockWalHeader(blockSize, capacityBytes, formatId, writerId, newEpoch, sequence + 1,
        newScanStart, newTrimOffset, newHint);
  }

  private static int crc(ByteBuffer buffer, int length) {
    CRC32C crc = new CRC32C();
    crc.update(buffer.slice(0, length));
    return (int) crc.getValue();
  }
}
