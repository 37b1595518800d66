package io.tidemark.stream.cache;

import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.object.StreamRecordBatch;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * The tail of every open stream of a node, in memory, bounded in bytes: every batch acknowledged
 * by the WAL and not yet uploaded is here, plus uploaded batches kept for tail reads until their
 * space is needed.
 *
 * <p>Accounting: a writer first {@link #tryReserve reserves} a batch's bytes (which may evict
 * uploaded batches, oldest first), then {@link #put}s it once durable, or
 * {@link #releaseReservation releases} the bytes if the write failed. Used bytes (batches held plus
 * reservations) never exceed the capacity, except for one batch larger than the whole cache,
 * admitted only when the cache is otherwise empty. When nothing can be evicted the caller waits
 * (the engine keeps a bounded admission queue) until an upload frees space.
 *
 * <p>Entry states: UNUPLOADED → UPLOADING (taken by {@link #takeUploadSnapshot}) → UPLOADED
 * ({@link #markUploaded}) → evicted. Batches are evicted in insertion (WAL) order, and only
 * once uploaded, so a stream's cached batches are always a contiguous tail of the stream.
 *
 * <p>Threading: thread-safe; every method holds the instance monitor briefly (no I/O inside).
 */
public final class LogCache {

  private enum EntryState { UNUPLOADED, UPLOADING, UPLOADED, REMOVED }

  /** One cached batch and the WAL offset of the record that holds it. */
  public static final class Entry {
    private final StreamRecordBatch batch;
    private final long walOffset;
    private EntryState state = EntryState.UNUPLOADED;

    private Entry(StreamRecordBatch batch, long walOffset) {
      this.batch = batch;
      this.walOffset = walOffset;
    }

    public StreamRecordBatch batch() {
      return batch;
    }

    public long walOffset() {
      return walOffset;
    }

    long sizeBytes() {
      return batch.encodedBytes();
    }
  }

  /**
   * Batches taken for one upload: per stream (ascending ids), batches in offset order; and the
   * highest WAL offset among them (every WAL record at or below it is uploaded once this commits).
   */
  public record UploadSnapshot(TreeMap<Long, List<Entry>> entriesByStream, long maxWalOffset, long sizeBytes) {
    public boolean isEmpty() {
      return entriesByStream.isEmpty();
    }
  }

  private final long capacityBytes;
  private final ArrayDeque<Entry> fifo = new ArrayDeque<>();
  private final Map<Long, NavigableMap<Long, Entry>> streams = new HashMap<>();
  private long usedBytes;
  private long reservedBytes;
  private long unuploadedBytes;

  public LogCache(long capacityBytes) {
    if (capacityBytes < 1) {
      throw new IllegalArgumentException("log cache capacity " + capacityBytes + " must be >= 1 byte");
    }
    this.capacityBytes = capacityBytes;
  }

  /**
   * Reserves {@code bytes} for a batch about to be written, evicting uploaded batches if needed.
   * Returns false (reserving nothing) when the space is not available; retry after an upload.
   */
  public synchronized boolean tryReserve(long bytes) {
    if (usedBytes + reservedBytes + bytes > capacityBytes) {
      evictUploaded(usedBytes + reservedBytes + bytes - capacityBytes);
    }
    boolean fits = usedBytes + reservedBytes + bytes <= capacityBytes;
    boolean aloneOversized = bytes > capacityBytes && usedBytes + reservedBytes == 0;
    if (!fits && !aloneOversized) {
      return false;
    }
    reservedBytes += bytes;
    return true;
  }

  /** Gives back a reservation whose batch was not written. */
  public synchronized void releaseReservation(long bytes) {
    reservedBytes = Math.max(0, reservedBytes - bytes);
  }

  /**
   * Adds a durable batch (reserved before with {@link #tryReserve}, its encoded size). Batches of
   * one stream must be put in offset order.
   */
  public synchronized void put(StreamRecordBatch batch, long walOffset) {
    Entry entry = new Entry(batch, walOffset);
    reservedBytes = Math.max(0, reservedBytes - entry.sizeBytes());
    NavigableMap<Long, Entry> stream = streams.computeIfAbsent(batch.streamId(), k -> new TreeMap<>());
    if (!stream.isEmpty() && stream.lastEntry().getValue().batch.nextOffset() != batch.baseOffset()) {
      throw new IllegalStateException("batch of stream " + batch.streamId() + " at offset " + batch.baseOffset()
          + " does not follow the cached tail ending at " + stream.lastEntry().getValue().batch.nextOffset());
    }
    stream.put(batch.baseOffset(), entry);
    fifo.addLast(entry);
    usedBytes += entry.sizeBytes();
    unuploadedBytes += entry.sizeBytes();
  }

  /** The first cached offset of the stream, or -1 when nothing of it is cached. */
  public synchronized long firstOffset(long streamId) {
    NavigableMap<Long, Entry> stream = streams.get(streamId);
    return stream == null || stream.isEmpty() ? -1 : stream.firstKey();
  }

  /**
   * Cached batches covering {@code [startOffset, endOffset)}: the first holds {@code startOffset};
   * stops at {@code endOffset} or once payloads reach {@code maxBytes} (at least one batch). Empty
   * when {@code startOffset} is not cached.
   */
  public synchronized List<StreamBatch> read(long streamId, long startOffset, long endOffset, long maxBytes) {
    List<StreamBatch> result = new ArrayList<>();
    NavigableMap<Long, Entry> stream = streams.get(streamId);
    if (stream == null || stream.isEmpty() || startOffset < stream.firstKey()) {
      return result;
    }
    Long from = stream.floorKey(startOffset);
    long bytes = 0;
    for (Entry e : stream.tailMap(from, true).values()) {
      StreamRecordBatch b = e.batch;
      if (b.nextOffset() <= startOffset) {
        continue;
      }
      if (b.baseOffset() >= endOffset || (!result.isEmpty() && bytes >= maxBytes)) {
        break;
      }
      result.add(b.toStreamBatch());
      bytes += b.payloadBytes();
    }
    return result;
  }

  /** Takes every not-yet-uploaded batch for an upload (they stay readable and cannot be evicted). */
  public synchronized UploadSnapshot takeUploadSnapshot() {
    return takeUploadSnapshot(null);
  }

  /**
   * Takes the not-yet-uploaded batches of the given streams only (null: of every stream), as
   * {@link #takeUploadSnapshot()} does; used to upload one closing stream without the others.
   */
  public synchronized UploadSnapshot takeUploadSnapshot(java.util.Set<Long> streamIds) {
    TreeMap<Long, List<Entry>> byStream = new TreeMap<>();
    long maxWal = -1;
    long size = 0;
    for (Entry e : fifo) {
      if (e.state == EntryState.UNUPLOADED && (streamIds == null || streamIds.contains(e.batch.streamId()))) {
        e.state = EntryState.UPLOADING;
        byStream.computeIfAbsent(e.batch.streamId(), k -> new ArrayList<>()).add(e);
        maxWal = Math.max(maxWal, e.walOffset);
        size += e.sizeBytes();
      }
    }
    return new UploadSnapshot(byStream, maxWal, size);
  }

  /** The snapshot's batches are committed in object storage; they become evictable. */
  public synchronized void markUploaded(UploadSnapshot snapshot) {
    for (List<Entry> entries : snapshot.entriesByStream().values()) {
      for (Entry e : entries) {
        if (e.state == EntryState.UPLOADING) {
          e.state = EntryState.UPLOADED;
          unuploadedBytes -= e.sizeBytes();
        }
      }
    }
  }

  /** The snapshot's upload was abandoned; its batches (still present) go back to UNUPLOADED. */
  public synchronized void returnSnapshot(UploadSnapshot snapshot) {
    for (List<Entry> entries : snapshot.entriesByStream().values()) {
      for (Entry e : entries) {
        if (e.state == EntryState.UPLOADING) {
          e.state = EntryState.UNUPLOADED;
        }
      }
    }
  }

  /** Forgets every batch of the stream (closed after upload, or fenced); frees their bytes. */
  public synchronized void removeStream(long streamId) {
    NavigableMap<Long, Entry> stream = streams.remove(streamId);
    if (stream == null) {
      return;
    }
    for (Entry e : stream.values()) {
      if (e.state == EntryState.UNUPLOADED || e.state == EntryState.UPLOADING) {
        unuploadedBytes -= e.sizeBytes();
      }
      e.state = EntryState.REMOVED;
      usedBytes -= e.sizeBytes();
    }
    fifo.removeIf(e -> e.state == EntryState.REMOVED);
  }

  /**
   * Forgets the stream's uploaded batches that end at or below {@code belowOffset}, oldest first,
   * stopping at the first one not uploaded yet (the cached part stays a contiguous tail): after a
   * rewrite replaced that data in object storage, reads of it go to the new object. Frees their bytes.
   */
  public synchronized void dropUploaded(long streamId, long belowOffset) {
    NavigableMap<Long, Entry> stream = streams.get(streamId);
    if (stream == null) {
      return;
    }
    boolean dropped = false;
    while (!stream.isEmpty()) {
      Entry e = stream.firstEntry().getValue();
      if (e.state != EntryState.UPLOADED || e.batch.nextOffset() > belowOffset) {
        break;
      }
      stream.pollFirstEntry();
      e.state = EntryState.REMOVED;
      usedBytes -= e.sizeBytes();
      dropped = true;
    }
    if (stream.isEmpty()) {
      streams.remove(streamId);
    }
    if (dropped) {
      fifo.removeIf(e -> e.state == EntryState.REMOVED);
    }
  }

  /** True when the stream has cached batches not yet committed (unuploaded or being uploaded). */
  public synchronized boolean hasUnuploaded(long streamId) {
    NavigableMap<Long, Entry> stream = streams.get(streamId);
    // Per stream, batches are taken for upload in offset order: only the newest can tell.
    return stream != null && !stream.isEmpty() && stream.lastEntry().getValue().state != EntryState.UPLOADED;
  }

  /**
   * The WAL offset below which every cached batch is committed: the WAL offset of the oldest batch
   * not yet uploaded, or {@code nextWalOffset} when there is none. Trimming the WAL to it never
   * drops a record still needed, even when single streams were uploaded ahead of the others.
   */
  public synchronized long uploadedWalOffset(long nextWalOffset) {
    for (Entry e : fifo) {
      if (e.state == EntryState.UNUPLOADED || e.state == EntryState.UPLOADING) {
        return e.walOffset;
      }
    }
    return nextWalOffset;
  }

  /** Bytes of batches not yet uploaded (including those being uploaded). */
  public synchronized long unuploadedBytes() {
    return unuploadedBytes;
  }

  /** Bytes held (batches) plus reserved. */
  public synchronized long usedBytes() {
    return usedBytes + reservedBytes;
  }

  public long capacityBytes() {
    return capacityBytes;
  }

  private void evictUploaded(long needed) {
    long freed = 0;
    while (freed < needed && !fifo.isEmpty() && fifo.peekFirst().state == EntryState.UPLOADED) {
      Entry e = fifo.pollFirst();
      NavigableMap<Long, Entry> stream = streams.get(e.batch.streamId());
      stream.remove(e.batch.baseOffset());
      if (stream.isEmpty()) {
        streams.remove(e.batch.streamId());
      }
      usedBytes -= e.sizeBytes();
      freed += e.sizeBytes();
    }
  }
}
