package io.tidemark.bench.storage;

import io.tidemark.stream.objectstore.ObjectStorage;

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

  /** The S3 object store pointed at the in-process S3Proxy; only called when {@link #s3Engine()} is present. */
  ObjectStorage s3Storage(S3ProxyServer s3) {
    throw new UnsupportedOperationException("the S3 object store has not landed on main yet");
  }
}
