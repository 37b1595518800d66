package io.tidemark.stream.object;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Builds one object (layout in {@link ObjectFormat}) from batches appended in (stream, offset)
 * order. Consecutive batches of one stream fill a data block until it reaches the block size
 * (a single larger batch gets a block of its own); a new stream always starts a new block, and so
 * does a batch whose records would take the block's record count (an int in the index) past
 * {@link Integer#MAX_VALUE}.
 *
 * <p>States: OPEN (accepts {@link #append}) then FINISHED after {@link #finish()}. Not
 * thread-safe: one writer per upload, used by one thread.
 */
public final class ObjectWriter {

  private final int blockSizeBytes;
  private final List<ByteBuffer> buffers = new ArrayList<>();
  private final List<IndexEntry> index = new ArrayList<>();
  private final List<StreamRecordBatch> pending = new ArrayList<>();
  private long pendingBytes;
  private long pendingRecords;
  private long position;
  private long lastStreamId = Long.MIN_VALUE;
  private long lastNextOffset = -1;
  private boolean finished;

  public ObjectWriter(int blockSizeBytes) {
    if (blockSizeBytes < 1) {
      throw new IllegalArgumentException("block size " + blockSizeBytes + " must be >= 1 byte");
    }
    this.blockSizeBytes = blockSizeBytes;
  }

  /**
   * Adds a batch. Batches must come sorted by stream id, then by offset without overlap;
   * otherwise {@link IllegalArgumentException} and nothing is added.
   */
  public void append(StreamRecordBatch batch) {
    if (finished) {
      throw new IllegalStateException("object writer is FINISHED; cannot append stream " + batch.streamId());
    }
    if (batch.streamId() < lastStreamId
        || (batch.streamId() == lastStreamId && batch.baseOffset() < lastNextOffset)) {
      throw new IllegalArgumentException("batch of stream " + batch.streamId() + " at offset " + batch.baseOffset()
          + " is out of order after stream " + lastStreamId + " up to offset " + lastNextOffset);
    }
    if (batch.streamId() != lastStreamId || pendingRecords + batch.recordCount() > Integer.MAX_VALUE) {
      flushBlock();
    }
    pending.add(batch);
    pendingBytes += batch.encodedBytes();
    pendingRecords += batch.recordCount();
    lastStreamId = batch.streamId();
    lastNextOffset = batch.nextOffset();
    if (pendingBytes >= blockSizeBytes) {
      flushBlock();
    }
  }

  /** Whether no batch was appended. */
  public boolean isEmpty() {
    return index.isEmpty() && pending.isEmpty();
  }

  /** Writes the last block, the index and the footer; the writer is FINISHED afterwards. */
  public EncodedObject finish() {
    if (finished) {
      throw new IllegalStateException("object writer is already FINISHED");
    }
    flushBlock();
    finished = true;
    ByteBuffer indexBytes = ByteBuffer.allocate(index.size() * IndexEntry.BYTES);
    for (IndexEntry e : index) {
      indexBytes.putLong(e.streamId()).putLong(e.startOffset()).putLong(e.endOffset()).putInt(e.recordCount())
          .putLong(e.blockPosition()).putInt(e.blockSizeBytes());
    }
    indexBytes.flip();
    CRC32C crc = new CRC32C();
    crc.update(indexBytes.duplicate());
    ByteBuffer footer = ByteBuffer.allocate(ObjectFormat.FOOTER_BYTES);
    footer.putLong(position).putInt(indexBytes.remaining()).putInt((int) crc.getValue())
        .putShort(ObjectFormat.FORMAT_VERSION);
    footer.position(ObjectFormat.FOOTER_BYTES - 8);
    footer.putLong(ObjectFormat.FOOTER_MAGIC).flip();
    buffers.add(indexBytes);
    buffers.add(footer);
    long size = position + indexBytes.remaining() + footer.remaining();
    return new EncodedObject(buffers, size, index);
  }

  private void flushBlock() {
    if (pending.isEmpty()) {
      return;
    }
    int dataLength = Math.toIntExact(pendingBytes);
    ByteBuffer block = ByteBuffer.allocate(ObjectFormat.BLOCK_HEADER_BYTES + dataLength);
    block.position(ObjectFormat.BLOCK_HEADER_BYTES);
    int records = 0;
    for (StreamRecordBatch b : pending) {
      StreamBatchCodec.encodeTo(b, block);
      records += b.recordCount();
    }
    CRC32C crc = new CRC32C();
    crc.update(block.duplicate().flip().position(ObjectFormat.BLOCK_HEADER_BYTES));
    StreamRecordBatch first = pending.getFirst();
    block.putInt(0, ObjectFormat.BLOCK_MAGIC).putLong(4, first.streamId()).putInt(12, pending.size())
        .putInt(16, dataLength).putInt(20, (int) crc.getValue());
    block.flip();
    index.add(new IndexEntry(first.streamId(), first.baseOffset(), pending.getLast().nextOffset(), records, position,
        block.remaining()));
    buffers.add(block);
    position += block.remaining();
    pending.clear();
    pendingBytes = 0;
    pendingRecords = 0;
  }
}
