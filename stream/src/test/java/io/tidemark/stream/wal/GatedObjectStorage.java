package io.tidemark.stream.wal;

import io.tidemark.stream.objectstore.MemoryObjectStorage;
import io.tidemark.stream.objectstore.MultipartUpload;
import io.tidemark.stream.objectstore.ObjectInfo;
import io.tidemark.stream.objectstore.ObjectStorage;
import io.tidemark.stream.objectstore.ObjectStorageException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * Test helper: memory object storage whose PUTs can be held back (to order a stale writer's PUT
 * after a new writer's recovery, or to stall uploads) or failed a number of times.
 */
final class GatedObjectStorage implements ObjectStorage {

  final MemoryObjectStorage delegate = new MemoryObjectStorage();
  private final List<Runnable> held = new ArrayList<>();
  private final AtomicInteger failures = new AtomicInteger();
  private volatile Predicate<String> holding = key -> false;
  private volatile java.util.concurrent.ScheduledExecutorService delayer;
  private volatile java.util.function.IntSupplier delayMicros;

  /** From now on every PUT takes effect asynchronously after {@code delayMicros} on {@code executor}. */
  void delayPuts(java.util.concurrent.ScheduledExecutorService executor, java.util.function.IntSupplier micros) {
    delayMicros = micros;
    delayer = executor;
  }

  /** Holds every later PUT whose key matches until {@link #release()}. */
  synchronized void hold(Predicate<String> keys) {
    holding = keys;
  }

  /** Lets the held PUTs happen (in order) and stops holding. */
  void release() {
    List<Runnable> now;
    synchronized (this) {
      holding = key -> false;
      now = new ArrayList<>(held);
      held.clear();
    }
    now.forEach(Runnable::run);
  }

  synchronized int heldCount() {
    return held.size();
  }

  /** The next {@code n} PUTs fail. */
  void failNextPuts(int n) {
    failures.set(n);
  }

  int failuresLeft() {
    return failures.get();
  }

  @Override
  public CompletableFuture<Void> put(String key, ByteBuffer data) {
    if (failures.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      return CompletableFuture.failedFuture(new ObjectStorageException("injected failure for " + key));
    }
    ByteBuffer copy = ByteBuffer.allocate(data.remaining()).put(data.duplicate()).flip();
    synchronized (this) {
      if (holding.test(key)) {
        CompletableFuture<Void> result = new CompletableFuture<>();
        held.add(() -> delegate.put(key, copy).whenComplete((v, e) -> result.complete(null)));
        return result;
      }
    }
    java.util.concurrent.ScheduledExecutorService executor = delayer;
    if (executor != null) {
      CompletableFuture<Void> result = new CompletableFuture<>();
      executor.schedule(() -> delegate.put(key, copy).whenComplete((v, e) -> result.complete(null)),
          delayMicros.getAsInt(), java.util.concurrent.TimeUnit.MICROSECONDS);
      return result;
    }
    return delegate.put(key, copy);
  }

  @Override
  public CompletableFuture<MultipartUpload> startMultipartUpload(String key) {
    return delegate.startMultipartUpload(key);
  }

  @Override
  public CompletableFuture<ByteBuffer> get(String key, long start, long end) {
    return delegate.get(key, start, end);
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
  public void close() {}
}
