package io.tidemark.server.admin;

import io.tidemark.server.storage.StorageNode;
import io.tidemark.stream.api.FetchResult;
import io.tidemark.stream.api.Stream;
import io.tidemark.stream.api.StreamClosedException;
import io.tidemark.stream.api.StreamFencedException;
import io.tidemark.stream.api.StreamNotFoundException;
import io.tidemark.stream.metadata.StreamMetadata;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the stream debugging API does, apart from HTTP: creates debugging streams (tagged
 * {@value #CREATED_BY_TAG}={@value #CREATED_BY}), opens them on this node on first use (with the
 * stream's epoch plus one, so this node takes them over after a restart), appends, reads and lists.
 * Open streams are kept, at most {@code maxOpenStreams}.
 *
 * <p>Every other stream (a partition's data or meta stream, the registry's log) has an owner that
 * this API never disturbs: it is never opened here (opening bumps the epoch and fences the owner)
 * and never written. It can be read only through the owner's own handle while the owner holds it
 * open on this node ({@link io.tidemark.stream.api.StreamStore#stream}); a read changes nothing.
 *
 * <p>Thread-safe: called from HTTP worker threads; the open-stream map deduplicates concurrent
 * opens of the same stream; the storage engine orders appends.
 */
final class StreamAdmin {

  /** A stream as listed: its readable range and whether this node holds it open. */
  record StreamView(long streamId, long epoch, long startOffset, long endOffset, boolean open, Map<String, String> tags) {}

  /** Where an appended batch landed. */
  record Appended(long streamId, long baseOffset, long nextOffset) {}

  static final String CREATED_BY_TAG = "created.by";
  static final String CREATED_BY = "admin-api";

  private final StorageNode storage;
  private final StreamDirectory directory;
  private final int maxOpenStreams;
  private final ConcurrentHashMap<Long, CompletableFuture<Stream>> open = new ConcurrentHashMap<>();

  StreamAdmin(StorageNode storage, StreamDirectory directory, int maxOpenStreams) {
    this.storage = storage;
    this.directory = directory;
    this.maxOpenStreams = maxOpenStreams;
  }

  CompletableFuture<Long> create(Map<String, String> tags) {
    if (open.size() >= maxOpenStreams) {
      return CompletableFuture.failedFuture(new TooManyOpenStreamsException(maxOpenStreams));
    }
    Map<String, String> allTags = new HashMap<>(tags);
    allTags.put(CREATED_BY_TAG, CREATED_BY);
    return storage.streamStore().createStream(allTags).thenCompose(id -> {
      directory.add(id);
      return stream(id).thenApply(s -> id);
    });
  }

  /** Appends to a debugging stream; any other stream fails with {@link OwnedStreamException} and is left alone. */
  CompletableFuture<Appended> append(long streamId, int recordCount, ByteBuffer payload) {
    return stream(streamId)
        .thenCompose(s -> s.append(recordCount, payload))
        .thenApply(base -> new Appended(streamId, base, base + recordCount))
        .whenComplete((r, err) -> forgetIfUnusable(streamId, err));
  }

  /**
   * Reads a debugging stream, or another owner's stream through the owner's handle on this node
   * (never opening it); an owned stream not open here fails with {@link StreamNotHeldHereException}.
   */
  CompletableFuture<FetchResult> read(long streamId, long offset, int maxBytes) {
    return stream(streamId)
        .exceptionallyCompose(err -> {
          if (unwrap(err) instanceof OwnedStreamException owned) {
            return storage.streamStore().stream(streamId).map(CompletableFuture::completedFuture)
                .orElseGet(() -> CompletableFuture.failedFuture(new StreamNotHeldHereException(owned.getMessage())));
          }
          return CompletableFuture.failedFuture(unwrap(err));
        })
        .thenCompose(s -> fetch(s, offset, maxBytes))
        .whenComplete((r, err) -> forgetIfUnusable(streamId, err));
  }

  private static CompletableFuture<FetchResult> fetch(Stream s, long offset, int maxBytes) {
    return s.fetch(offset, Math.max(offset, s.nextOffset()), maxBytes);
  }

  CompletableFuture<List<StreamView>> list(int limit) {
    List<Long> ids = directory.ids();
    List<Long> page = ids.subList(0, Math.min(limit, ids.size()));
    return storage.streamManager().getStreams(page).thenApply(metas -> {
      List<StreamView> views = new ArrayList<>(metas.size());
      for (StreamMetadata meta : metas) {
        views.add(view(meta));
      }
      return views;
    });
  }

  int openStreams() {
    return open.size();
  }

  private StreamView view(StreamMetadata meta) {
    CompletableFuture<Stream> held = open.get(meta.streamId());
    if (held != null && held.isDone() && !held.isCompletedExceptionally()) {
      Stream s = held.join();
      return new StreamView(meta.streamId(), s.epoch(), s.startOffset(), s.nextOffset(), true, meta.tags());
    }
    return new StreamView(meta.streamId(), meta.epoch(), meta.startOffset(), meta.endOffset(), false, meta.tags());
  }

  /** The open debugging stream, opening it on first use; another owner's stream fails with {@link OwnedStreamException}. */
  private CompletableFuture<Stream> stream(long streamId) {
    CompletableFuture<Stream> existing = open.get(streamId);
    if (existing != null) {
      return existing;
    }
    if (open.size() >= maxOpenStreams) {
      return CompletableFuture.failedFuture(new TooManyOpenStreamsException(maxOpenStreams));
    }
    CompletableFuture<Stream> opening = new CompletableFuture<>();
    CompletableFuture<Stream> raced = open.putIfAbsent(streamId, opening);
    if (raced != null) {
      return raced;
    }
    storage.streamManager().getStreams(List.of(streamId))
        .thenCompose(metas -> {
          if (metas.isEmpty()) {
            throw new StreamNotFoundException("stream " + streamId + " does not exist");
          }
          StreamMetadata meta = metas.get(0);
          if (!CREATED_BY.equals(meta.tags().get(CREATED_BY_TAG))) {
            throw new OwnedStreamException(streamId, meta.tags());
          }
          return storage.streamStore().openStream(streamId, meta.epoch() + 1);
        })
        .whenComplete((s, err) -> {
          if (err != null) {
            open.remove(streamId, opening);
            opening.completeExceptionally(unwrap(err));
          } else {
            opening.complete(s);
          }
        });
    return opening;
  }

  private void forgetIfUnusable(long streamId, Throwable err) {
    Throwable cause = err == null ? null : unwrap(err);
    if (cause instanceof StreamFencedException || cause instanceof StreamClosedException) {
      open.remove(streamId);
    }
  }

  /** The stream has an owner other than this API (its tags say which); nothing was opened or written. */
  static final class OwnedStreamException extends RuntimeException {
    OwnedStreamException(long streamId, Map<String, String> tags) {
      super("stream " + streamId + " " + owner(tags) + "; the debugging API writes only the streams it created "
          + "and reads others only while their owner holds them open on this node");
    }

    private static String owner(Map<String, String> tags) {
      if (tags.containsKey("topic")) {
        return "is the " + tags.getOrDefault("kind", "") + " stream of partition " + tags.get("topic") + "-"
            + tags.getOrDefault("partition", "?");
      }
      return "belongs to another component (tags " + new TreeMap<>(tags) + ")";
    }
  }

  /** A read of an owned stream that is not open on this node; read it where its owner runs, or through Kafka. */
  static final class StreamNotHeldHereException extends RuntimeException {
    StreamNotHeldHereException(String message) {
      super(message + "; it is not open here (read a partition with a Kafka consumer)");
    }
  }

  static Throwable unwrap(Throwable err) {
    Throwable t = err;
    while (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
