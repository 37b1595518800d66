package io.tidemark.bench.storage;

import io.tidemark.stream.objectstore.ObjectStorage;
import io.tidemark.stream.objectstore.ObjectStorages;
import io.tidemark.stream.testing.S3ProxyFixture;

/**
 * Which parts of the storage engine this build has, for the benchmark to drive. Each part that
 * has not landed yet is {@link Availability#missing} with the reason, and its rows read
 * "not measured: reason"; the benchmark never invents a figure.
 */
class BenchWiring {

  /** The block WAL on a preallocated file with O_DIRECT and group commit. */
  Availability<WalFactory> blockWal() {
    return Availability.missing("the block WAL has not landed on main yet");
  }

  /** The stream engine over S3 (S3Proxy in-process), for upload and cold-read figures. */
  Availability<EngineFactory> s3Engine() {
    return Availability.missing("the stream engine and the S3 object store have not landed on main yet");
  }

  /** The S3 object store (AWS SDK v2) pointed at the in-process S3Proxy, as the server would build it. */
  ObjectStorage s3Storage(S3ProxyFixture s3) {
    return ObjectStorages.create(s3.settings());
  }
}
