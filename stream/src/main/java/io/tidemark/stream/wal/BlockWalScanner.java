package io.tidemark.stream.wal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Recovery of a block WAL's data area: walks the record chain from the header's scan start and
 * hands back whole group commits, stopping at the first record that is not the expected next one.
 *
 * <p>A record is accepted only when its magic and header CRC (seeded with the format id) match,
 * its offset equals the expected logical position (this rejects stale records from an earlier lap
 * of the circle), its session is not older than the previous record's (this rejects leftovers of a
 * group commit torn by a crash that a later, shorter write did not overwrite), its lengths are
 * consistent and its payload CRC matches. Records are returned only when the whole group commit
 * they belong to (up to a record flagged as batch end) is valid: a torn group commit was never
 * acknowledged, so nothing of it is returned and the writer resumes where it began. Records below
 * the trim offset are skipped. Never throws on bad contents; I/O errors surface as {@link WalException}.
 *
 * <p>Threading: single-threaded, used by recovery before the writer starts.
 */
final class BlockWalScanner {

  private final WalFile file;
  private final long dataStart;
  private final long dataCapacity;
  private final long formatId;
  private final long scanStart;
  private final long trimOffset;
  private final int blockSize;
  private final long maxRecordBytes;
  private final ByteBuffer window;
  private final BatchStarts batchStarts;
  private final ByteBuffer frameHeader = ByteBuffer.allocate(BlockRecordFrame.HEADER_BYTES);
  private long windowStart = -1;
  private int windowLength;
  private long position;
  private long lastSession;
  private boolean done;

  BlockWalScanner(WalFile file, long dataStart, long dataCapacity, BlockWalHeader header, BatchStarts batchStarts) {
    this.file = file;
    this.dataStart = dataStart;
    this.dataCapacity = dataCapacity;
    this.formatId = header.formatId();
    this.scanStart = header.scanStart();
    this.trimOffset = header.trimOffset();
    this.blockSize = file.blockSize();
    this.maxRecordBytes = dataCapacity / 2;
    this.window = file.allocate((int) Math.min(dataCapacity, 1 << 20));
    this.batchStarts = batchStarts;
    this.position = scanStart;
  }

  /** The records of the next complete group commit at or above the trim offset, or null at the end. */
  List<WalRecord> nextBatch() {
    while (!done) {
      List<WalRecord> batch = readBatch();
      if (batch == null) {
        done = true;
        return null;
      }
      if (!batch.isEmpty()) {
        return batch;
      }
    }
    return null;
  }

  /** The logical position after the last complete group commit (valid once {@link #nextBatch()} returned null). */
  long end() {
    return position;
  }

  private List<WalRecord> readBatch() {
    long batchStart = position;
    long at = position;
    long session = lastSession;
    List<WalRecord> records = new ArrayList<>();
    while (true) {
      if (at + BlockRecordFrame.HEADER_BYTES - scanStart > dataCapacity) {
        return null;
      }
      frameHeader.clear();
      readLogical(at, frameHeader);
      BlockRecordFrame.Header header = BlockRecordFrame.decode(frameHeader, formatId);
      if (header == null || header.offset() != at || header.session() < session || !consistent(header)) {
        return null;
      }
      byte[] payload = new byte[header.length()];
      readLogical(at + BlockRecordFrame.HEADER_BYTES, ByteBuffer.wrap(payload));
      if (BlockRecordFrame.payloadCrc(payload) != header.payloadCrc()) {
        return null;
      }
      if (at >= trimOffset) {
        records.add(new WalRecord(at, ByteBuffer.wrap(payload)));
      }
      session = header.session();
      at = header.next();
      if (header.batchEnd()) {
        position = at;
        lastSession = session;
        batchStarts.add(batchStart);
        return records;
      }
    }
  }

  private boolean consistent(BlockRecordFrame.Header header) {
    if (header.length() < 0 || header.length() > maxRecordBytes) {
      return false;
    }
    long rawEnd = header.offset() + BlockRecordFrame.HEADER_BYTES + header.length();
    long expectedNext = header.batchEnd() ? roundUp(rawEnd, blockSize) : rawEnd;
    return header.next() == expectedNext && header.next() - scanStart <= dataCapacity;
  }

  private static long roundUp(long value, int alignment) {
    return (value + alignment - 1) / alignment * alignment;
  }

  /** Fills {@code dst} from the logical position {@code logical}, wrapping at the end of the data area. */
  private void readLogical(long logical, ByteBuffer dst) {
    long at = logical;
    long dataEnd = dataStart + dataCapacity;
    while (dst.hasRemaining()) {
      long physical = dataStart + Math.floorMod(at, dataCapacity);
      if (windowStart < 0 || physical < windowStart || physical >= windowStart + windowLength) {
        long aligned = physical - (physical - dataStart) % blockSize;
        loadWindow(aligned, (int) Math.min(window.capacity(), dataEnd - aligned));
      }
      int from = (int) (physical - windowStart);
      int n = Math.min(dst.remaining(), windowLength - from);
      dst.put(window.slice(from, n));
      at += n;
    }
    dst.flip();
  }

  private void loadWindow(long physical, int length) {
    try {
      window.clear().limit(length);
      file.read(physical, window);
      windowStart = physical;
      windowLength = length;
    } catch (IOException e) {
      windowStart = -1;
      throw new WalException("cannot read WAL " + file.path() + " at byte " + physical + " during recovery: " + e, e);
    }
  }

  /**
   * The logical start positions of the group commits still in the data area, oldest first; the
   * writer maps a trim offset to the last group commit starting at or below it. Bounded by the
   * number of blocks in the data area (a group commit takes at least one block).
   */
  static final class BatchStarts {
    private final long[] ring;
    private int head;
    private int size;

    BatchStarts(long dataCapacity, int blockSize) {
      this.ring = new long[(int) (dataCapacity / blockSize) + 1];
    }

    void add(long start) {
      if (size == ring.length) {
        throw new IllegalStateException("more group commits than blocks in the WAL");
      }
      ring[(head + size) % ring.length] = start;
      size++;
    }

    /**
     * Drops every start that is not needed to read records at or above {@code trimOffset} and
     * returns the new scan start: the last start at or below it, or {@code writeOffset} when every
     * group commit is below it.
     */
    long trimTo(long trimOffset, long writeOffset) {
      while (size > 0 && (size == 1 ? writeOffset <= trimOffset : ring[(head + 1) % ring.length] <= trimOffset)) {
        head = (head + 1) % ring.length;
        size--;
      }
      return size == 0 ? writeOffset : ring[head];
    }

    void clear() {
      head = 0;
      size = 0;
    }
  }
}
