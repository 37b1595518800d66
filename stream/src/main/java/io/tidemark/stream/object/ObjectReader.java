package io.tidemark.stream.object;

import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.zip.CRC32C;

/**
 * Reads one object with ranged GETs: {@link #open} fetches the footer and then the index; after
 * that {@link #readBlocks} and {@link #read} fetch only the data blocks needed (adjacent blocks
 * in one GET). Every structure is validated; a mismatch fails with {@link CorruptObjectException}
 * naming the key.
 *
 * <p>Immutable after {@link #open}; safe to share between threads (e.g. kept in an index cache).
 */
public final class ObjectReader {

  private final ObjectStorage storage;
  private final String key;
  private final long objectSizeBytes;
  private final List<IndexEntry> index;

  private ObjectReader(ObjectStorage storage, String key, long objectSizeBytes, List<IndexEntry> index) {
    this.storage = storage;
    this.key = key;
    this.objectSizeBytes = objectSizeBytes;
    this.index = index;
  }

  /**
   * Reads and validates the footer and the index of object {@code key}, whose size is
   * {@code objectSizeBytes} (as committed in metadata).
   */
  public static CompletableFuture<ObjectReader> open(ObjectStorage storage, String key, long objectSizeBytes) {
    if (objectSizeBytes < ObjectFormat.FOOTER_BYTES) {
      return CompletableFuture.failedFuture(new CorruptObjectException(key, "size " + objectSizeBytes
          + " is smaller than the " + ObjectFormat.FOOTER_BYTES + "-byte footer"));
    }
    long footerStart = objectSizeBytes - ObjectFormat.FOOTER_BYTES;
    return storage.get(key, footerStart, objectSizeBytes).thenCompose(footerBytes -> {
      Footer footer = parseFooter(key, objectSizeBytes, footerBytes);
      if (footer.indexLength == 0) {
        return CompletableFuture.completedFuture(new ObjectReader(storage, key, objectSizeBytes, List.of()));
      }
      return storage.get(key, footer.indexPosition, footer.indexPosition + footer.indexLength)
          .thenApply(indexBytes -> new ObjectReader(storage, key, objectSizeBytes, parseIndex(key, footer, indexBytes)));
    });
  }

  public String key() {
    return key;
  }

  public long objectSizeBytes() {
    return objectSizeBytes;
  }

  /** Every block of the object, sorted by (stream, offset). */
  public List<IndexEntry> index() {
    return index;
  }

  /** The blocks of {@code streamId} holding any offset of {@code [startOffset, endOffset)}, in offset order. */
  public List<IndexEntry> find(long streamId, long startOffset, long endOffset) {
    List<IndexEntry> result = new ArrayList<>();
    for (IndexEntry e : index) {
      if (e.overlaps(streamId, startOffset, endOffset)) {
        result.add(e);
      }
    }
    return result;
  }

  /** Reads the given blocks (sorted by position); adjacent blocks are fetched with one ranged GET. */
  public CompletableFuture<List<DataBlock>> readBlocks(List<IndexEntry> entries) {
    if (entries.isEmpty()) {
      return CompletableFuture.completedFuture(List.of());
    }
    List<CompletableFuture<List<DataBlock>>> runs = new ArrayList<>();
    int runStart = 0;
    for (int i = 1; i <= entries.size(); i++) {
      if (i == entries.size() || !adjacent(entries.get(i - 1), entries.get(i))) {
        runs.add(readRun(entries.subList(runStart, i)));
        runStart = i;
      }
    }
    return CompletableFuture.allOf(runs.toArray(CompletableFuture[]::new)).thenApply(v -> {
      List<DataBlock> blocks = new ArrayList<>(entries.size());
      runs.forEach(r -> blocks.addAll(r.join()));
      return blocks;
    });
  }

  /** Reads one block. */
  public CompletableFuture<DataBlock> readBlock(IndexEntry entry) {
    return readBlocks(List.of(entry)).thenApply(List::getFirst);
  }

  /**
   * The batches of {@code streamId} covering {@code [startOffset, endOffset)}: the first holds
   * {@code startOffset} (it may begin before it); batches are added until {@code endOffset} or
   * until their payloads total {@code maxBytes} (at least one batch when any exists).
   */
  public CompletableFuture<List<StreamBatch>> read(long streamId, long startOffset, long endOffset, long maxBytes) {
    return readFrom(find(streamId, startOffset, endOffset), 0, new ArrayList<>(), startOffset, endOffset, maxBytes);
  }

  /** Fetches blocks from {@code from} on, about {@code maxBytes} worth per round, until done. */
  private CompletableFuture<List<StreamBatch>> readFrom(List<IndexEntry> candidates, int from, List<StreamBatch> result,
      long startOffset, long endOffset, long maxBytes) {
    long already = payloadBytes(result);
    if (from >= candidates.size() || (!result.isEmpty() && already >= maxBytes)) {
      return CompletableFuture.completedFuture(result);
    }
    int to = from;
    long blockBytes = 0;
    while (to < candidates.size() && (to == from || blockBytes < maxBytes - already)) {
      blockBytes += candidates.get(to).blockSizeBytes();
      to++;
    }
    int next = to;
    return readBlocks(candidates.subList(from, to)).thenCompose(blocks -> {
      boolean done = select(blocks, result, startOffset, endOffset, maxBytes);
      return done ? CompletableFuture.completedFuture(result)
          : readFrom(candidates, next, result, startOffset, endOffset, maxBytes);
    });
  }

  /** Adds the wanted batches of {@code blocks} to {@code result}; true when end or the byte limit was reached. */
  private static boolean select(List<DataBlock> blocks, List<StreamBatch> result, long startOffset, long endOffset,
      long maxBytes) {
    long bytes = payloadBytes(result);
    for (DataBlock block : blocks) {
      for (StreamRecordBatch b : block.batches()) {
        if (b.nextOffset() <= startOffset) {
          continue;
        }
        if (b.baseOffset() >= endOffset || (!result.isEmpty() && bytes >= maxBytes)) {
          return true;
        }
        result.add(b.toStreamBatch());
        bytes += b.payloadBytes();
      }
    }
    return false;
  }

  private static long payloadBytes(List<StreamBatch> batches) {
    long total = 0;
    for (StreamBatch b : batches) {
      total += b.payload().remaining();
    }
    return total;
  }

  private static boolean adjacent(IndexEntry a, IndexEntry b) {
    return a.blockPosition() + a.blockSizeBytes() == b.blockPosition();
  }

  private CompletableFuture<List<DataBlock>> readRun(List<IndexEntry> run) {
    long start = run.getFirst().blockPosition();
    IndexEntry last = run.getLast();
    long end = last.blockPosition() + last.blockSizeBytes();
    List<IndexEntry> entries = List.copyOf(run);
    return storage.get(key, start, end).thenApply(bytes -> {
      if (bytes.remaining() != end - start) {
        throw new CorruptObjectException(key, "truncated: asked bytes [" + start + ", " + end + ") got "
            + bytes.remaining());
      }
      List<DataBlock> blocks = new ArrayList<>(entries.size());
      for (IndexEntry e : entries) {
        int from = bytes.position() + (int) (e.blockPosition() - start);
        ByteBuffer slice = bytes.duplicate().position(from).limit(from + e.blockSizeBytes()).slice();
        blocks.add(DataBlock.decode(key, e, slice));
      }
      return blocks;
    });
  }

  private record Footer(long indexPosition, int indexLength, int indexCrc) {}

  private static Footer parseFooter(String key, long objectSizeBytes, ByteBuffer bytes) {
    if (bytes.remaining() != ObjectFormat.FOOTER_BYTES) {
      throw new CorruptObjectException(key, "truncated: footer has " + bytes.remaining() + " of "
          + ObjectFormat.FOOTER_BYTES + " bytes (object shorter than the committed size " + objectSizeBytes + ")");
    }
    int p = bytes.position();
    long magic = bytes.getLong(p + ObjectFormat.FOOTER_BYTES - 8);
    if (magic != ObjectFormat.FOOTER_MAGIC) {
      throw new CorruptObjectException(key, String.format(
          "bad footer magic 0x%016x (not a Tidemark object, or truncated/extended beyond size %d)", magic,
          objectSizeBytes));
    }
    long indexPosition = bytes.getLong(p);
    int indexLength = bytes.getInt(p + 8);
    int indexCrc = bytes.getInt(p + 12);
    short version = bytes.getShort(p + 16);
    if (version != ObjectFormat.FORMAT_VERSION) {
      throw new CorruptObjectException(key, "unsupported format version " + version);
    }
    if (indexLength < 0 || indexLength % IndexEntry.BYTES != 0 || indexPosition < 0
        || indexPosition + indexLength + ObjectFormat.FOOTER_BYTES != objectSizeBytes) {
      throw new CorruptObjectException(key, "footer index location [" + indexPosition + ", +" + indexLength
          + ") does not fit object size " + objectSizeBytes);
    }
    return new Footer(indexPosition, indexLength, indexCrc);
  }

  private static List<IndexEntry> parseIndex(String key, Footer footer, ByteBuffer bytes) {
    if (bytes.remaining() != footer.indexLength) {
      throw new CorruptObjectException(key, "truncated index: got " + bytes.remaining() + " of "
          + footer.indexLength + " bytes");
    }
    CRC32C crc = new CRC32C();
    crc.update(bytes.duplicate());
    if ((int) crc.getValue() != footer.indexCrc) {
      throw new CorruptObjectException(key, "index CRC mismatch");
    }
    ByteBuffer in = bytes.duplicate();
    List<IndexEntry> entries = new ArrayList<>(footer.indexLength / IndexEntry.BYTES);
    long expectedPosition = 0;
    IndexEntry previous = null;
    while (in.hasRemaining()) {
      IndexEntry e = new IndexEntry(in.getLong(), in.getLong(), in.getLong(), in.getInt(), in.getLong(), in.getInt());
      boolean ordered = previous == null || e.streamId() > previous.streamId()
          || (e.streamId() == previous.streamId() && e.startOffset() >= previous.endOffset());
      if (e.blockPosition() != expectedPosition || e.blockSizeBytes() <= ObjectFormat.BLOCK_HEADER_BYTES
          || e.endOffset() <= e.startOffset() || e.recordCount() < 1 || !ordered) {
        throw new CorruptObjectException(key, "invalid index entry " + e);
      }
      expectedPosition += e.blockSizeBytes();
      entries.add(e);
      previous = e;
    }
    if (expectedPosition != footer.indexPosition) {
      throw new CorruptObjectException(key, "index blocks end at " + expectedPosition + " but the index starts at "
          + footer.indexPosition);
    }
    return Collections.unmodifiableList(entries);
  }
}
