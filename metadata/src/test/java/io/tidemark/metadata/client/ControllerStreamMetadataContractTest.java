package io.tidemark.metadata.client;

import io.tidemark.metadata.raft.ControllerConfig;
import io.tidemark.metadata.raft.TestQuorum;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.ObjectManager;
import io.tidemark.stream.metadata.StreamManager;
import io.tidemark.stream.metadata.StreamMetadataContractTest;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * The storage engine's metadata contract against the replicated controller: one Ratis voter on
 * loopback, reached through {@link ControllerClient}, with the contract's clock and storage.
 */
class ControllerStreamMetadataContractTest extends StreamMetadataContractTest {

  @Override
  protected MetadataFixture createFixture(LongSupplier clockMs, ObjectStorage storage, ObjectKeys keys,
      long deleteDelayMs) throws Exception {
    Path dir = Files.createTempDirectory("controller-contract");
    TestQuorum quorum = new TestQuorum(dir, 1, new SupplierClock(clockMs), storage, keys::key, Map.of(
        ControllerConfig.OBJECT_DELETE_DELAY_MS.name(), String.valueOf(deleteDelayMs),
        ControllerConfig.SESSION_TIMEOUT_MS.name(), "3600000",
        ControllerConfig.HOUSEKEEPING_INTERVAL_MS.name(), "600000")).startAll();
    ControllerClient client = quorum.client();
    return new MetadataFixture() {
      @Override
      public StreamManager streams() {
        return client;
      }

      @Override
      public ObjectManager objects() {
        return client;
      }

      @Override
      public NodeRef registerNode(int nodeId) {
        return client.registerBroker(nodeId, List.of(new Endpoint("PLAINTEXT", "127.0.0.1", 9092)), "").join();
      }

      @Override
      public CompletableFuture<Void> runLifecycle() {
        return quorum.node(1).runHousekeeping();
      }

      @Override
      public void close() throws Exception {
        quorum.close();
        try (var files = Files.walk(dir)) {
          files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
      }
    };
  }

  /** A {@link Clock} reading the contract's millisecond supplier. */
  static final class SupplierClock extends Clock {
    private final LongSupplier millis;

    SupplierClock(LongSupplier millis) {
      this.millis = millis;
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public long millis() {
      return millis.getAsLong();
    }

    @Override
    public Instant instant() {
      return Instant.ofEpochMilli(millis());
    }
  }
}
