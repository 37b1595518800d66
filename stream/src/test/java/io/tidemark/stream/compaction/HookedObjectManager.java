package io.tidemark.stream.compaction;

import io.tidemark.stream.metadata.CommitStreamObjectRequest;
import io.tidemark.stream.metadata.CommitStreamSetObjectRequest;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.ObjectManager;
import io.tidemark.stream.metadata.ObjectMetadata;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Test wrapper of an {@link ObjectManager}: by default delegates; a test can make commits fail
 * with a chosen error instead of reaching the delegate, or run an action just before ids are
 * prepared (to simulate a concurrent trim while a run is working).
 */
final class HookedObjectManager implements ObjectManager {

  private final ObjectManager delegate;
  volatile Supplier<RuntimeException> commitFailure;
  volatile Runnable beforePrepare = () -> {};

  HookedObjectManager(ObjectManager delegate) {
    this.delegate = delegate;
  }

  @Override
  public CompletableFuture<Long> prepareObjects(NodeRef node, int count, long ttlMs) {
    beforePrepare.run();
    return delegate.prepareObjects(node, count, ttlMs);
  }

  @Override
  public CompletableFuture<Void> commitStreamSetObject(NodeRef node, CommitStreamSetObjectRequest request) {
    Supplier<RuntimeException> failure = commitFailure;
    return failure != null ? CompletableFuture.failedFuture(failure.get())
        : delegate.commitStreamSetObject(node, request);
  }

  @Override
  public CompletableFuture<Void> commitStreamObject(NodeRef node, CommitStreamObjectRequest request) {
    Supplier<RuntimeException> failure = commitFailure;
    return failure != null ? CompletableFuture.failedFuture(failure.get()) : delegate.commitStreamObject(node, request);
  }

  @Override
  public CompletableFuture<List<ObjectMetadata>> getObjects(long streamId, long startOffset, long endOffset, int limit) {
    return delegate.getObjects(streamId, startOffset, endOffset, limit);
  }

  @Override
  public CompletableFuture<List<ObjectMetadata>> getStreamSetObjects(int nodeId) {
    return delegate.getStreamSetObjects(nodeId);
  }

  @Override
  public CompletableFuture<List<ObjectMetadata>> getStreamObjects(long streamId) {
    return delegate.getStreamObjects(streamId);
  }
}
