package io.tidemark.stream.objectstore;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

import io.tidemark.stream.config.ConfigException;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.async.AsyncRequestBody;
import software.amazon.awssdk.core.async.AsyncResponseTransformer;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.async.SdkAsyncHttpClient;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.LegacyMd5Plugin;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.S3AsyncClientBuilder;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.S3Error;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Object storage on S3 or an S3-compatible store (MinIO, Ceph RGW, S3Proxy, ...) through the AWS
 * SDK v2 {@link S3AsyncClient} over the Netty NIO HTTP client. Owns the client, its connection
 * pool and (unless one is given) a single scheduler thread for retry delays.
 *
 * <p><b>Limits.</b> A {@link RequestLimiter} lets at most {@code maxConcurrency} operations run
 * (the connection pool has as many connections), queues {@code maxQueuedRequests} more and fails
 * the rest at once. An operation keeps its permit across its retries, so throttling slows every
 * caller down instead of multiplying requests.
 *
 * <p><b>Retries.</b> The SDK's own retries are off; this class retries throttling (503 SlowDown,
 * 429), server errors, connection errors and timeouts up to {@link RetryPolicy#maxAttempts()}
 * times with exponential backoff and full jitter (randomness and scheduler injected). Each attempt
 * is limited by {@code requestTimeoutMs}. Final outcomes: 404 gives {@link ObjectNotFoundException};
 * a mutating request (put, part, complete, abort, delete) of which any attempt may have reached the
 * store without an answer (a timeout or a dropped connection after sending, a 504) gives
 * {@link UnknownOutcomeException}: the caller must reconcile; exhausted throttling gives
 * {@link ThrottledException}; everything else {@link ObjectStorageException}. Reads that time out
 * fail with a plain {@link ObjectStorageException}, since they change nothing.
 *
 * <p><b>Buffers.</b> {@link #put} and {@code uploadPart} send the caller's buffer without copying
 * it: the caller must not modify it until the returned future completes. Ranges past the end of an
 * object return the bytes that exist (S3's 416 becomes an empty buffer).
 *
 * <p>Start-up: {@link #verify()} checks that the endpoint answers, the bucket exists and the keys
 * are accepted, failing with a {@link ConfigException} naming the setting at fault.
 *
 * <p>Thread-safe; futures complete on the SDK's completion threads or the retry scheduler.
 */
public final class S3ObjectStorage implements ObjectStorage {

  /** S3's limit on keys per DeleteObjects request. */
  static final int MAX_KEYS_PER_DELETE = 1000;
  private static final int LIST_PAGE_SIZE = 1000;
  private static final int VERIFY_MAX_ATTEMPTS = 3;

  private enum Effect { READ, MUTATE }

  private final S3Options options;
  private final AwsCredentialsProvider credentials;
  private final S3AsyncClient client;
  private final RequestLimiter limiter;
  private final ScheduledExecutorService scheduler;
  private final boolean ownsScheduler;
  private final DoubleSupplier random;
  private final AtomicLong retries = new AtomicLong();
  private volatile boolean closed;

  /** A store with its own retry scheduler thread and thread-local randomness for jitter. */
  public S3ObjectStorage(S3Options options) {
    this(options, null, () -> ThreadLocalRandom.current().nextDouble(), UnaryOperator.identity());
  }

  /**
   * A store with injected retry scheduling and jitter randomness ({@code random} returns values in
   * [0, 1)), and a hook that may wrap the HTTP client (tests inject faults at the HTTP level).
   * A null scheduler means one owned by this store.
   */
  S3ObjectStorage(S3Options options, ScheduledExecutorService scheduler, DoubleSupplier random,
      UnaryOperator<SdkAsyncHttpClient> httpClientWrapper) {
    this.options = options;
    this.random = random;
    this.ownsScheduler = scheduler == null;
    this.scheduler = scheduler != null ? scheduler : Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "tidemark-s3-retry");
      t.setDaemon(true);
      return t;
    });
    this.limiter = new RequestLimiter("S3 bucket " + options.bucket(), options.maxConcurrency(),
        options.maxQueuedRequests());
    this.credentials = credentials(options);
    this.client = buildClient(options, credentials, httpClientWrapper);
  }

  private static AwsCredentialsProvider credentials(S3Options options) {
    return options.accessKey() == null
        ? DefaultCredentialsProvider.builder().build()
        : StaticCredentialsProvider.create(AwsBasicCredentials.create(options.accessKey(), options.secretKey()));
  }

  private static S3AsyncClient buildClient(S3Options options, AwsCredentialsProvider credentials,
      UnaryOperator<SdkAsyncHttpClient> wrapper) {
    SdkAsyncHttpClient http = NettyNioAsyncHttpClient.builder()
        .maxConcurrency(options.maxConcurrency())
        .maxPendingConnectionAcquires(Math.max(1, options.maxConcurrency()))
        .connectionTimeout(Duration.ofMillis(options.connectTimeoutMs()))
        .connectionAcquisitionTimeout(Duration.ofMillis(options.requestTimeoutMs()))
        // Attempt timeouts are the SDK's; Netty's own read/write timeouts would only duplicate them.
        .readTimeout(Duration.ZERO)
        .writeTimeout(Duration.ZERO)
        .build();
    boolean whenRequired = options.checksum() == S3Options.Checksum.WHEN_REQUIRED;
    S3AsyncClientBuilder builder = S3AsyncClient.builder()
        .httpClient(wrapper.apply(http))
        .region(Region.of(options.region()))
        .forcePathStyle(options.pathStyle())
        .credentialsProvider(credentials)
        .requestChecksumCalculation(whenRequired
            ? RequestChecksumCalculation.WHEN_REQUIRED : RequestChecksumCalculation.WHEN_SUPPORTED)
        .responseChecksumValidation(whenRequired
            ? ResponseChecksumValidation.WHEN_REQUIRED : ResponseChecksumValidation.WHEN_SUPPORTED)
        .overrideConfiguration(o -> o
            .retryStrategy(AwsRetryStrategy.doNotRetry())
            .apiCallAttemptTimeout(Duration.ofMillis(options.requestTimeoutMs())));
    if (whenRequired) {
      // DeleteObjects requires a checksum; older MinIO and Ceph only accept Content-MD5 for it.
      builder.addPlugin(LegacyMd5Plugin.create());
      builder.putAuthScheme(new Md5ChecksumAuthScheme());
    }
    if (options.endpoint() != null) {
      builder.endpointOverride(options.endpoint());
    }
    return builder.build();
  }

  public S3Options options() {
    return options;
  }

  /** Attempts retried so far (for metrics and tests). */
  public long retries() {
    return retries.get();
  }

  /** Requests holding a concurrency permit now. */
  public int inFlight() {
    return limiter.inFlight();
  }

  // ---- start-up validation ----------------------------------------------------------------

  /**
   * Checks that the endpoint answers, the bucket exists and the credentials are accepted (one
   * ListObjectsV2 with max-keys 1). Fails with a {@link ConfigException} naming the setting at
   * fault: {@code storage.s3.endpoint}, {@code storage.s3.bucket}, {@code storage.s3.access.key},
   * {@code storage.s3.secret.key} or {@code storage.s3.region}.
   */
  public CompletableFuture<Void> verify() {
    RetryPolicy policy = options.retry().maxAttempts() <= VERIFY_MAX_ATTEMPTS ? options.retry()
        : new RetryPolicy(VERIFY_MAX_ATTEMPTS, options.retry().baseDelayMs(), options.retry().maxDelayMs());
    CompletableFuture<Void> result = new CompletableFuture<>();
    limiter.<Void>submit(() -> withRetries(policy, "verify bucket", "", Effect.READ,
            () -> client.listObjectsV2(b -> b.bucket(options.bucket()).maxKeys(1)).thenApply(r -> null),
            (error, ambiguous) -> error))
        .whenComplete((v, error) -> {
          if (error == null) {
            result.complete(null);
          } else {
            result.completeExceptionally(verifyFailure(S3Failure.unwrap(error)));
          }
        });
    return result;
  }

  private ConfigException verifyFailure(Throwable error) {
    String where = "S3 bucket '" + options.bucket() + "' at " + (options.endpoint() == null
        ? "AWS region " + options.region() : options.endpoint());
    if (error instanceof S3Exception s3) {
      String code = S3Failure.errorCode(s3);
      String detail = S3Failure.describe(s3);
      if ("NoSuchBucket".equals(code) || s3.statusCode() == 404) {
        return new ConfigException(ObjectStorageConfig.S3_BUCKET.name(),
            "bucket '" + options.bucket() + "' does not exist at " + where + " (" + detail + "); create it or fix the bucket name");
      }
      if ("InvalidAccessKeyId".equals(code)) {
        return new ConfigException(ObjectStorageConfig.S3_ACCESS_KEY.name(),
            "access key '" + options.accessKey() + "' is not known to " + where + " (" + detail + ")");
      }
      if ("SignatureDoesNotMatch".equals(code)) {
        return new ConfigException(ObjectStorageConfig.S3_SECRET_KEY.name(),
            "the secret key does not match access key '" + options.accessKey() + "' at " + where + " (" + detail + ")");
      }
      if ("AuthorizationHeaderMalformed".equals(code) || "PermanentRedirect".equals(code)
          || "IllegalLocationConstraintException".equals(code) || s3.statusCode() == 301) {
        return new ConfigException(ObjectStorageConfig.S3_REGION.name(),
            "region '" + options.region() + "' is not the region of " + where + " (" + detail + ")");
      }
      if (s3.statusCode() == 403) {
        return new ConfigException(ObjectStorageConfig.S3_ACCESS_KEY.name(),
            "the credentials of access key '" + options.accessKey() + "' may not list " + where + " (" + detail
                + "); grant s3:ListBucket, s3:GetObject, s3:PutObject and s3:DeleteObject on the bucket");
      }
      return new ConfigException(ObjectStorageConfig.S3_ENDPOINT.name(),
          where + " answered " + detail + " to a bucket listing: " + s3.getMessage());
    }
    if (error instanceof IllegalArgumentException || error instanceof ObjectStorageException) {
      // Our own wrapping, e.g. the limiter is closed.
      return new ConfigException(ObjectStorageConfig.S3_ENDPOINT.name(), error.getMessage());
    }
    String detail = S3Failure.describe(error);
    if (detail.contains("Unable to load credentials")) {
      return new ConfigException(ObjectStorageConfig.S3_ACCESS_KEY.name(),
          "no access key is set and the default AWS credentials chain found none (" + detail + ")");
    }
    return new ConfigException(ObjectStorageConfig.S3_ENDPOINT.name(),
        "cannot reach " + where + " after " + Math.min(VERIFY_MAX_ATTEMPTS, options.retry().maxAttempts())
            + " attempt(s): " + detail);
  }

  // ---- operations -------------------------------------------------------------------------

  @Override
  public CompletableFuture<Void> put(String key, ByteBuffer data) {
    String bad = ObjectKeys.checkKey(key);
    if (bad != null || data == null) {
      return ObjectKeys.invalid(bad != null ? bad : "no data for " + key);
    }
    return call("put", key, Effect.MUTATE, () -> client.putObject(
            b -> b.bucket(options.bucket()).key(key).contentLength((long) data.remaining()),
            AsyncRequestBody.fromByteBufferUnsafe(data.duplicate()))
        .thenApply(r -> null));
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
    if (end == start) {
      // An empty range still tells whether the object exists.
      return call("head", key, Effect.READ, () -> client.headObject(b -> b.bucket(options.bucket()).key(key))
          .thenApply(r -> ByteBuffer.allocate(0)));
    }
    String range = start == 0 && end == TO_END ? null : "bytes=" + start + "-" + (end == TO_END ? "" : end - 1);
    return call("get", key, Effect.READ, () -> client.getObject(
            b -> b.bucket(options.bucket()).key(key).range(range),
            AsyncResponseTransformer.<GetObjectResponse>toBytes())
        .thenApply(bytes -> rangeOf(bytes.asByteArrayUnsafe(), range != null && bytes.response().contentRange() == null,
            start, end))
        .exceptionallyCompose(error -> S3Failure.classify(error) == S3Failure.Kind.RANGE_NOT_SATISFIABLE
            ? CompletableFuture.completedFuture(ByteBuffer.allocate(0))
            : CompletableFuture.failedFuture(error)));
  }

  /**
   * The requested range of a GET answer. A store that ignores the Range header answers 200 with
   * the whole object and no Content-Range; then the range is cut here.
   */
  static ByteBuffer rangeOf(byte[] body, boolean wholeObject, long start, long end) {
    if (!wholeObject) {
      return ByteBuffer.wrap(body);
    }
    int from = (int) Math.min(start, body.length);
    int to = end == TO_END ? body.length : (int) Math.min(end, body.length);
    return ByteBuffer.wrap(body, from, to - from).slice();
  }

  @Override
  public CompletableFuture<Void> delete(List<String> keys) {
    for (String key : keys) {
      String bad = ObjectKeys.checkKey(key);
      if (bad != null) {
        return ObjectKeys.invalid(bad);
      }
    }
    List<String> unique = new ArrayList<>(new LinkedHashSet<>(keys));
    Map<String, String> failed = new ConcurrentHashMap<>();
    AtomicReference<Throwable> firstError = new AtomicReference<>();
    List<CompletableFuture<Void>> batches = new ArrayList<>();
    for (int from = 0; from < unique.size(); from += MAX_KEYS_PER_DELETE) {
      List<String> batch = unique.subList(from, Math.min(unique.size(), from + MAX_KEYS_PER_DELETE));
      batches.add(deleteBatch(batch).handle((errors, error) -> {
        if (error != null) {
          firstError.compareAndSet(null, S3Failure.unwrap(error));
          batch.forEach(k -> failed.put(k, S3Failure.unwrap(error).getMessage()));
        } else {
          failed.putAll(errors);
        }
        return null;
      }));
    }
    return CompletableFuture.allOf(batches.toArray(CompletableFuture[]::new)).thenCompose(v -> {
      if (failed.isEmpty()) {
        return CompletableFuture.completedFuture(null);
      }
      if (batches.size() == 1 && firstError.get() != null) {
        return CompletableFuture.failedFuture(firstError.get());
      }
      DeleteFailedException e = new DeleteFailedException(failed);
      if (firstError.get() != null) {
        e.initCause(firstError.get());
      }
      return CompletableFuture.failedFuture(e);
    });
  }

  /** One DeleteObjects request; completes with the keys S3 reported as not deleted. */
  private CompletableFuture<Map<String, String>> deleteBatch(List<String> batch) {
    List<ObjectIdentifier> ids = batch.stream().map(k -> ObjectIdentifier.builder().key(k).build()).toList();
    return call("delete " + batch.size() + " keys from", batch.get(0), Effect.MUTATE,
        () -> client.deleteObjects(b -> b.bucket(options.bucket()).delete(d -> d.objects(ids).quiet(true)))
            .thenApply(S3ObjectStorage::deleteErrors));
  }

  private static Map<String, String> deleteErrors(DeleteObjectsResponse response) {
    Map<String, String> errors = new java.util.TreeMap<>();
    for (S3Error error : response.errors()) {
      if (!"NoSuchKey".equals(error.code())) {
        errors.put(error.key(), error.code() + ": " + error.message());
      }
    }
    return errors;
  }

  @Override
  public CompletableFuture<List<ObjectInfo>> list(String prefix) {
    String p = prefix == null ? "" : prefix;
    List<ObjectInfo> result = new ArrayList<>();
    return listFrom(p, null, result).thenApply(v -> result);
  }

  private CompletableFuture<Void> listFrom(String prefix, String continuationToken, List<ObjectInfo> into) {
    return call("list", prefix, Effect.READ, () -> client.listObjectsV2(b -> b.bucket(options.bucket())
            .prefix(prefix.isEmpty() ? null : prefix)
            .maxKeys(LIST_PAGE_SIZE)
            .continuationToken(continuationToken)))
        .thenCompose((ListObjectsV2Response page) -> {
          for (S3Object o : page.contents()) {
            into.add(new ObjectInfo(o.key(), o.size() == null ? 0 : o.size(),
                o.lastModified() == null ? 0 : o.lastModified().toEpochMilli()));
          }
          if (Boolean.TRUE.equals(page.isTruncated()) && page.nextContinuationToken() != null) {
            return listFrom(prefix, page.nextContinuationToken(), into);
          }
          return CompletableFuture.completedFuture(null);
        });
  }

  @Override
  public CompletableFuture<MultipartUpload> startMultipartUpload(String key) {
    String bad = ObjectKeys.checkKey(key);
    if (bad != null) {
      return ObjectKeys.invalid(bad);
    }
    return call("start multipart upload of", key, Effect.MUTATE,
        () -> client.createMultipartUpload(b -> b.bucket(options.bucket()).key(key)))
        .thenApply(r -> new S3MultipartUpload(key, r.uploadId()));
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    limiter.close();
    client.close();
    if (credentials instanceof AutoCloseable closeable) {
      // The default chain may hold refresh threads; the SDK does not close providers it was given.
      try {
        closeable.close();
      } catch (Exception e) {
        // nothing to do on close
      }
    }
    if (ownsScheduler) {
      scheduler.shutdownNow();
    }
  }

  // ---- the retry loop ---------------------------------------------------------------------

  /** How a final failure becomes the caller's exception. */
  @FunctionalInterface
  private interface FailureMapper {
    Throwable map(Throwable error, boolean mayHaveTakenEffect);
  }

  private <T> CompletableFuture<T> call(String operation, String key, Effect effect,
      Supplier<CompletableFuture<T>> attempt) {
    return limiter.submit(() -> withRetries(options.retry(), operation, key, effect, attempt,
        (error, ambiguous) -> failure(operation, key, effect, error, ambiguous)));
  }

  private <T> CompletableFuture<T> withRetries(RetryPolicy policy, String operation, String key, Effect effect,
      Supplier<CompletableFuture<T>> attempt, FailureMapper mapper) {
    CompletableFuture<T> result = new CompletableFuture<>();
    runAttempt(1, false, policy, attempt, mapper, result);
    return result;
  }

  private <T> void runAttempt(int number, boolean ambiguousSoFar, RetryPolicy policy,
      Supplier<CompletableFuture<T>> attempt, FailureMapper mapper, CompletableFuture<T> result) {
    CompletableFuture<T> running;
    try {
      running = closed ? CompletableFuture.failedFuture(new ObjectStorageException("S3 object storage is closed"))
          : attempt.get();
    } catch (RuntimeException e) {
      running = CompletableFuture.failedFuture(e);
    }
    running.whenComplete((value, error) -> {
      if (error == null) {
        result.complete(value);
        return;
      }
      S3Failure.Kind kind = S3Failure.classify(error);
      boolean ambiguous = ambiguousSoFar || kind.mayHaveTakenEffect;
      if (!kind.retryable || number >= policy.maxAttempts() || closed) {
        result.completeExceptionally(mapper.map(error, ambiguous));
        return;
      }
      retries.incrementAndGet();
      long delayMs = policy.delayMs(number, random.getAsDouble());
      try {
        scheduler.schedule(() -> runAttempt(number + 1, ambiguous, policy, attempt, mapper, result),
            delayMs, TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException e) {
        result.completeExceptionally(mapper.map(error, ambiguous));
      }
    });
  }

  private Throwable failure(String operation, String key, Effect effect, Throwable error, boolean ambiguous) {
    Throwable cause = S3Failure.unwrap(error);
    S3Failure.Kind kind = S3Failure.classify(cause);
    String what = operation + " " + key + " in bucket " + options.bucket();
    if (effect == Effect.MUTATE && ambiguous) {
      return new UnknownOutcomeException(what + ": outcome unknown (" + S3Failure.describe(cause)
          + "); read the store to learn whether it took effect", cause);
    }
    if (kind == S3Failure.Kind.NOT_FOUND) {
      ObjectNotFoundException notFound = new ObjectNotFoundException(key);
      notFound.initCause(cause);
      return notFound;
    }
    if (cause instanceof IllegalArgumentException || cause instanceof ObjectStorageException) {
      return cause;
    }
    if (kind == S3Failure.Kind.THROTTLED) {
      return new ThrottledException(what + ": still throttled after " + options.retry().maxAttempts()
          + " attempt(s) (" + S3Failure.describe(cause) + ")", cause);
    }
    return new ObjectStorageException(what + " failed: " + S3Failure.describe(cause), cause);
  }

  // ---- multipart --------------------------------------------------------------------------

  private enum UploadState { OPEN, COMPLETING, COMPLETED, ABORTED }

  /**
   * One S3 multipart upload: OPEN while parts are uploaded, then COMPLETING and COMPLETED, or
   * ABORTED. Parts and their ETags are kept in part-number order for the completion request.
   */
  private final class S3MultipartUpload implements MultipartUpload {
    private final String key;
    private final String uploadId;
    private final ConcurrentSkipListMap<Integer, String> etags = new ConcurrentSkipListMap<>();
    private final AtomicReference<UploadState> state = new AtomicReference<>(UploadState.OPEN);

    S3MultipartUpload(String key, String uploadId) {
      this.key = key;
      this.uploadId = uploadId;
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
      if (state.get() != UploadState.OPEN) {
        return notOpen("upload a part");
      }
      return call("upload part " + partNumber + " of", key, Effect.MUTATE, () -> client.uploadPart(
              b -> b.bucket(options.bucket()).key(key).uploadId(uploadId).partNumber(partNumber)
                  .contentLength((long) data.remaining()),
              AsyncRequestBody.fromByteBufferUnsafe(data.duplicate())))
          .thenAccept(r -> etags.put(partNumber, r.eTag()));
    }

    @Override
    public CompletableFuture<Void> complete() {
      if (etags.isEmpty() && state.get() == UploadState.OPEN) {
        return CompletableFuture.failedFuture(
            new ObjectStorageException("cannot complete multipart upload of " + key + " without parts"));
      }
      if (!state.compareAndSet(UploadState.OPEN, UploadState.COMPLETING)) {
        return notOpen("complete");
      }
      List<CompletedPart> parts = etags.entrySet().stream()
          .map(e -> CompletedPart.builder().partNumber(e.getKey()).eTag(e.getValue()).build())
          .toList();
      return call("complete multipart upload of", key, Effect.MUTATE, () -> client.completeMultipartUpload(
              b -> b.bucket(options.bucket()).key(key).uploadId(uploadId).multipartUpload(m -> m.parts(parts))))
          .handle((r, error) -> {
            // After a failure the parts are still there: the caller may complete again or abort.
            state.set(error == null ? UploadState.COMPLETED : UploadState.OPEN);
            if (error != null) {
              throw new java.util.concurrent.CompletionException(S3Failure.unwrap(error));
            }
            return null;
          });
    }

    @Override
    public CompletableFuture<Void> abort() {
      UploadState previous = state.get();
      if (previous == UploadState.COMPLETED || previous == UploadState.COMPLETING) {
        return notOpen("abort");
      }
      state.set(UploadState.ABORTED);
      return call("abort multipart upload of", key, Effect.MUTATE, () -> client.abortMultipartUpload(
              b -> b.bucket(options.bucket()).key(key).uploadId(uploadId))
          .thenApply(r -> (Void) null)
          // An upload the store no longer knows is as good as aborted.
          .exceptionallyCompose(error -> S3Failure.classify(error) == S3Failure.Kind.NOT_FOUND
              ? CompletableFuture.completedFuture(null) : CompletableFuture.failedFuture(error)));
    }

    private <T> CompletableFuture<T> notOpen(String action) {
      return CompletableFuture.failedFuture(new ObjectStorageException(
          "cannot " + action + ": multipart upload " + uploadId + " of " + key + " is " + state.get()));
    }
  }
}
