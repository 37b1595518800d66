package io.tidemark.stream.objectstore;

/** The object storage contract against the in-memory fake. */
class MemoryObjectStorageContractTest extends ObjectStorageContractTest {
  @Override
  protected ObjectStorage createStorage() {
    return new MemoryObjectStorage(() -> 1_000L);
  }
}
