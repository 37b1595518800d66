package io.tidemark.stream.object;

import io.tidemark.stream.objectstore.MultipartUpload;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Writes an {@link EncodedObject} to object storage: one PUT when it fits in a part, else a
 * multipart upload with parts of {@code partSizeBytes} (at least the store's minimum), aborted
 * if any part fails. Stateless.
 */
public final class ObjectUploader {

  private ObjectUploader() {}

  public static CompletableFuture<Void> upload(ObjectStorage storage, String key, EncodedObject object,
      long partSizeBytes) {
    long partSize = Math.max(partSizeBytes, storage.minPartSizeBytes());
    if (object.sizeBytes() <= partSize) {
      return storage.put(key, object.toByteBuffer());
    }
    List<ByteBuffer> parts = object.parts(partSize);
    return storage.startMultipartUpload(key).thenCompose(upload -> {
      List<CompletableFuture<Void>> uploads = new ArrayList<>(parts.size());
      for (int i = 0; i < parts.size(); i++) {
        uploads.add(upload.uploadPart(i + 1, parts.get(i)));
      }
      return CompletableFuture.allOf(uploads.toArray(CompletableFuture[]::new))
          .thenCompose(v -> upload.complete())
          .handle((v, error) -> error)
          .thenCompose(error -> error == null ? CompletableFuture.<Void>completedFuture(null) : abort(upload, error));
    });
  }

  private static CompletableFuture<Void> abort(MultipartUpload upload, Throwable error) {
    return upload.abort().handle((v, abortError) -> {
      throw error instanceof RuntimeException re ? re : new java.util.concurrent.CompletionException(error);
    });
  }
}
