package io.tidemark.stream.object;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * One decoded data block: the index entry that located it and its batches (payloads are slices
 * of the block's bytes). Immutable; safe to share between readers (e.g. in a block cache).
 */
public record DataBlock(IndexEntry entry, List<StreamRecordBatch> batches) {

  public DataBlock {
    batches = List.copyOf(batches);
  }

  /** Bytes this block occupies in the object (and roughly in memory). */
  public int sizeBytes() {
    return entry.blockSizeBytes();
  }

  /**
   * Validates and decodes the bytes of the block described by {@code entry} of object {@code key}.
   * Throws {@link CorruptObjectException} naming the key on any mismatch.
   */
  public static DataBlock decode(String key, IndexEntry entry, ByteBuffer bytes) {
    ByteBuffer in = bytes.duplicate();
    if (in.remaining() != entry.blockSizeBytes()) {
      throw new CorruptObjectException(key, "truncated block at position " + entry.blockPosition() + ": got "
          + in.remaining() + " of " + entry.blockSizeBytes() + " bytes");
    }
    if (in.remaining() < ObjectFormat.BLOCK_HEADER_BYTES) {
      throw new CorruptObjectException(key, "block at position " + entry.blockPosition() + " is smaller than its header");
    }
    int start = in.position();
    int magic = in.getInt(start);
    long streamId = in.getLong(start + 4);
    int batchCount = in.getInt(start + 12);
    int dataLength = in.getInt(start + 16);
    int storedCrc = in.getInt(start + 20);
    if (magic != ObjectFormat.BLOCK_MAGIC) {
      throw new CorruptObjectException(key, String.format("bad block magic 0x%08x at position %d", magic,
          entry.blockPosition()));
    }
    if (streamId != entry.streamId() || dataLength != entry.blockSizeBytes() - ObjectFormat.BLOCK_HEADER_BYTES
        || batchCount < 1) {
      throw new CorruptObjectException(key, "block at position " + entry.blockPosition() + " (stream " + streamId
          + ", " + batchCount + " batches, " + dataLength + " bytes) disagrees with its index entry " + entry);
    }
    ByteBuffer data = in.position(start + ObjectFormat.BLOCK_HEADER_BYTES).slice();
    CRC32C crc = new CRC32C();
    crc.update(data.duplicate());
    if ((int) crc.getValue() != storedCrc) {
      throw new CorruptObjectException(key, "block CRC mismatch at position " + entry.blockPosition()
          + " (stream " + streamId + ")");
    }
    List<StreamRecordBatch> batches = new ArrayList<>(batchCount);
    int records = 0;
    try {
      for (int i = 0; i < batchCount; i++) {
        StreamRecordBatch b = StreamBatchCodec.decode(data);
        if (b.streamId() != streamId) {
          throw new CorruptObjectException(key, "block at position " + entry.blockPosition() + " of stream "
              + streamId + " holds a batch of stream " + b.streamId());
        }
        records += b.recordCount();
        batches.add(b);
      }
    } catch (CorruptBatchException e) {
      throw new CorruptObjectException(key, "block at position " + entry.blockPosition() + ": " + e.getMessage(), e);
    }
    if (data.hasRemaining() || records != entry.recordCount()
        || batches.getFirst().baseOffset() != entry.startOffset()
        || batches.getLast().nextOffset() != entry.endOffset()) {
      throw new CorruptObjectException(key, "block at position " + entry.blockPosition()
          + " content disagrees with its index entry " + entry);
    }
    return new DataBlock(entry, batches);
  }
}
