package io.tidemark.stream.engine;

import io.tidemark.stream.metadata.CommitStreamSetObjectRequest;
import io.tidemark.stream.metadata.CommitStreamSetObjectRequest.StreamObject;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.ObjectManager;
import io.tidemark.stream.metadata.StreamRange;
import io.tidemark.stream.object.EncodedObject;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.object.ObjectUploader;
import io.tidemark.stream.object.ObjectWriter;
import io.tidemark.stream.object.StreamRecordBatch;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * One upload attempt: streams with at least {@code stream.object.split.bytes} become stream
 * objects, the rest share one stream-set object; ids are reserved with one
 * {@code prepareObjects}, objects are encoded on the upload executor and written (multipart when
 * large; each write retried with backoff up to {@code stream.upload.retry.max}), then everything is committed with one {@code commitStreamSetObject}. A failed attempt
 * leaves only uncommitted objects behind; the metadata authority deletes them when their ids
 * expire. Stateless apart from its collaborators; the engine runs one attempt at a time.
 */
final class Uploader {

  /** What an attempt uploads: per stream (ascending), contiguous batches, and the epoch to commit them under. */
  record Batches(SortedMap<Long, List<StreamRecordBatch>> byStream, Map<Long, Long> epochs) {}

  private final NodeRef node;
  private final ObjectManager objects;
  private final ObjectStorage storage;
  private final ObjectKeys keys;
  private final StreamEngineConfig config;
  private final Executor encodeExecutor;
  private final io.tidemark.stream.time.Scheduler scheduler;

  Uploader(NodeRef node, ObjectManager objects, ObjectStorage storage, ObjectKeys keys, StreamEngineConfig config,
      Executor encodeExecutor, io.tidemark.stream.time.Scheduler scheduler) {
    this.node = node;
    this.objects = objects;
    this.storage = storage;
    this.keys = keys;
    this.config = config;
    this.encodeExecutor = encodeExecutor;
    this.scheduler = scheduler;
  }

  CompletableFuture<Void> upload(Batches batches) {
    List<Long> split = new ArrayList<>();
    List<Long> shared = new ArrayList<>();
    batches.byStream().forEach((streamId, list) -> {
      long bytes = 0;
      for (StreamRecordBatch b : list) {
        bytes += b.encodedBytes();
      }
      (bytes >= config.objectSplitBytes() ? split : shared).add(streamId);
    });
    int count = split.size() + (shared.isEmpty() ? 0 : 1);
    if (count == 0) {
      return CompletableFuture.completedFuture(null);
    }
    return objects.prepareObjects(node, count, config.objectPrepareTtlMs())
        .thenComposeAsync(firstId -> writeAndCommit(batches, firstId, shared, split), encodeExecutor);
  }

  private CompletableFuture<Void> writeAndCommit(Batches batches, long firstId, List<Long> shared, List<Long> split) {
    List<CompletableFuture<Void>> writes = new ArrayList<>();
    long nextId = firstId;
    long setObjectId = -1;
    long setSize = 0;
    List<StreamRange> setRanges = new ArrayList<>();
    if (!shared.isEmpty()) {
      setObjectId = nextId++;
      ObjectWriter writer = new ObjectWriter(config.objectBlockSizeBytes());
      for (long streamId : shared) {
        List<StreamRecordBatch> list = batches.byStream().get(streamId);
        list.forEach(writer::append);
        setRanges.add(rangeOf(streamId, list, batches.epochs()));
      }
      EncodedObject object = writer.finish();
      setSize = object.sizeBytes();
      writes.add(write(keys.key(setObjectId), object, 0));
    }
    List<StreamObject> streamObjects = new ArrayList<>();
    for (long streamId : split) {
      long id = nextId++;
      List<StreamRecordBatch> list = batches.byStream().get(streamId);
      ObjectWriter writer = new ObjectWriter(config.objectBlockSizeBytes());
      list.forEach(writer::append);
      EncodedObject object = writer.finish();
      streamObjects.add(new StreamObject(id, object.sizeBytes(), rangeOf(streamId, list, batches.epochs())));
      writes.add(write(keys.key(id), object, 0));
    }
    CommitStreamSetObjectRequest request = new CommitStreamSetObjectRequest(setObjectId, setSize, setRanges,
        streamObjects, List.of());
    return CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new))
        .thenCompose(v -> objects.commitStreamSetObject(node, request));
  }

  /**
   * Writes one object, retrying failed or unknown-outcome writes of the same key with backoff
   * (rewriting a key is harmless: the object is not committed yet, so nobody reads it).
   */
  private CompletableFuture<Void> write(String key, EncodedObject object, int attempt) {
    CompletableFuture<Void> written;
    try {
      written = ObjectUploader.upload(storage, key, object, config.objectPartSizeBytes());
    } catch (RuntimeException e) {
      written = CompletableFuture.failedFuture(e);
    }
    return written.handle((v, error) -> error).thenCompose(error -> {
      if (error == null) {
        return CompletableFuture.<Void>completedFuture(null);
      }
      if (attempt + 1 >= config.uploadRetryMax()) {
        return CompletableFuture.<Void>failedFuture(error);
      }
      long backoffMs = Math.min(config.uploadRetryBackoffMaxMs(), 50L << Math.min(attempt, 20));
      CompletableFuture<Void> delay = new CompletableFuture<>();
      scheduler.schedule(() -> delay.complete(null), backoffMs, TimeUnit.MILLISECONDS);
      return delay.thenCompose(v -> write(key, object, attempt + 1));
    });
  }

  private static StreamRange rangeOf(long streamId, List<StreamRecordBatch> list, Map<Long, Long> epochs) {
    return new StreamRange(streamId, epochs.get(streamId), list.getFirst().baseOffset(), list.getLast().nextOffset());
  }
}
