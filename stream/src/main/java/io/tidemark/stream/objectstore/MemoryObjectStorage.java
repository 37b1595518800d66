package io.tidemark.stream.objectstore;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.LongSupplier;

/**
 * Object storage in memory, for unit tests and simulations. Objects are immutable byte arrays in
 * a sorted map; every call completes immediately (on the caller's thread, without blocking).
 * Thread-safe. Keys are listed in {@link String} order. Data passed to {@link #put} is copied
 * before the call returns.
 *
 * <p>A multipart upload is OPEN until {@code complete()} (COMPLETED) or {@code abort()} (ABORTED);
 * any later call on it fails, as it does on S3.
 */
public final class MemoryObjectStorage implements ObjectStorage {

  private record Entry(byte[] data, long lastModifiedMs) {}

  private final ConcurrentSkipListMap<String, Entry> objects = new ConcurrentSkipListMap<>();
  private final LongSupplier clockMs;

  public MemoryObjectStorage() {
    this(System::currentTimeMillis);
  }

  public MemoryObjectStorage(LongSupplier clockMs) {
    this.clockMs = clockMs;
  }

  @Override
  public CompletableFuture<Void> put(String key, ByteBuffer data) {
    String bad = ObjectKeys.checkKey(key);
    if (bad != null || data == null) {
      return ObjectKeys.invalid(bad != null ? bad : "no data for " + key);
    }
    objects.put(key, new Entry(copy(data), clockMs.getAsLong()));
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletableFuture<MultipartUpload> startMultipartUpload(String key) {
    String bad = ObjectKeys.checkKey(key);
    if (bad != null) {
      return ObjectKeys.invalid(bad);
    }
    return CompletableFuture.completedFuture(new MemoryMultipartUpload(key));
  }

  @Override
  public CompletableFuture<ByteBuffer> get(String key, long start, long end) {
    String bad = ObjectKeys.checkKey(key);
    if (bad == null) {
      bad = ObjectKeys.checkRange(key, start, end);
    }
    if (bad != null) {
      return ObjectKeys.invalid(bad);
    }
    Entry entry = objects.get(key);
    if (entry == null) {
      return CompletableFuture.failedFuture(new ObjectNotFoundException(key));
    }
    int length = entry.data.length;
    int from = (int) Math.min(start, length);
    int to = end == TO_END ? length : (int) Math.min(end, length);
    return CompletableFuture.completedFuture(ByteBuffer.wrap(entry.data, from, to - from).slice().asReadOnlyBuffer());
  }

  @Override
  public CompletableFuture<Void> delete(List<String> keys) {
    for (String key : keys) {
      String bad = ObjectKeys.checkKey(key);
      if (bad != null) {
        return ObjectKeys.invalid(bad);
      }
    }
    keys.forEach(objects::remove);
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletableFuture<List<ObjectInfo>> list(String prefix) {
    List<ObjectInfo> result = new ArrayList<>();
    for (Map.Entry<String, Entry> e : objects.tailMap(prefix, true).entrySet()) {
      if (!e.getKey().startsWith(prefix)) {
        break;
      }
      result.add(new ObjectInfo(e.getKey(), e.getValue().data.length, e.getValue().lastModifiedMs));
    }
    return CompletableFuture.completedFuture(result);
  }

  @Override
  public long minPartSizeBytes() {
    return 1;
  }

  @Override
  public void close() {}

  private static byte[] copy(ByteBuffer data) {
    byte[] bytes = new byte[data.remaining()];
    data.duplicate().get(bytes);
    return bytes;
  }

  private enum UploadState { OPEN, COMPLETED, ABORTED }

  private final class MemoryMultipartUpload implements MultipartUpload {
    private final String key;
    private final ConcurrentSkipListMap<Integer, byte[]> parts = new ConcurrentSkipListMap<>();
    private UploadState state = UploadState.OPEN;

    MemoryMultipartUpload(String key) {
      this.key = key;
    }

    @Override
    public String key() {
      return key;
    }

    @Override
    public CompletableFuture<Void> uploadPart(int partNumber, ByteBuffer data) {
      if (partNumber < 1 || partNumber > 10_000 || data == null) {
        return ObjectKeys.invalid("part number " + partNumber + " outside [1, 10000] or no data for " + key);
      }
      synchronized (this) {
        if (state != UploadState.OPEN) {
          return notOpen("upload a part");
        }
        parts.put(partNumber, copy(data));
      }
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<Void> complete() {
      ByteBuffer whole;
      synchronized (this) {
        if (state != UploadState.OPEN) {
          return notOpen("complete");
        }
        if (parts.isEmpty()) {
          return CompletableFuture.failedFuture(
              new ObjectStorageException("cannot complete multipart upload of " + key + " without parts"));
        }
        state = UploadState.COMPLETED;
        long size = parts.values().stream().mapToLong(p -> p.length).sum();
        if (size > Integer.MAX_VALUE - 16) {
          return CompletableFuture.failedFuture(
              new ObjectStorageException("object " + key + " of " + size + " bytes is too large for memory storage"));
        }
        whole = ByteBuffer.allocate((int) size);
        parts.values().forEach(whole::put);
        parts.clear();
      }
      return put(key, whole.flip());
    }

    @Override
    public CompletableFuture<Void> abort() {
      synchronized (this) {
        if (state == UploadState.COMPLETED) {
          return notOpen("abort");
        }
        state = UploadState.ABORTED;
        parts.clear();
      }
      return CompletableFuture.completedFuture(null);
    }

    private <T> CompletableFuture<T> notOpen(String action) {
      return CompletableFuture.failedFuture(new ObjectStorageException(
          "cannot " + action + ": multipart upload of " + key + " is " + state));
    }
  }
}
