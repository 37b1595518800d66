package io.tidemark.stream.objectstore;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * One multipart upload in progress. Parts are numbered from 1 in the order they are uploaded;
 * uploads of different parts may run concurrently. Exactly one of {@link #complete()} or
 * {@link #abort()} ends it.
 */
public interface MultipartUpload {

  String key();

  /** Uploads part {@code partNumber} (1-based). */
  CompletableFuture<Void> uploadPart(int partNumber, ByteBuffer data);

  /** Publishes the object from the parts uploaded so far, in part-number order. */
  CompletableFuture<Void> complete();

  /** Discards the parts; the object is not created. */
  CompletableFuture<Void> abort();
}
