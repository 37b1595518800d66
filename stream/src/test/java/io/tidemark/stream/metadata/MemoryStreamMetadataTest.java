package io.tidemark.stream.metadata;

import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/** The metadata contract against the in-memory authority. */
public class MemoryStreamMetadataTest extends StreamMetadataContractTest {

  @Override
  protected MetadataFixture createFixture(LongSupplier clockMs, ObjectStorage storage, ObjectKeys keys,
      long deleteDelayMs) {
    MemoryStreamMetadata metadata = new MemoryStreamMetadata(clockMs, storage, keys,
        new StreamMetadataConfig(deleteDelayMs, 1000, 10_000));
    return fixtureOf(metadata);
  }

  /** The contract fixture of an in-memory (or journaled) authority; also what the engine tests run on. */
  public static MetadataFixture fixtureOf(MemoryStreamMetadata metadata) {
    return new MetadataFixture() {
      @Override public StreamManager streams() { return metadata; }
      @Override public ObjectManager objects() { return metadata; }
      @Override public NodeRef registerNode(int nodeId) { return metadata.registerNode(nodeId); }
      @Override public CompletableFuture<Void> runLifecycle() { return metadata.tick(); }
      @Override public void close() { metadata.close(); }
    };
  }
}
