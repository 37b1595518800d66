package io.tidemark.stream.read;

import io.tidemark.stream.objectstore.MultipartUpload;
import io.tidemark.stream.objectstore.ObjectInfo;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Test wrapper around a store: counts GETs and, while the gate is closed, holds every GET
 * (the call is made only when the gate opens) so that tests can stall object reads without
 * sleeping. Other calls pass straight through. Thread-safe.
 */
public final class GatedStorage implements ObjectStorage {

  private final ObjectStorage delegate;
  private final AtomicInteger gets = new AtomicInteger();
  private final java.util.concurrent.atomic.AtomicLong requestedBytes = new java.util.concurrent.atomic.AtomicLong();
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger peakInFlight = new AtomicInteger();
  private final List<Runnable> held = new ArrayList<>();
  private boolean closed;

  public GatedStorage(ObjectStorage delegate) {
    this.delegate = delegate;
  }

  public synchronized void closeGate() {
    closed = true;
  }

  /** Opens the gate and releases every held GET. */
  public void openGate() {
    List<Runnable> release;
    synchronized (this) {
      closed = false;
      release = new ArrayList<>(held);
      held.clear();
    }
    release.forEach(Runnable::run);
  }

  public synchronized int heldGets() {
    return held.size();
  }

  public int gets() {
    return gets.get();
  }

  /** Bytes asked for by ranged GETs (whole-object GETs count 0). */
  public long requestedBytes() {
    return requestedBytes.get();
  }

  public int peakInFlight() {
    return peakInFlight.get();
  }

  @Override
  public CompletableFuture<ByteBuffer> get(String key, long start, long end) {
    gets.incrementAndGet();
    if (end != TO_END) {
      requestedBytes.addAndGet(end - start);
    }
    peakInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
    CompletableFuture<ByteBuffer> result = new CompletableFuture<>();
    Runnable call = () -> delegate.get(key, start, end).whenComplete((v, e) -> {
      inFlight.decrementAndGet();
      if (e != null) {
        result.completeExceptionally(e);
      } else {
        result.complete(v);
      }
    });
    synchronized (this) {
      if (closed) {
        held.add(call);
        return result;
      }
    }
    call.run();
    return result;
  }

  @Override
  public CompletableFuture<Void> put(String key, ByteBuffer data) {
    return delegate.put(key, data);
  }

  @Override
  public CompletableFuture<MultipartUpload> startMultipartUpload(String key) {
    return delegate.startMultipartUpload(key);
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
