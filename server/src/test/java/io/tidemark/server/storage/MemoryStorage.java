package io.tidemark.server.storage;

import io.micrometer.core.instrument.MeterRegistry;
import io.tidemark.server.config.ServerConfig;
import io.tidemark.stream.api.FetchResult;
import io.tidemark.stream.api.OffsetOutOfRangeException;
import io.tidemark.stream.api.Stream;
import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.api.StreamClosedException;
import io.tidemark.stream.api.StreamFencedException;
import io.tidemark.stream.api.StreamNotFoundException;
import io.tidemark.stream.api.StreamStore;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.StreamManager;
import io.tidemark.stream.metadata.StreamMetadata;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A storage fake for server unit tests: streams in memory that outlive a "restart" of the server
 * (the same {@code MemoryStorage} hands its state to every node it opens). Everything appended is
 * durable at once. Not an engine: no WAL, no objects, no limits beyond correctness of offsets and
 * epochs.
 */
public final class MemoryStorage implements StorageFactory {

  private static final class StreamState {
    final long id;
    final Map<String, String> tags;
    long epoch;
    long startOffset;
    final List<StreamBatch> batches = new ArrayList<>();

    StreamState(long id, Map<String, String> tags) {
      this.id = id;
      this.tags = Map.copyOf(tags);
    }

    long nextOffset() {
      return batches.isEmpty() ? startOffset : batches.get(batches.size() - 1).nextOffset();
    }
  }

  private final ConcurrentHashMap<Long, StreamState> streams = new ConcurrentHashMap<>();
  private final AtomicLong nextId = new AtomicLong();
  private final AtomicLong opens = new AtomicLong();

  /** How many nodes were opened over this state (restarts + 1). */
  public long opens() {
    return opens.get();
  }

  @Override
  public StorageNode open(ServerConfig server, Settings settings, MeterRegistry meters) {
    opens.incrementAndGet();
    NodeRef node = new NodeRef(server.nodeId(), opens.get());
    return new Node(node);
  }

  private final class Node implements StorageNode, StreamStore, StreamManager {
    private final NodeRef node;
    private final ConcurrentHashMap<Long, MemoryStream> open = new ConcurrentHashMap<>();
    private volatile boolean closed;

    Node(NodeRef node) {
      this.node = node;
    }

    @Override
    public NodeRef node() {
      return node;
    }

    @Override
    public StreamStore streamStore() {
      return this;
    }

    @Override
    public StreamManager streamManager() {
      return this;
    }

    @Override
    public Map<String, Boolean> readiness() {
      return Map.of("storage.recovered", true, "wal.open", !closed);
    }

    @Override
    public CompletableFuture<Long> createStream(Map<String, String> tags) {
      long id = nextId.getAndIncrement();
      streams.put(id, new StreamState(id, tags));
      return CompletableFuture.completedFuture(id);
    }

    @Override
    public CompletableFuture<Stream> openStream(long streamId, long epoch) {
      StreamState state = streams.get(streamId);
      if (state == null) {
        return CompletableFuture.failedFuture(new StreamNotFoundException("stream " + streamId));
      }
      synchronized (state) {
        if (epoch < state.epoch) {
          return CompletableFuture.failedFuture(new StreamFencedException("epoch " + epoch + " < " + state.epoch));
        }
        state.epoch = epoch;
      }
      MemoryStream stream = new MemoryStream(state, epoch);
      open.put(streamId, stream);
      return CompletableFuture.completedFuture(stream);
    }

    @Override
    public Optional<Stream> stream(long streamId) {
      return Optional.ofNullable(open.get(streamId));
    }

    @Override
    public void close() {
      closed = true;
      open.values().forEach(MemoryStream::close);
    }

    @Override
    public CompletableFuture<Long> createStream(NodeRef node, Map<String, String> tags) {
      return createStream(tags);
    }

    @Override
    public CompletableFuture<StreamMetadata> openStream(NodeRef node, long streamId, long epoch) {
      throw new UnsupportedOperationException("test fake: the admin-API tests only create and list streams");
    }

    @Override
    public CompletableFuture<Void> closeStream(NodeRef node, long streamId, long epoch) {
      throw new UnsupportedOperationException("test fake: the admin-API tests only create and list streams");
    }

    @Override
    public CompletableFuture<Void> trimStream(NodeRef node, long streamId, long epoch, long newStartOffset) {
      throw new UnsupportedOperationException("test fake: the admin-API tests only create and list streams");
    }

    @Override
    public CompletableFuture<Void> deleteStream(NodeRef node, long streamId, long epoch) {
      throw new UnsupportedOperationException("test fake: the admin-API tests only create and list streams");
    }

    @Override
    public CompletableFuture<List<StreamMetadata>> getStreams(List<Long> streamIds) {
      List<StreamMetadata> result = new ArrayList<>();
      for (long id : streamIds) {
        StreamState s = streams.get(id);
        if (s != null) {
          synchronized (s) {
            result.add(new StreamMetadata(id, s.epoch, s.startOffset, s.nextOffset(),
                StreamMetadata.StreamState.CLOSED, -1, s.tags));
          }
        }
      }
      return CompletableFuture.completedFuture(result);
    }

    @Override
    public CompletableFuture<List<StreamMetadata>> getOpeningStreams(NodeRef node) {
      return CompletableFuture.completedFuture(List.of());
    }
  }

  private static final class MemoryStream implements Stream {
    private final StreamState state;
    private final long epoch;
    private volatile boolean closed;

    MemoryStream(StreamState state, long epoch) {
      this.state = state;
      this.epoch = epoch;
    }

    @Override
    public long streamId() {
      return state.id;
    }

    @Override
    public long epoch() {
      return epoch;
    }

    @Override
    public long startOffset() {
      synchronized (state) {
        return state.startOffset;
      }
    }

    @Override
    public long nextOffset() {
      synchronized (state) {
        return state.nextOffset();
      }
    }

    private Optional<RuntimeException> unusable() {
      if (closed) {
        return Optional.of(new StreamClosedException("stream " + state.id + " is closed"));
      }
      if (state.epoch != epoch) {
        return Optional.of(new StreamFencedException("stream " + state.id + " was opened with epoch " + state.epoch));
      }
      return Optional.empty();
    }

    @Override
    public CompletableFuture<Long> append(int recordCount, ByteBuffer payload) {
      synchronized (state) {
        Optional<RuntimeException> bad = unusable();
        if (bad.isPresent()) {
          return CompletableFuture.failedFuture(bad.get());
        }
        byte[] copy = new byte[payload.remaining()];
        payload.duplicate().get(copy);
        long base = state.nextOffset();
        state.batches.add(new StreamBatch(base, recordCount, ByteBuffer.wrap(copy).asReadOnlyBuffer()));
        return CompletableFuture.completedFuture(base);
      }
    }

    @Override
    public CompletableFuture<FetchResult> fetch(long startOffset, long endOffset, int maxBytes) {
      synchronized (state) {
        if (startOffset < state.startOffset || startOffset > state.nextOffset()) {
          return CompletableFuture.failedFuture(new OffsetOutOfRangeException(
              "offset " + startOffset + " outside [" + state.startOffset + ", " + state.nextOffset() + "]"));
        }
        List<StreamBatch> result = new ArrayList<>();
        long size = 0;
        for (StreamBatch b : state.batches) {
          if (b.nextOffset() <= startOffset || b.baseOffset() >= endOffset) {
            continue;
          }
          if (!result.isEmpty() && size + b.payload().remaining() > maxBytes) {
            break;
          }
          result.add(new StreamBatch(b.baseOffset(), b.recordCount(), b.payload().duplicate()));
          size += b.payload().remaining();
        }
        return CompletableFuture.completedFuture(new FetchResult(result, false));
      }
    }

    @Override
    public CompletableFuture<Void> trim(long newStartOffset) {
      synchronized (state) {
        state.startOffset = Math.max(state.startOffset, newStartOffset);
        state.batches.removeIf(b -> b.nextOffset() <= state.startOffset);
      }
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<Void> close() {
      closed = true;
      return CompletableFuture.completedFuture(null);
    }
  }
}
