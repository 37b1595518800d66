package io.tidemark.stream.read;

import io.tidemark.stream.object.CorruptObjectException;
import io.tidemark.stream.object.IndexEntry;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Turns the block loads of one pass over one object into as few ranged GETs as possible: blocks
 * added one after another that are adjacent in the object share one GET of at most
 * {@code maxGetBytes}; each block's future completes with its slice of the response. Object
 * stores charge (in latency and money) per request, so a sequential reader's read-ahead costs a
 * few GETs instead of one per block.
 *
 * <p>Use: {@link #add} for each block (typically from inside a {@link io.tidemark.stream.cache.BlockCache}
 * loader), then {@link #flush()} once; a block's future completes only after the GET holding it
 * was issued, so {@code flush()} must always be called. Not thread-safe: one pass, one thread.
 */
final class CoalescedGets {

  private record Pending(IndexEntry entry, CompletableFuture<ByteBuffer> bytes) {}

  private final ObjectStorage storage;
  private final String key;
  private final long maxGetBytes;
  private final List<Pending> run = new ArrayList<>();

  CoalescedGets(ObjectStorage storage, String key, long maxGetBytes) {
    this.storage = storage;
    this.key = key;
    this.maxGetBytes = maxGetBytes;
  }

  /** The bytes of {@code entry}, fetched with its adjacent neighbours once {@link #flush()} (or a gap) comes. */
  CompletableFuture<ByteBuffer> add(IndexEntry entry) {
    if (!run.isEmpty()) {
      IndexEntry last = run.getLast().entry();
      long runStart = run.getFirst().entry().blockPosition();
      boolean adjacent = last.blockPosition() + last.blockSizeBytes() == entry.blockPosition();
      if (!adjacent || entry.blockPosition() + entry.blockSizeBytes() - runStart > maxGetBytes) {
        flush();
      }
    }
    Pending pending = new Pending(entry, new CompletableFuture<>());
    run.add(pending);
    return pending.bytes();
  }

  /** Issues the GET for the blocks added since the last flush. */
  void flush() {
    if (run.isEmpty()) {
      return;
    }
    List<Pending> blocks = List.copyOf(run);
    run.clear();
    long start = blocks.getFirst().entry().blockPosition();
    IndexEntry last = blocks.getLast().entry();
    long end = last.blockPosition() + last.blockSizeBytes();
    CompletableFuture<ByteBuffer> get;
    try {
      get = storage.get(key, start, end);
    } catch (RuntimeException e) {
      get = CompletableFuture.failedFuture(e);
    }
    get.whenComplete((bytes, error) -> {
      if (error == null && bytes.remaining() != end - start) {
        error = new CorruptObjectException(key, "truncated: asked bytes [" + start + ", " + end + ") got "
            + bytes.remaining());
      }
      for (Pending p : blocks) {
        if (error != null) {
          p.bytes().completeExceptionally(error);
        } else {
          int from = bytes.position() + (int) (p.entry().blockPosition() - start);
          p.bytes().complete(bytes.duplicate().position(from).limit(from + p.entry().blockSizeBytes()).slice());
        }
      }
    });
  }
}
