/**
 * Object storage: the {@link io.tidemark.stream.objectstore.ObjectStorage} seam and its stores.
 *
 * <ul>
 *   <li>{@link io.tidemark.stream.objectstore.S3ObjectStorage}: S3 and S3-compatible stores through the
 *       AWS SDK v2 async client, with bounded concurrency, retries with jittered backoff, unknown-outcome
 *       reporting and a start-up check ({@code verify()}).</li>
 *   <li>{@link io.tidemark.stream.objectstore.LocalObjectStorage}: a directory, the embedded default;
 *       atomic publication by fsync and rename.</li>
 *   <li>{@link io.tidemark.stream.objectstore.MemoryObjectStorage}: in memory, for tests.</li>
 *   <li>{@link io.tidemark.stream.objectstore.FaultInjectingObjectStorage}: wraps any store and injects
 *       failures, delays, throttling and unknown outcomes by seeded rules.</li>
 * </ul>
 *
 * <p>{@link io.tidemark.stream.objectstore.ObjectStorageConfig} declares the settings and
 * {@link io.tidemark.stream.objectstore.ObjectStorages#create} builds the configured store. Every
 * store passes the contract suite {@code ObjectStorageContractTest} (stream test-jar).
 */
package io.tidemark.stream.objectstore;
