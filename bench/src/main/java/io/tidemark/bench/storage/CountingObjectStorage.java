package io.tidemark.bench.storage;

import io.tidemark.stream.objectstore.MultipartUpload;
import io.tidemark.stream.objectstore.ObjectInfo;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Wraps an {@link ObjectStorage} and counts write requests (PUTs, multipart parts and completions)
 * and the bytes they carry, and GETs and their bytes: the figures "PUTs per GiB uploaded" and
 * "cold-read bytes" come from here. Thread-safe (atomic counters).
 */
final class CountingObjectStorage implements ObjectStorage {

  private final ObjectStorage delegate;
  final AtomicLong writeRequests = new AtomicLong();
  final AtomicLong writtenBytes = new AtomicLong();
  final AtomicLong getRequests = new AtomicLong();
  final AtomicLong readBytes = new AtomicLong();

  CountingObjectStorage(ObjectStorage delegate) {
    this.delegate = delegate;
  }

  @Override
  public CompletableFuture<Void> put(String key, ByteBuffer data) {
    writeRequests.incrementAndGet();
    writtenBytes.addAndGet(data.remaining());
    return delegate.put(key, data);
  }

  @Override
  public CompletableFuture<MultipartUpload> startMultipartUpload(String key) {
    writeRequests.incrementAndGet();
    return delegate.startMultipartUpload(key).thenApply(upload -> new MultipartUpload() {
      @Override
      public String key() {
        return upload.key();
      }

      @Override
      public CompletableFuture<Void> uploadPart(int partNumber, ByteBuffer data) {
        writeRequests.incrementAndGet();
        writtenBytes.addAndGet(data.remaining());
        return upload.uploadPart(partNumber, data);
      }

      @Override
      public CompletableFuture<Void> complete() {
        writeRequests.incrementAndGet();
        return upload.complete();
      }

      @Override
      public CompletableFuture<Void> abort() {
        return upload.abort();
      }
    });
  }

  @Override
  public CompletableFuture<ByteBuffer> get(String key, long start, long end) {
    getRequests.incrementAndGet();
    return delegate.get(key, start, end).whenComplete((b, err) -> {
      if (b != null) {
        readBytes.addAndGet(b.remaining());
      }
    });
  }

  @Override
  public CompletableFuture<Void> delete(List<String> keys) {
    return delegate.delete(keys);
  }

  @Override
  public CompletableFuture<List<ObjectInfo>> list(String prefix) {
    return delegate.list(prefix);
  }

  @Override
  public long minPartSizeBytes() {
    return delegate.minPartSizeBytes();
  }

  @Override
  public void close() {
    delegate.close();
  }
}
