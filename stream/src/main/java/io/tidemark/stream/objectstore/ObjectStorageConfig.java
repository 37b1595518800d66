package io.tidemark.stream.objectstore;

import java.net.URI;
import java.util.List;

import io.tidemark.stream.config.ConfigException;
import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;

/**
 * The object storage settings, declared once: which store ({@code storage.type}) and how to reach
 * it. {@link #KEYS} feeds start-up validation and the generated configuration reference;
 * {@link ObjectStorages#create(Settings)} reads them.
 */
public final class ObjectStorageConfig {

  private ObjectStorageConfig() {}

  public static final ConfigKey<String> TYPE = ConfigKey.choice("storage.type", "local",
      "Where objects live: 'local' (a directory, the embedded default), 's3' (S3 or an S3-compatible store) "
          + "or 'memory' (lost on exit; tests only).", "local", "s3", "memory");

  public static final ConfigKey<String> LOCAL_PATH = ConfigKey.string("storage.local.path", "data/objects",
      "Directory of the local object store. Keys map to subdirectories at '/' with other characters escaped.");

  public static final ConfigKey<Integer> LOCAL_IO_THREADS = ConfigKey.integer("storage.local.io.threads", 4,
      "Threads doing the blocking file IO of the local object store.").validate(ConfigKey.between(1, 256));

  public static final ConfigKey<Integer> LOCAL_MAX_QUEUED_REQUESTS = ConfigKey.integer(
      "storage.local.max.queued.requests", 1024,
      "Local object store calls that may wait for an IO thread; calls beyond it fail at once.")
      .validate(ConfigKey.between(1, 1_000_000));

  public static final ConfigKey<String> S3_ENDPOINT = ConfigKey.string("storage.s3.endpoint", "",
      "S3 endpoint URL, e.g. http://minio:9000. Empty means AWS S3 in storage.s3.region.")
      .validate(v -> v.isBlank() || validUrl(v) ? null : "must be an http:// or https:// URL");

  public static final ConfigKey<String> S3_REGION = ConfigKey.string("storage.s3.region", "us-east-1",
      "Region the requests are signed for (S3 look-alikes usually accept us-east-1).");

  public static final ConfigKey<String> S3_BUCKET = ConfigKey.string("storage.s3.bucket", "",
      "Bucket holding every object; must exist. Required when storage.type=s3.");

  public static final ConfigKey<Boolean> S3_PATH_STYLE = ConfigKey.bool("storage.s3.path.style", false,
      "Address the bucket in the URL path (host/bucket/key) instead of the host name; most S3 look-alikes need true.");

  public static final ConfigKey<String> S3_ACCESS_KEY = ConfigKey.string("storage.s3.access.key", "",
      "Access key id. Empty means the AWS default credentials chain (environment, profile, instance role).");

  public static final ConfigKey<String> S3_SECRET_KEY = ConfigKey.password("storage.s3.secret.key", "",
      "Secret access key, given together with storage.s3.access.key.");

  public static final ConfigKey<String> S3_CHECKSUM = ConfigKey.choice("storage.s3.checksum", "when_required",
      "When request checksums are sent and response checksums validated: 'when_required' works with S3Proxy, "
          + "MinIO, Ceph and other look-alikes; 'when_supported' adds CRC checksums to every request AWS accepts.",
      "when_required", "when_supported");

  public static final ConfigKey<Integer> S3_MAX_CONCURRENCY = ConfigKey.integer("storage.s3.max.concurrency", 64,
      "S3 requests in flight at once (also the connection pool size).").validate(ConfigKey.between(1, 4096));

  public static final ConfigKey<Integer> S3_MAX_QUEUED_REQUESTS = ConfigKey.integer("storage.s3.max.queued.requests",
      1024, "S3 requests that may wait for a free slot; requests beyond it fail at once.")
      .validate(ConfigKey.between(0, 1_000_000));

  public static final ConfigKey<Integer> S3_MAX_ATTEMPTS = ConfigKey.integer("storage.s3.max.attempts", 5,
      "Attempts per S3 request, the first included, on throttling, 5xx, connection errors and timeouts.")
      .validate(ConfigKey.between(1, 100));

  public static final ConfigKey<Long> S3_RETRY_BASE_DELAY_MS = ConfigKey.longKey("storage.s3.retry.base.delay.ms",
      100, "Backoff ceiling before the first retry; it doubles per retry and the delay is uniform below it.")
      .validate(ConfigKey.between(0L, 60_000L));

  public static final ConfigKey<Long> S3_RETRY_MAX_DELAY_MS = ConfigKey.longKey("storage.s3.retry.max.delay.ms",
      10_000, "Largest backoff ceiling between two attempts.").validate(ConfigKey.between(0L, 600_000L));

  public static final ConfigKey<Long> S3_REQUEST_TIMEOUT_MS = ConfigKey.longKey("storage.s3.request.timeout.ms",
      30_000, "Limit on one S3 attempt from sending to the last byte of the answer. A mutating request that times "
          + "out after it was sent has an unknown outcome.").validate(ConfigKey.between(1L, 3_600_000L));

  public static final ConfigKey<Long> S3_CONNECT_TIMEOUT_MS = ConfigKey.longKey("storage.s3.connect.timeout.ms",
      5_000, "Limit on opening a connection to the S3 endpoint.").validate(ConfigKey.between(1L, 600_000L));

  public static final List<ConfigKey<?>> KEYS = List.of(TYPE, LOCAL_PATH, LOCAL_IO_THREADS, LOCAL_MAX_QUEUED_REQUESTS,
      S3_ENDPOINT, S3_REGION, S3_BUCKET, S3_PATH_STYLE, S3_ACCESS_KEY, S3_SECRET_KEY, S3_CHECKSUM,
      S3_MAX_CONCURRENCY, S3_MAX_QUEUED_REQUESTS, S3_MAX_ATTEMPTS, S3_RETRY_BASE_DELAY_MS, S3_RETRY_MAX_DELAY_MS,
      S3_REQUEST_TIMEOUT_MS, S3_CONNECT_TIMEOUT_MS);

  /** Reads the S3 settings; a missing or inconsistent value fails with a {@link ConfigException} naming it. */
  public static S3Options s3Options(Settings settings) {
    String endpoint = settings.get(S3_ENDPOINT).trim();
    String bucket = settings.get(S3_BUCKET).trim();
    if (bucket.isEmpty()) {
      throw new ConfigException(S3_BUCKET.name(), "is required when storage.type=s3");
    }
    String accessKey = settings.get(S3_ACCESS_KEY).trim();
    String secretKey = settings.get(S3_SECRET_KEY);
    if (!accessKey.isEmpty() && secretKey.isEmpty()) {
      throw new ConfigException(S3_SECRET_KEY.name(), "is required when " + S3_ACCESS_KEY.name() + " is set");
    }
    if (accessKey.isEmpty() && !secretKey.isEmpty()) {
      throw new ConfigException(S3_ACCESS_KEY.name(), "is required when " + S3_SECRET_KEY.name() + " is set");
    }
    long baseDelayMs = settings.get(S3_RETRY_BASE_DELAY_MS);
    long maxDelayMs = settings.get(S3_RETRY_MAX_DELAY_MS);
    if (maxDelayMs < baseDelayMs) {
      throw new ConfigException(S3_RETRY_MAX_DELAY_MS.name(), String.valueOf(maxDelayMs),
          "must be at least " + S3_RETRY_BASE_DELAY_MS.name() + " (" + baseDelayMs + ")");
    }
    return new S3Options(
        endpoint.isEmpty() ? null : URI.create(endpoint),
        settings.get(S3_REGION).trim(),
        bucket,
        settings.get(S3_PATH_STYLE),
        accessKey.isEmpty() ? null : accessKey,
        accessKey.isEmpty() ? null : secretKey,
        "when_supported".equals(settings.get(S3_CHECKSUM)) ? S3Options.Checksum.WHEN_SUPPORTED
            : S3Options.Checksum.WHEN_REQUIRED,
        settings.get(S3_MAX_CONCURRENCY),
        settings.get(S3_MAX_QUEUED_REQUESTS),
        new RetryPolicy(settings.get(S3_MAX_ATTEMPTS), baseDelayMs, maxDelayMs),
        settings.get(S3_REQUEST_TIMEOUT_MS),
        settings.get(S3_CONNECT_TIMEOUT_MS));
  }

  private static boolean validUrl(String value) {
    try {
      URI uri = URI.create(value.trim());
      return ("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && uri.getHost() != null;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }
}
