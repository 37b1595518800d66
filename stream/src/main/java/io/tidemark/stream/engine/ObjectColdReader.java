package io.tidemark.stream.engine;

import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.metadata.ObjectManager;
import io.tidemark.stream.metadata.ObjectMetadata;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.object.ObjectReader;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The simplest {@link ColdReader}: locates objects through {@link ObjectManager#getObjects}, opens
 * each with an {@link ObjectReader} (footer + index) and reads the blocks needed. No caching, no
 * read-ahead (the block-cache reader replaces it behind the same interface). Stateless.
 */
public final class ObjectColdReader implements ColdReader {

  private final ObjectManager objects;
  private final ObjectStorage storage;
  private final ObjectKeys keys;
  private final int objectsPerLookup;

  public ObjectColdReader(ObjectManager objects, ObjectStorage storage, ObjectKeys keys, int objectsPerLookup) {
    this.objects = objects;
    this.storage = storage;
    this.keys = keys;
    this.objectsPerLookup = objectsPerLookup;
  }

  @Override
  public CompletableFuture<List<StreamBatch>> read(long streamId, long startOffset, long endOffset, int maxBytes) {
    return readFrom(streamId, startOffset, endOffset, maxBytes, new ArrayList<>());
  }

  private CompletableFuture<List<StreamBatch>> readFrom(long streamId, long cursor, long endOffset, int maxBytes,
      List<StreamBatch> result) {
    if (cursor >= endOffset || (!result.isEmpty() && bytes(result) >= maxBytes)) {
      return CompletableFuture.completedFuture(result);
    }
    return objects.getObjects(streamId, cursor, endOffset, objectsPerLookup).thenCompose(found -> {
      if (found.isEmpty()) {
        return CompletableFuture.completedFuture(result);
      }
      return readObjects(streamId, found, 0, cursor, endOffset, maxBytes, result).thenCompose(next ->
          next <= cursor ? CompletableFuture.completedFuture(result)
              : readFrom(streamId, next, endOffset, maxBytes, result));
    });
  }

  /** Reads from the objects in order; completes with the offset reached. */
  private CompletableFuture<Long> readObjects(long streamId, List<ObjectMetadata> found, int index, long cursor,
      long endOffset, int maxBytes, List<StreamBatch> result) {
    if (index >= found.size() || cursor >= endOffset || (!result.isEmpty() && bytes(result) >= maxBytes)) {
      return CompletableFuture.completedFuture(cursor);
    }
    ObjectMetadata object = found.get(index);
    long remaining = Math.max(1, maxBytes - bytes(result));
    return ObjectReader.open(storage, keys.key(object.objectId()), object.sizeBytes())
        .thenCompose(reader -> reader.read(streamId, cursor, endOffset, remaining))
        .thenCompose(batches -> {
          long next = cursor;
          for (StreamBatch b : batches) {
            if (b.nextOffset() <= next) {
              continue;
            }
            if (b.baseOffset() > next) {
              break; // a hole in the located objects: return the contiguous part only
            }
            result.add(b);
            next = b.nextOffset();
          }
          if (next == cursor) {
            return CompletableFuture.completedFuture(cursor);
          }
          return readObjects(streamId, found, index + 1, next, endOffset, maxBytes, result);
        });
  }

  private static long bytes(List<StreamBatch> batches) {
    long total = 0;
    for (StreamBatch b : batches) {
      total += b.payload().remaining();
    }
    return total;
  }
}
