package io.tidemark.stream.compaction;

import io.tidemark.stream.metadata.ObjectMetadata;
import io.tidemark.stream.object.DataBlock;
import io.tidemark.stream.object.EncodedObject;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.object.ObjectReader;
import io.tidemark.stream.object.ObjectUploader;
import io.tidemark.stream.object.ObjectWriter;
import io.tidemark.stream.object.StreamRecordBatch;
import io.tidemark.stream.objectstore.ObjectStorage;
import io.tidemark.stream.read.GetLimiter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The object-storage side of compaction: reads whole input objects (index, then every block, at
 * most {@code maxConcurrentReads} objects at a time), encodes outputs with {@link ObjectWriter},
 * uploads them and deletes them again when a run is abandoned. Compaction reads bypass the block
 * cache on purpose: a run must not evict the data readers use. Stateless apart from its bound;
 * thread-safe.
 */
final class CompactionIo {

  private final ObjectStorage storage;
  private final ObjectKeys keys;
  private final CompactionConfig config;
  private final GetLimiter reads;

  CompactionIo(ObjectStorage storage, ObjectKeys keys, CompactionConfig config) {
    this.storage = storage;
    this.keys = keys;
    this.config = config;
    this.reads = new GetLimiter(config.maxConcurrentReads(), config.maxObjects());
  }

  /**
   * Every batch of the given objects of the streams their metadata still lists, grouped by stream
   * (each object's batches in offset order). A stream-set object whose range of a stream was replaced
   * by a rewrite ({@link ObjectStreamRewriter}) still holds those bytes; they are not read.
   */
  CompletableFuture<Map<Long, List<StreamRecordBatch>>> readAll(List<ObjectMetadata> objects) {
    return read(objects, -1);
  }

  /** The batches of {@code streamId} in the given objects; only that stream's blocks are fetched. */
  CompletableFuture<List<StreamRecordBatch>> readStream(List<ObjectMetadata> objects, long streamId) {
    return read(objects, streamId).thenApply(byStream -> byStream.getOrDefault(streamId, List.of()));
  }

  private CompletableFuture<Map<Long, List<StreamRecordBatch>>> read(List<ObjectMetadata> objects, long onlyStream) {
    List<CompletableFuture<List<DataBlock>>> all = new ArrayList<>(objects.size());
    for (ObjectMetadata o : objects) {
      all.add(reads.submit(() -> ObjectReader.open(storage, keys.key(o.objectId()), o.sizeBytes())
          .thenCompose(reader -> reader.readBlocks(reader.index().stream()
              .filter(e -> o.rangeOf(e.streamId()) != null && (onlyStream < 0 || e.streamId() == onlyStream))
              .toList()))));
    }
    return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).thenApply(v -> {
      Map<Long, List<StreamRecordBatch>> byStream = new HashMap<>();
      for (CompletableFuture<List<DataBlock>> blocks : all) {
        for (DataBlock block : blocks.join()) {
          byStream.computeIfAbsent(block.entry().streamId(), k -> new ArrayList<>()).addAll(block.batches());
        }
      }
      return byStream;
    });
  }

  /** Encodes runs (already in stream, offset order) into one object. */
  EncodedObject encode(List<CompactionLayout.Run> runs) {
    ObjectWriter writer = new ObjectWriter(config.blockSizeBytes());
    for (CompactionLayout.Run run : runs) {
      run.batches().forEach(writer::append);
    }
    return writer.finish();
  }

  CompletableFuture<Void> upload(long objectId, EncodedObject object) {
    return ObjectUploader.upload(storage, keys.key(objectId), object, config.partSizeBytes());
  }

  /** Deletes outputs of an abandoned run; never fails (the controller expires prepared ids anyway). */
  CompletableFuture<Void> deleteQuietly(List<Long> objectIds) {
    if (objectIds.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    List<String> objectKeys = objectIds.stream().map(keys::key).toList();
    return storage.delete(objectKeys).exceptionally(error -> null);
  }
}
