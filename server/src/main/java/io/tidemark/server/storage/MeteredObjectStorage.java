package io.tidemark.server.storage;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.tidemark.stream.objectstore.MultipartUpload;
import io.tidemark.stream.objectstore.ObjectInfo;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Counts and times every object storage request by operation and outcome
 * ({@code tidemark_objectstore_requests_seconds}) and the bytes written and read
 * ({@code tidemark_objectstore_bytes_total}), around any {@link ObjectStorage}. The table topics'
 * own storage is metered under another name ({@link #forTables}: {@code tidemark_table_objectstore_*}),
 * so that the table path's cost can be priced next to the log's. Adds no state of its own beyond
 * meters; thread-safe as the delegate is.
 */
public final class MeteredObjectStorage implements ObjectStorage {

  private static final List<String> OPERATIONS = List.of("put", "multipart.start", "multipart.part", "multipart.complete",
      "multipart.abort", "get", "delete", "list");

  private final ObjectStorage delegate;
  /** By operation: the timers of its successes and of its errors, registered up front (a request builds no meter id). */
  private final Map<String, Timer[]> requests;
  private final Counter writtenBytes;
  private final Counter readBytes;

  MeteredObjectStorage(ObjectStorage delegate, MeterRegistry meters) {
    this(delegate, meters, "tidemark.objectstore", "");
  }

  private MeteredObjectStorage(ObjectStorage delegate, MeterRegistry meters, String name, String whose) {
    this.delegate = delegate;
    Map<String, Timer[]> timers = new HashMap<>();
    for (String operation : OPERATIONS) {
      timers.put(operation, new Timer[] {timer(meters, name, whose, operation, "success"),
          timer(meters, name, whose, operation, "error")});
    }
    this.requests = Map.copyOf(timers);
    String bytesDoc = "Bytes written to (PUT, parts) and read from (GET) object storage" + whose;
    this.writtenBytes = Counter.builder(name + ".bytes").tag("direction", "written").description(bytesDoc)
        .baseUnit("bytes").register(meters);
    this.readBytes = Counter.builder(name + ".bytes").tag("direction", "read").description(bytesDoc)
        .baseUnit("bytes").register(meters);
  }

  /**
   * The table topics' warehouse storage, metered as {@code tidemark.table.objectstore.requests} and
   * {@code tidemark.table.objectstore.bytes} (only what reaches it through Tidemark's object storage:
   * the embedded catalog's warehouse on S3; plain local files and external catalogs' FileIOs are not counted).
   */
  public static ObjectStorage forTables(ObjectStorage delegate, MeterRegistry meters) {
    return new MeteredObjectStorage(delegate, meters, "tidemark.table.objectstore", " by the table topics");
  }

  private <T> CompletableFuture<T> timed(String operation, Supplier<CompletableFuture<T>> call) {
    long start = System.nanoTime();
    CompletableFuture<T> future;
    try {
      future = call.get();
    } catch (RuntimeException e) {
      record(operation, "error", start);
      throw e;
    }
    return future.whenComplete((v, err) -> record(operation, err == null ? "success" : "error", start));
  }

  private static Timer timer(MeterRegistry meters, String name, String whose, String operation, String outcome) {
    return Timer.builder(name + ".requests").description("Object storage requests" + whose + " by operation and outcome")
        .tag("operation", operation).tag("outcome", outcome).register(meters);
  }

  private void record(String operation, String outcome, long startNanos) {
    requests.get(operation)[outcome.equals("success") ? 0 : 1]
        .record(System.nanoTime() - startNanos, java.util.concurrent.TimeUnit.NANOSECONDS);
  }

  @Override
  public CompletableFuture<Void> put(String key, ByteBuffer data) {
    int size = data.remaining();
    return timed("put", () -> delegate.put(key, data)).whenComplete((v, err) -> {
      if (err == null) {
        writtenBytes.increment(size);
      }
    });
  }

  @Override
  public CompletableFuture<MultipartUpload> startMultipartUpload(String key) {
    return timed("multipart.start", () -> delegate.startMultipartUpload(key)).thenApply(upload -> new MultipartUpload() {
      @Override
      public String key() {
        return upload.key();
      }

      @Override
      public CompletableFuture<Void> uploadPart(int partNumber, ByteBuffer data) {
        int size = data.remaining();
        return timed("multipart.part", () -> upload.uploadPart(partNumber, data)).whenComplete((v, err) -> {
          if (err == null) {
            writtenBytes.increment(size);
          }
        });
      }

      @Override
      public CompletableFuture<Void> complete() {
        return timed("multipart.complete", upload::complete);
      }

      @Override
      public CompletableFuture<Void> abort() {
        return timed("multipart.abort", upload::abort);
      }
    });
  }

  @Override
  public CompletableFuture<ByteBuffer> get(String key, long start, long end) {
    return timed("get", () -> delegate.get(key, start, end)).whenComplete((b, err) -> {
      if (b != null) {
        readBytes.increment(b.remaining());
      }
    });
  }

  @Override
  public CompletableFuture<Void> delete(List<String> keys) {
    return timed("delete", () -> delegate.delete(keys));
  }

  @Override
  public CompletableFuture<List<ObjectInfo>> list(String prefix) {
    return timed("list", () -> delegate.list(prefix));
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
