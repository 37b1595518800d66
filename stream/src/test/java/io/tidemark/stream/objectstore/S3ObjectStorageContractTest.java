package io.tidemark.stream.objectstore;

import java.nio.charset.StandardCharsets;
import java.util.List;

import io.tidemark.stream.testing.S3ProxyFixture;
import org.jclouds.blobstore.BlobStore;
import org.junit.jupiter.api.BeforeAll;

/**
 * The object storage contract against {@link S3ObjectStorage} talking to a real S3 protocol
 * server (S3Proxy in-process, authentication on), one fresh bucket per test.
 */
class S3ObjectStorageContractTest extends ObjectStorageContractTest {
  private static S3ProxyFixture s3;

  @BeforeAll
  static void startS3() {
    s3 = S3ProxyFixture.shared();
  }

  private String bucket;

  @Override
  protected ObjectStorage createStorage() {
    bucket = s3.newBucket("contract");
    return new S3ObjectStorage(S3Options.of(s3.endpoint(), bucket, s3.accessKey(), s3.secretKey()));
  }

  /** Writes straight into S3Proxy's store: 1100 signed PUTs would dominate the suite's time. */
  @Override
  protected void seedObjects(List<String> keys) {
    BlobStore store = s3.blobStore();
    for (String key : keys) {
      store.putBlob(bucket, store.blobBuilder(key).payload(key.getBytes(StandardCharsets.UTF_8)).build());
    }
  }

  /** More than one page of ListObjectsV2 and more than one DeleteObjects request. */
  @Override
  protected int manyKeys() {
    return 1100;
  }
}
