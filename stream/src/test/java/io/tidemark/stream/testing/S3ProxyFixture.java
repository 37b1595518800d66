package io.tidemark.stream.testing;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import io.tidemark.stream.config.Settings;
import org.gaul.s3proxy.AuthenticationType;
import org.gaul.s3proxy.S3Proxy;
import org.jclouds.ContextBuilder;
import org.jclouds.blobstore.BlobStore;
import org.jclouds.blobstore.BlobStoreContext;

/**
 * A real S3 protocol server (S3Proxy) started in-process for tests: bound to an ephemeral port on
 * loopback, with AWS signature authentication ON and fixed keys (without authentication S3Proxy
 * stores the signed-chunk framing inside the objects), over a jclouds filesystem backend in a
 * temporary directory. One bucket, {@link #bucket()}, exists from the start; {@link
 * #createBucket(String)} makes more (one per test keeps tests independent).
 *
 * <p>Use it as an {@link AutoCloseable} (usually one per test class, from {@code @BeforeAll}):
 * <pre>{@code
 * static S3ProxyFixture s3 = S3ProxyFixture.start();
 * ... s3.settings() gives storage.type=s3 with endpoint, bucket, keys and path-style set ...
 * @AfterAll static void stop() { s3.close(); }
 * }</pre>
 * Other modules get it from the stream test-jar. Thread-safe; the server runs on its own threads.
 */
public final class S3ProxyFixture implements AutoCloseable {

  public static final String ACCESS_KEY = "tidemark-test-access";
  public static final String SECRET_KEY = "tidemark-test-secret-key-0123456789";
  public static final String REGION = "us-east-1";
  public static final String DEFAULT_BUCKET = "tidemark-test";

  private static final AtomicInteger BUCKETS = new AtomicInteger();

  private final Path directory;
  private final boolean ownsDirectory;
  private final BlobStoreContext context;
  private final S3Proxy proxy;
  private final URI endpoint;

  private S3ProxyFixture(Path directory, boolean ownsDirectory) throws Exception {
    this.directory = directory;
    this.ownsDirectory = ownsDirectory;
    Properties properties = new Properties();
    properties.setProperty("jclouds.filesystem.basedir", directory.toString());
    this.context = ContextBuilder.newBuilder("transient")
        .credentials("unused", "unused")
        .overrides(properties)
        .buildView(BlobStoreContext.class);
    this.proxy = S3Proxy.builder()
        .blobStore(context.getBlobStore())
        .endpoint(URI.create("http://127.0.0.1:0"))
        .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET_KEY)
        .build();
    proxy.start();
    if (proxy.getPort() <= 0) {
      proxy.stop();
      throw new IllegalStateException("S3Proxy did not bind a port (state " + proxy.getState() + ")");
    }
    this.endpoint = URI.create("http://127.0.0.1:" + proxy.getPort());
    createBucket(DEFAULT_BUCKET);
  }

  /** Starts a server whose objects live in a fresh temporary directory, deleted on close. */
  public static S3ProxyFixture start() {
    try {
      return new S3ProxyFixture(Files.createTempDirectory("s3proxy-"), true);
    } catch (Exception e) {
      throw new IllegalStateException("cannot start S3Proxy", e);
    }
  }

  /** Starts a server whose objects live under {@code directory} (for example a {@code @TempDir}). */
  public static S3ProxyFixture start(Path directory) {
    try {
      return new S3ProxyFixture(directory, false);
    } catch (Exception e) {
      throw new IllegalStateException("cannot start S3Proxy in " + directory, e);
    }
  }

  /** Creates a bucket (idempotent) and returns its name. */
  public String createBucket(String name) {
    BlobStore store = context.getBlobStore();
    store.createContainerInLocation(null, name);
    return name;
  }

  /** Creates a bucket with a fresh unique name starting with {@code prefix}. */
  public String newBucket(String prefix) {
    return createBucket(prefix + "-" + BUCKETS.incrementAndGet());
  }

  public URI endpoint() {
    return endpoint;
  }

  public int port() {
    return proxy.getPort();
  }

  public String bucket() {
    return DEFAULT_BUCKET;
  }

  public String accessKey() {
    return ACCESS_KEY;
  }

  public String secretKey() {
    return SECRET_KEY;
  }

  public String region() {
    return REGION;
  }

  /** The jclouds store behind the server, to inspect or seed objects without going through S3. */
  public BlobStore blobStore() {
    return context.getBlobStore();
  }

  /** Settings selecting this server as object storage, on the default bucket. */
  public Settings settings() {
    return settings(DEFAULT_BUCKET);
  }

  /** Settings selecting this server as object storage, on {@code bucket}. */
  public Settings settings(String bucket) {
    return new Settings(Map.of(
        "storage.type", "s3",
        "storage.s3.endpoint", endpoint.toString(),
        "storage.s3.region", REGION,
        "storage.s3.bucket", bucket,
        "storage.s3.path.style", "true",
        "storage.s3.access.key", ACCESS_KEY,
        "storage.s3.secret.key", SECRET_KEY));
  }

  @Override
  public void close() {
    try {
      proxy.stop();
    } catch (Exception e) {
      throw new IllegalStateException("cannot stop S3Proxy", e);
    } finally {
      context.close();
      if (ownsDirectory) {
        deleteRecursively(directory);
      }
    }
  }

  private static void deleteRecursively(Path root) {
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // Leftovers in the system temp directory are harmless; do not mask the test's outcome.
    }
  }
}
