package io.tidemark.metadata.controller;

import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.image.MetadataListener;
import io.tidemark.metadata.record.CorruptRecordException;
import io.tidemark.metadata.record.FieldWriter;
import io.tidemark.metadata.record.MetadataRecord;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One replica of the metadata: the current image, advanced by applying committed log entries.
 * An entry is a write request stamped with the leader's clock; applying it computes the records
 * with {@link Controller#handle} and replays them, so the leader, every follower and a node
 * replaying after a snapshot produce identical images. Images are published to listeners and to
 * callers waiting for an offset ({@link #awaitOffset}).
 *
 * <p>States: RUNNING, then HALTED for good after an entry that cannot be decoded; a halted replica
 * refuses to apply or serve. Threading: {@link #apply} and {@link #load} are called by one thread
 * (the Raft apply thread); {@link #image()} and {@link #awaitOffset} from any thread.
 */
public final class MetadataReplica {
  private final Controller controller;
  private final List<MetadataListener> listeners = new CopyOnWriteArrayList<>();
  private final TreeMap<Long, List<CompletableFuture<MetadataImage>>> waiters = new TreeMap<>();
  private final int maxWaiters;
  private volatile MetadataImage image = MetadataImage.EMPTY;
  private volatile String haltedReason;
  private int waiterCount;

  public MetadataReplica(Controller controller, int maxWaiters) {
    this.controller = controller;
    this.maxWaiters = maxWaiters;
  }

  /** Encodes a log entry: the leader's time, then the request. */
  public static byte[] entry(long leaderTimeMs, ControllerRequest.Write request) {
    byte[] req = RequestCodec.encode(request);
    FieldWriter w = new FieldWriter(req.length + 8);
    w.writeLong(leaderTimeMs);
    ByteBuffer b = w.toByteBuffer();
    byte[] out = new byte[8 + req.length];
    System.arraycopy(b.array(), 0, out, 0, 8);
    System.arraycopy(req, 0, out, 8, req.length);
    return out;
  }

  public MetadataImage image() {
    return image;
  }

  /** Null while running; the reason once halted. */
  public String haltedReason() {
    return haltedReason;
  }

  /**
   * Applies the log entry at {@code offset}; returns the reply for its client. An entry that does
   * not decode halts the replica and throws {@link CorruptRecordException}.
   */
  public ControllerReply apply(long offset, ByteBuffer entry) {
    requireRunning();
    long timeMs;
    ControllerRequest request;
    try {
      ByteBuffer b = entry.duplicate();
      timeMs = b.getLong();
      request = RequestCodec.decode(b);
    } catch (RuntimeException e) {
      String reason = "metadata log entry at offset " + offset + " cannot be decoded (" + e.getMessage()
          + "); this node stops instead of serving metadata it cannot trust";
      haltedReason = reason;
      throw new CorruptRecordException(reason);
    }
    if (!(request instanceof ControllerRequest.Write write)) {
      // only writes are appended; anything else is ignored so the log stays replayable
      return ControllerReply.error(ErrorCode.INVALID_REQUEST, "not a write request: " + request, offset);
    }
    ControllerResult result = controller.handle(image, write, timeMs);
    publish(replay(image, result.records(), offset), result.records());
    return result.reply(offset);
  }

  /** Records an applied offset that carried no controller entry (Raft configuration or leader no-op). */
  public void advance(long offset) {
    requireRunning();
    if (offset > image.offset()) {
      publish(image.toBuilder().build(offset), List.of());
    }
  }

  /** Replaces the image with one loaded from a snapshot. */
  public void load(MetadataImage loaded) {
    publish(loaded, List.of());
  }

  public void halt(String reason) {
    haltedReason = reason;
  }

  static MetadataImage replay(MetadataImage base, List<MetadataRecord> records, long offset) {
    MetadataImage.Builder b = base.toBuilder();
    for (MetadataRecord r : records) {
      b.replay(r);
    }
    return b.build(offset);
  }

  public void addListener(MetadataListener listener) {
    listeners.add(listener);
    listener.onImage(image, List.of());
  }

  public void removeListener(MetadataListener listener) {
    listeners.remove(listener);
  }

  /**
   * Completes once the image has reached {@code offset} (at once if it has). At most
   * {@code maxWaiters} callers wait at a time; beyond that the future fails at once.
   */
  public CompletableFuture<MetadataImage> awaitOffset(long offset) {
    MetadataImage now = image;
    if (now.offset() >= offset) {
      return CompletableFuture.completedFuture(now);
    }
    CompletableFuture<MetadataImage> f = new CompletableFuture<>();
    synchronized (waiters) {
      if (waiterCount >= maxWaiters) {
        return CompletableFuture.failedFuture(new ErrorCode.ControllerUnavailableException(
            "too many callers (" + waiterCount + ") are waiting for metadata offsets"));
      }
      waiters.computeIfAbsent(offset, k -> new java.util.ArrayList<>()).add(f);
      waiterCount++;
    }
    MetadataImage after = image;
    if (after.offset() >= offset) {
      release(after);
    }
    return f;
  }

  private void publish(MetadataImage next, List<MetadataRecord> records) {
    image = next;
    for (MetadataListener l : listeners) {
      l.onImage(next, records);
    }
    release(next);
  }

  private void release(MetadataImage next) {
    List<CompletableFuture<MetadataImage>> ready = new java.util.ArrayList<>();
    synchronized (waiters) {
      Map<Long, List<CompletableFuture<MetadataImage>>> head = waiters.headMap(next.offset(), true);
      for (List<CompletableFuture<MetadataImage>> l : head.values()) {
        ready.addAll(l);
      }
      waiterCount -= ready.size();
      head.clear();
    }
    ready.forEach(f -> f.complete(next));
  }

  private void requireRunning() {
    String reason = haltedReason;
    if (reason != null) {
      throw new CorruptRecordException(reason);
    }
  }
}
