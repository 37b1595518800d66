package io.tidemark.broker.partition;

import io.tidemark.stream.api.AppendBackpressureException;
import io.tidemark.stream.api.FetchResult;
import io.tidemark.stream.api.OffsetOutOfRangeException;
import io.tidemark.stream.api.Stream;
import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.api.StreamClosedException;
import io.tidemark.stream.api.StreamException;
import io.tidemark.stream.api.StreamFencedException;
import io.tidemark.stream.api.StreamNotFoundException;
import io.tidemark.stream.api.StreamStore;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link StreamStore} that keeps every stream in this JVM's heap: nothing survives the
 * process. Used for {@code kafka.storage=memory} (demos, tests) until the broker is handed the
 * real engine. Bounded by {@code capacityBytes}: an append beyond it is refused at once with an
 * {@link AppendBackpressureException} naming the limit (nothing written; the partition stays open).
 *
 * <p>Thread safety: each stream's data is guarded by its own monitor; calls complete at once.
 */
public final class MemoryStreamStore implements StreamStore {

  private final Map<Long, StreamData> streams = new ConcurrentHashMap<>();
  private final AtomicLong nextId = new AtomicLong(1);
  private final AtomicLong usedBytes = new AtomicLong();
  private final long capacityBytes;

  public MemoryStreamStore(long capacityBytes) {
    this.capacityBytes = capacityBytes;
  }

  @Override
  public CompletableFuture<Long> createStream(Map<String, String> tags) {
    long id = nextId.getAndIncrement();
    streams.put(id, new StreamData(id));
    return CompletableFuture.completedFuture(id);
  }

  @Override
  public CompletableFuture<Stream> openStream(long streamId, long epoch) {
    StreamData data = streams.get(streamId);
    if (data == null) {
      return CompletableFuture.failedFuture(new StreamNotFoundException("stream " + streamId + " does not exist"));
    }
    synchronized (data) {
      if (epoch < data.epoch) {
        return CompletableFuture.failedFuture(new StreamFencedException(
            "stream " + streamId + " is at epoch " + data.epoch + "; cannot open with older epoch " + epoch));
      }
      data.epoch = epoch;
      data.open = new Handle(data, epoch);
      return CompletableFuture.completedFuture(data.open);
    }
  }

  @Override
  public Optional<Stream> stream(long streamId) {
    StreamData data = streams.get(streamId);
    if (data == null) {
      return Optional.empty();
    }
    synchronized (data) {
      return Optional.ofNullable(data.open);
    }
  }

  @Override
  public void close() {
    for (StreamData data : streams.values()) {
      synchronized (data) {
        data.open = null;
      }
    }
  }

  /** Bytes held by all streams (for tests and the capacity bound). */
  public long usedBytes() {
    return usedBytes.get();
  }

  private static final class StreamData {
    final long id;
    long epoch;
    long startOffset;
    long nextOffset;
    Handle open;
    final NavigableMap<Long, StreamBatch> batches = new TreeMap<>();

    StreamData(long id) {
      this.id = id;
    }
  }

  private final class Handle implements Stream {
    private final StreamData data;
    private final long epoch;
    private boolean closed;

    Handle(StreamData data, long epoch) {
      this.data = data;
      this.epoch = epoch;
    }

    private void checkUsable() {
      if (closed) {
        throw new StreamClosedException("stream " + data.id + " is closed");
      }
      if (data.epoch != epoch) {
        throw new StreamFencedException("stream " + data.id + " was reopened with epoch " + data.epoch + " (this holder has " + epoch + ")");
      }
    }

    @Override
    public long streamId() {
      return data.id;
    }

    @Override
    public long epoch() {
      return epoch;
    }

    @Override
    public long startOffset() {
      synchronized (data) {
        return data.startOffset;
      }
    }

    @Override
    public long nextOffset() {
      synchronized (data) {
        return data.nextOffset;
      }
    }

    @Override
    public CompletableFuture<Long> append(int recordCount, ByteBuffer payload) {
      if (recordCount < 1) {
        return CompletableFuture.failedFuture(new IllegalArgumentException("recordCount must be >= 1, was " + recordCount));
      }
      synchronized (data) {
        try {
          checkUsable();
        } catch (StreamException e) {
          return CompletableFuture.failedFuture(e);
        }
        int size = payload.remaining();
        if (usedBytes.addAndGet(size) > capacityBytes) {
          usedBytes.addAndGet(-size);
          return CompletableFuture.failedFuture(new AppendBackpressureException(
              "in-memory stream store is full (" + capacityBytes + " bytes); delete records or topics"));
        }
        ByteBuffer copy = ByteBuffer.allocate(size);
        copy.put(payload.duplicate()).flip();
        long base = data.nextOffset;
        data.batches.put(base, new StreamBatch(base, recordCount, copy.asReadOnlyBuffer()));
        data.nextOffset = base + recordCount;
        return CompletableFuture.completedFuture(base);
      }
    }

    @Override
    public CompletableFuture<FetchResult> fetch(long startOffset, long endOffset, int maxBytes) {
      synchronized (data) {
        try {
          checkUsable();
        } catch (StreamException e) {
          return CompletableFuture.failedFuture(e);
        }
        if (startOffset < data.startOffset || startOffset > data.nextOffset) {
          return CompletableFuture.failedFuture(new OffsetOutOfRangeException(
              "offset " + startOffset + " is outside [" + data.startOffset + ", " + data.nextOffset + "] of stream " + data.id));
        }
        List<StreamBatch> out = new ArrayList<>();
        Long from = data.batches.floorKey(startOffset);
        long total = 0;
        for (StreamBatch b : data.batches.tailMap(from == null ? startOffset : from, true).values()) {
          if (b.baseOffset() >= endOffset || b.nextOffset() <= startOffset) {
            if (b.baseOffset() >= endOffset) {
              break;
            }
            continue;
          }
          if (!out.isEmpty() && total + b.payload().remaining() > maxBytes) {
            break;
          }
          out.add(new StreamBatch(b.baseOffset(), b.recordCount(), b.payload().duplicate()));
          total += b.payload().remaining();
          if (total >= maxBytes) {
            break;
          }
        }
        return CompletableFuture.completedFuture(new FetchResult(out, false));
      }
    }

    @Override
    public CompletableFuture<Void> trim(long newStartOffset) {
      synchronized (data) {
        try {
          checkUsable();
        } catch (StreamException e) {
          return CompletableFuture.failedFuture(e);
        }
        if (newStartOffset > data.nextOffset) {
          return CompletableFuture.failedFuture(new OffsetOutOfRangeException(
              "cannot trim stream " + data.id + " to " + newStartOffset + " beyond its end " + data.nextOffset));
        }
        if (newStartOffset > data.startOffset) {
          data.startOffset = newStartOffset;
          while (!data.batches.isEmpty() && data.batches.firstEntry().getValue().nextOffset() <= newStartOffset) {
            usedBytes.addAndGet(-data.batches.pollFirstEntry().getValue().payload().remaining());
          }
        }
        return CompletableFuture.completedFuture(null);
      }
    }

    @Override
    public CompletableFuture<Void> close() {
      synchronized (data) {
        closed = true;
        if (data.open == this) {
          data.open = null;
        }
      }
      return CompletableFuture.completedFuture(null);
    }
  }
}
