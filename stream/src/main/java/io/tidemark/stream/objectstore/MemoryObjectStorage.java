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
 * a sorted map; every call completes immediately. Thread-safe.
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
    objects.put(key, new Entry(copy(data), clockMs.getAsLong()));
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletableFuture<MultipartUpload> startMultipartUpload(String key) {
    return CompletableFuture.completedFuture(new MemoryMultipartUpload(key));
  }

  @Override
  public CompletableFuture<ByteBuffer> get(String key, long start, long end) {
    Entry entry = objects.get(key);
    if (entry == null) {
      return CompletableFuture.failedFuture(new ObjectNotFoundException(key));
    }
    int length = entry.data.length;
    int from = (int) Math.min(start, length);
    int to = end == TO_END ? length : (int) Math.min(end, length);
    if (from > to) {
      return CompletableFuture.failedFuture(
          new ObjectStorageException("invalid range [" + start + ", " + end + ") for " + key));
    }
    return CompletableFuture.completedFuture(ByteBuffer.wrap(entry.data, from, to - from).slice().asReadOnlyBuffer());
  }

  @Override
  public CompletableFuture<Void> delete(List<String> keys) {
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

  private final class MemoryMultipartUpload implements MultipartUpload {
    private final String key;
    private final ConcurrentSkipListMap<Integer, byte[]> parts = new ConcurrentSkipListMap<>();

    MemoryMultipartUpload(String key) {
      this.key = key;
    }

    @Override
    public String key() {
      return key;
    }

    @Override
    public CompletableFuture<Void> uploadPart(int partNumber, ByteBuffer data) {
      if (partNumber < 1 || partNumber > 10_000) {
        return CompletableFuture.failedFuture(
            new ObjectStorageException("part number " + partNumber + " outside [1, 10000] for " + key));
      }
      parts.put(partNumber, copy(data));
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<Void> complete() {
      int size = parts.values().stream().mapToInt(p -> p.length).sum();
      ByteBuffer whole = ByteBuffer.allocate(size);
      parts.values().forEach(whole::put);
      return put(key, whole.flip());
    }

    @Override
    public CompletableFuture<Void> abort() {
      parts.clear();
      return CompletableFuture.completedFuture(null);
    }
  }
}
