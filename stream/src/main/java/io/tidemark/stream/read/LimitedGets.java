package io.tidemark.stream.read;

import io.tidemark.stream.objectstore.MultipartUpload;
import io.tidemark.stream.objectstore.ObjectInfo;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The object storage as the cold read path sees it: every GET passes through the
 * {@link GetLimiter}; the read path issues no other call (the others delegate, unbounded, for
 * completeness). Stateless beyond its two references; thread-safe.
 */
final class LimitedGets implements ObjectStorage {

  private final ObjectStorage storage;
  private final GetLimiter limiter;

  LimitedGets(ObjectStorage storage, GetLimiter limiter) {
    this.storage = storage;
    this.limiter = limiter;
  }

  @Override
  public CompletableFuture<ByteBuffer> get(String key, long start, long end) {
    return limiter.submit(() -> storage.get(key, start, end));
  }

  @Override
  public CompletableFuture<Void> put(String key, ByteBuffer data) {
    return storage.put(key, data);
  }

  @Override
  public CompletableFuture<MultipartUpload> startMultipartUpload(String key) {
    return storage.startMultipartUpload(key);
  }

  @Override
  public CompletableFuture<Void> delete(List<String> keys) {
    return storage.delete(keys);
  }

  @Override
  public CompletableFuture<List<ObjectInfo>> list(String prefix) {
    return storage.list(prefix);
  }

  @Override
  public long minPartSizeBytes() {
    return storage.minPartSizeBytes();
  }

  @Override
  public void close() {
    // The underlying storage belongs to the engine; it closes it.
  }
}
