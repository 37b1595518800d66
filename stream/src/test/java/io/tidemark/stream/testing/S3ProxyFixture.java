package io.tidemark.stream.testing;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;

import io.tidemark.stream.config.Settings;
import org.gaul.s3proxy.AuthenticationType;
import org.gaul.s3proxy.S3Proxy;
import org.jclouds.ContextBuilder;
import org.jclouds.blobstore.BlobStore;
import org.jclouds.blobstore.BlobStoreContext;

/**
 * A real S3 protocol server (S3Proxy) started in-process for tests: bound to an ephemeral port on
 * loopback, with AWS signature authentication ON and fixed keys (without authentication S3Proxy
 * stores the signed-chunk framing inside the objects). One bucket, {@link #bucket()}, exists from
 * the start; {@link #createBucket(String)} makes more (one per test keeps tests independent).
 *
 * <p>Backends: {@link #start()} and {@link #shared()} use jclouds' transient (in-memory) store,
 * which keeps S3's flat key space exactly (keys {@code a}, {@code a/} and {@code a/b} coexist);
 * {@link #start(Path)} uses jclouds' filesystem store under the given directory, so that
 * benchmarks write to a real disk. The filesystem store maps {@code /} to directories, so there a
 * key cannot also be the prefix of another key ({@code a} beside {@code a/b}) and keys cannot end
 * in {@code /}.
 *
 * <p>Most tests use {@link #shared()}: one server per test JVM, started on first use and stopped
 * at JVM exit (starting one costs seconds on a loaded machine); such tests take a fresh bucket
 * from {@link #newBucket(String)} and never close the shared server. A test that needs its own
 * server uses it as an {@link AutoCloseable}:
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
  private final BlobStoreContext context;
  private final S3Proxy proxy;
  private final URI endpoint;

  /** A server over the filesystem store in {@code directory}, or over the transient store when null. */
  private S3ProxyFixture(Path directory) throws Exception {
    this.directory = directory;
    Properties properties = new Properties();
    if (directory != null) {
      properties.setProperty("jclouds.filesystem.basedir", directory.toString());
    }
    this.context = ContextBuilder.newBuilder(directory == null ? "transient" : "filesystem")
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

  private static S3ProxyFixture shared;

  /** The server shared by every test of this JVM; do not close it. */
  public static synchronized S3ProxyFixture shared() {
    if (shared == null) {
      S3ProxyFixture fixture = start();
      Runtime.getRuntime().addShutdownHook(new Thread(fixture::close, "s3proxy-fixture-stop"));
      shared = fixture;
    }
    return shared;
  }

  /** Starts a server whose objects live in memory and vanish on close. */
  public static S3ProxyFixture start() {
    try {
      return new S3ProxyFixture(null);
    } catch (Exception e) {
      throw new IllegalStateException("cannot start S3Proxy", e);
    }
  }

  /** Starts a server whose objects are files under {@code directory} (kept after close). */
  public static S3ProxyFixture start(Path directory) {
    try {
      Files.createDirectories(directory);
      return new S3ProxyFixture(directory);
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
    }
  }

  /** Where the filesystem backend keeps objects, or null for the in-memory backend. */
  public Path directory() {
    return directory;
  }
}
