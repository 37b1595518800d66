package io.tidemark.metadata.client;

import io.tidemark.stream.engine.StreamEngineTest;
import io.tidemark.stream.metadata.StreamMetadataContractTest.MetadataFixture;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The storage engine's own tests ({@link StreamEngineTest}, unchanged) with the replicated
 * controller as its metadata: one Ratis voter on loopback per test, reached through
 * {@link ControllerClient}, on the engine fixture's clock and storage.
 */
class ControllerStreamEngineTest extends StreamEngineTest {

  @Override
  protected MetadataFixture createMetadata(LongSupplier clockMs, ObjectStorage storage, ObjectKeys keys)
      throws Exception {
    return ControllerFixtures.singleVoter(clockMs, storage, keys, Map.of());
  }
}
