package io.tidemark.stream.objectstore;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The object storage seam: S3 and S3-compatible stores, the local filesystem, memory, and a
 * fault-injecting wrapper all implement it; the contract suite {@code ObjectStorageContractTest}
 * runs against each.
 *
 * <p>Keys are flat strings ({@code a/b/c}); a {@code /} has no meaning beyond prefix listing.
 * Every call is asynchronous and never blocks the caller. Implementations bound their own
 * concurrency (a call beyond the bound waits in a bounded queue, then fails with
 * {@link ObjectStorageException}); callers never see unbounded growth.
 *
 * <p>Outcomes: a future completes normally on success; with {@link ObjectNotFoundException} when a
 * key (or the bucket) does not exist; with {@link UnknownOutcomeException} when the request may or
 * may not have taken effect (a timeout after sending): callers must reconcile, never clean up
 * blindly; with {@link ObjectStorageException} for every other failure after retries.
 */
public interface ObjectStorage extends AutoCloseable {

  /** Writes the whole object atomically: readers see the old object (or none) or the new one. */
  CompletableFuture<Void> put(String key, ByteBuffer data);

  /**
   * Starts a multipart upload for a large object. Parts are at least {@link #minPartSizeBytes()}
   * except the last; the object becomes visible only on {@link MultipartUpload#complete()}.
   */
  CompletableFuture<MultipartUpload> startMultipartUpload(String key);

  /**
   * Reads bytes {@code [start, end)} of an object. {@code end} may be {@link #TO_END} for the rest
   * of the object. A range past the end of the object returns the bytes that exist.
   */
  CompletableFuture<ByteBuffer> get(String key, long start, long end);

  /** Deletes the keys in as few requests as the store allows; absent keys are not an error. */
  CompletableFuture<Void> delete(List<String> keys);

  /** Lists every object whose key starts with {@code prefix}, in key order. */
  CompletableFuture<List<ObjectInfo>> list(String prefix);

  /** The smallest part size a multipart upload accepts (S3: 5 MiB). */
  default long minPartSizeBytes() {
    return 5L * 1024 * 1024;
  }

  /** Reads the whole object. */
  default CompletableFuture<ByteBuffer> get(String key) {
    return get(key, 0, TO_END);
  }

  /** Marks "to the end of the object" in {@link #get(String, long, long)}. */
  long TO_END = -1;

  @Override
  void close();
}
