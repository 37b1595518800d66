package io.tidemark.bench.storage;

import io.tidemark.stream.api.StreamStore;
import io.tidemark.stream.objectstore.ObjectStorage;
import io.tidemark.stream.read.ReadConfig;
import java.nio.file.Path;

/**
 * Opens the stream engine over a given object storage with its WAL under {@code dir}, for the
 * upload and cold-read benchmarks. The factory keeps the metadata between opens, so a second
 * open is a restart: closing the first engine uploads what its WAL holds, and the second one
 * starts with empty caches (every read is cold).
 */
interface EngineFactory {
  /** Opens the engine with the cold read path configured by {@code read}. */
  StreamStore open(Path dir, ObjectStorage storage, ReadConfig read) throws Exception;

  /** Opens the engine with the default cold read path. */
  default StreamStore open(Path dir, ObjectStorage storage) throws Exception {
    return open(dir, storage, ReadConfig.defaults());
  }
}
