package io.tidemark.bench.storage;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.gaul.s3proxy.AuthenticationType;
import org.gaul.s3proxy.S3Proxy;
import org.jclouds.ContextBuilder;
import org.jclouds.blobstore.BlobStoreContext;

/**
 * A real S3 protocol server in this JVM (S3Proxy over jclouds' filesystem store under a
 * directory, so objects land on the same filesystem as the WAL), listening on loopback with
 * signature authentication and fixed keys. Started by the constructor, stopped by {@link #close()}.
 */
final class S3ProxyServer implements AutoCloseable {

  static final String ACCESS_KEY = "tidemark-bench";
  static final String SECRET_KEY = "tidemark-bench-secret";

  private final BlobStoreContext context;
  private final S3Proxy proxy;
  private final String bucket;

  S3ProxyServer(Path dir, String bucket) throws Exception {
    Files.createDirectories(dir);
    Properties properties = new Properties();
    properties.setProperty("jclouds.filesystem.basedir", dir.toString());
    this.context = ContextBuilder.newBuilder("filesystem").overrides(properties).build(BlobStoreContext.class);
    this.bucket = bucket;
    context.getBlobStore().createContainerInLocation(null, bucket);
    this.proxy = S3Proxy.builder()
        .blobStore(context.getBlobStore())
        .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET_KEY)
        .endpoint(URI.create("http://127.0.0.1:0"))
        .jettyMaxThreads(64)
        .build();
    proxy.start();
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (!"STARTED".equals(proxy.getState())) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("S3Proxy did not start within 30 s (state " + proxy.getState() + ")");
      }
      Thread.onSpinWait();
    }
  }

  URI endpoint() {
    return URI.create("http://127.0.0.1:" + proxy.getPort());
  }

  String bucket() {
    return bucket;
  }

  @Override
  public void close() {
    try {
      proxy.stop();
    } catch (Exception e) {
      throw new IllegalStateException("S3Proxy did not stop", e);
    } finally {
      context.close();
    }
  }
}
