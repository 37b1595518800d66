package io.tidemark.bench.storage;

import io.tidemark.stream.api.StreamStore;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.nio.file.Path;

/**
 * Opens the stream engine over a given object storage with its WAL under {@code dir}, for the
 * upload and cold-read benchmarks. The factory keeps the metadata between opens, so a second
 * open is a restart: closing the first engine uploads what its WAL holds, and the second one
 * starts with empty caches (every read is cold).
 */
@FunctionalInterface
interface EngineFactory {
  StreamStore open(Path dir, ObjectStorage storage) throws Exception;
}
