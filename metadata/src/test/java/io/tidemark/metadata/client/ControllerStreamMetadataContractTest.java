package io.tidemark.metadata.client;

import io.tidemark.metadata.raft.ControllerConfig;
import io.tidemark.stream.metadata.StreamMetadataContractTest;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The storage engine's metadata contract against the replicated controller: one Ratis voter on
 * loopback, reached through {@link ControllerClient}, with the contract's clock and storage.
 */
class ControllerStreamMetadataContractTest extends StreamMetadataContractTest {

  @Override
  protected MetadataFixture createFixture(LongSupplier clockMs, ObjectStorage storage, ObjectKeys keys,
      long deleteDelayMs) throws Exception {
    return ControllerFixtures.singleVoter(clockMs, storage, keys,
        Map.of(ControllerConfig.OBJECT_DELETE_DELAY_MS.name(), String.valueOf(deleteDelayMs)));
  }
}
