package io.tidemark.stream.objectstore;

import java.nio.file.Path;

import org.junit.jupiter.api.io.TempDir;

/** The object storage contract against the local directory store. */
class LocalObjectStorageContractTest extends ObjectStorageContractTest {
  @TempDir
  Path directory;

  @Override
  protected ObjectStorage createStorage() {
    return new LocalObjectStorage(directory.resolve("objects"), 4, 1024);
  }
}
