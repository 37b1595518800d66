package io.tidemark.stream.objectstore;

import java.net.URI;
import java.util.Objects;

/**
 * Everything {@link S3ObjectStorage} needs to reach a bucket. {@code endpoint} null means the
 * SDK's endpoint for {@code region} (AWS); {@code accessKey}/{@code secretKey} null means the
 * SDK's default credentials chain (environment, profile, instance role).
 *
 * @param endpoint endpoint override, e.g. {@code http://127.0.0.1:9000} for MinIO, or null
 * @param region signing region
 * @param bucket the bucket every key lives in
 * @param pathStyle address the bucket in the path ({@code host/bucket/key}), needed by most S3 look-alikes
 * @param accessKey static access key id, or null for the default chain
 * @param secretKey static secret key, or null for the default chain
 * @param checksum when request checksums are computed and response checksums validated
 * @param maxConcurrency requests in flight at once (connections are capped at the same number)
 * @param maxQueuedRequests requests waiting for a permit before new ones fail
 * @param retry attempts and backoff for throttling, 5xx, connection errors and timeouts
 * @param requestTimeoutMs limit on one attempt, from sending to the last byte of the answer
 * @param connectTimeoutMs limit on opening a connection
 */
public record S3Options(
    URI endpoint,
    String region,
    String bucket,
    boolean pathStyle,
    String accessKey,
    String secretKey,
    Checksum checksum,
    int maxConcurrency,
    int maxQueuedRequests,
    RetryPolicy retry,
    long requestTimeoutMs,
    long connectTimeoutMs) {

  /** When checksums are used; many S3 look-alikes reject the checksums the SDK sends by default. */
  public enum Checksum {
    /** Only where the API requires one (plus Content-MD5 on DeleteObjects, as older stores expect). */
    WHEN_REQUIRED,
    /** Wherever the API supports one (AWS S3 and recent MinIO). */
    WHEN_SUPPORTED
  }

  public S3Options {
    Objects.requireNonNull(region, "region");
    Objects.requireNonNull(bucket, "bucket");
    Objects.requireNonNull(checksum, "checksum");
    Objects.requireNonNull(retry, "retry");
    if (maxConcurrency < 1 || maxQueuedRequests < 0 || requestTimeoutMs < 1 || connectTimeoutMs < 1) {
      throw new IllegalArgumentException("S3 limits must be positive: maxConcurrency=" + maxConcurrency
          + ", maxQueuedRequests=" + maxQueuedRequests + ", requestTimeoutMs=" + requestTimeoutMs
          + ", connectTimeoutMs=" + connectTimeoutMs);
    }
    if ((accessKey == null) != (secretKey == null)) {
      throw new IllegalArgumentException("give both access key and secret key, or neither");
    }
  }

  /** Options for an S3-compatible endpoint with static keys and the defaults of {@code ObjectStorageConfig}. */
  public static S3Options of(URI endpoint, String bucket, String accessKey, String secretKey) {
    return new S3Options(endpoint, "us-east-1", bucket, true, accessKey, secretKey, Checksum.WHEN_REQUIRED,
        64, 1024, new RetryPolicy(5, 100, 10_000), 30_000, 5_000);
  }

  public S3Options withRetry(RetryPolicy newRetry) {
    return new S3Options(endpoint, region, bucket, pathStyle, accessKey, secretKey, checksum, maxConcurrency,
        maxQueuedRequests, newRetry, requestTimeoutMs, connectTimeoutMs);
  }

  public S3Options withConcurrency(int newMaxConcurrency, int newMaxQueuedRequests) {
    return new S3Options(endpoint, region, bucket, pathStyle, accessKey, secretKey, checksum, newMaxConcurrency,
        newMaxQueuedRequests, retry, requestTimeoutMs, connectTimeoutMs);
  }

  public S3Options withRequestTimeoutMs(long newRequestTimeoutMs) {
    return new S3Options(endpoint, region, bucket, pathStyle, accessKey, secretKey, checksum, maxConcurrency,
        maxQueuedRequests, retry, newRequestTimeoutMs, connectTimeoutMs);
  }

  public S3Options withChecksum(Checksum newChecksum) {
    return new S3Options(endpoint, region, bucket, pathStyle, accessKey, secretKey, newChecksum, maxConcurrency,
        maxQueuedRequests, retry, requestTimeoutMs, connectTimeoutMs);
  }

  public S3Options withBucket(String newBucket) {
    return new S3Options(endpoint, region, newBucket, pathStyle, accessKey, secretKey, checksum, maxConcurrency,
        maxQueuedRequests, retry, requestTimeoutMs, connectTimeoutMs);
  }

  public S3Options withCredentials(String newAccessKey, String newSecretKey) {
    return new S3Options(endpoint, region, bucket, pathStyle, newAccessKey, newSecretKey, checksum, maxConcurrency,
        maxQueuedRequests, retry, requestTimeoutMs, connectTimeoutMs);
  }

  public S3Options withEndpoint(URI newEndpoint) {
    return new S3Options(newEndpoint, region, bucket, pathStyle, accessKey, secretKey, checksum, maxConcurrency,
        maxQueuedRequests, retry, requestTimeoutMs, connectTimeoutMs);
  }

  /** The secret is never printed. */
  @Override
  public String toString() {
    return "S3Options[endpoint=" + endpoint + ", region=" + region + ", bucket=" + bucket + ", pathStyle=" + pathStyle
        + ", accessKey=" + accessKey + ", secretKey=" + (secretKey == null ? "null" : "****") + ", checksum=" + checksum
        + ", maxConcurrency=" + maxConcurrency + ", maxQueuedRequests=" + maxQueuedRequests + ", retry=" + retry
        + ", requestTimeoutMs=" + requestTimeoutMs + ", connectTimeoutMs=" + connectTimeoutMs + "]";
  }
}
