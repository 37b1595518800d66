package io.tidemark.metadata.client;

import io.tidemark.metadata.raft.ControllerConfig;
import io.tidemark.metadata.raft.TestQuorum;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.ObjectManager;
import io.tidemark.stream.metadata.StreamManager;
import io.tidemark.stream.metadata.StreamMetadataContractTest.MetadataFixture;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The storage engine's test fixtures ({@link MetadataFixture}) backed by the replicated controller:
 * the engine talks to a {@link ControllerClient}, as a broker does.
 */
public final class ControllerFixtures {
  private ControllerFixtures() {}

  /**
   * One Ratis voter on loopback under a fresh temporary directory, on the fixture's clock, storage
   * and keys; {@code overrides} are controller settings. Closing stops it and deletes the directory.
   */
  public static MetadataFixture singleVoter(LongSupplier clockMs, ObjectStorage storage, ObjectKeys keys,
      Map<String, String> overrides) throws IOException {
    Path dir = Files.createTempDirectory("controller-fixture");
    Map<String, String> settings = new HashMap<>(overrides);
    settings.putIfAbsent(ControllerConfig.SESSION_TIMEOUT_MS.name(), "3600000");
    settings.putIfAbsent(ControllerConfig.HOUSEKEEPING_INTERVAL_MS.name(), "600000");
    TestQuorum quorum = new TestQuorum(dir, 1, new SupplierClock(clockMs), storage, keys::key, settings).startAll();
    return of(quorum.client(), () -> quorum.node(1).runHousekeeping(), () -> {
      quorum.close();
      try (var files = Files.walk(dir)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    });
  }

  /** A fixture over {@code client}; {@code lifecycle} runs the leader's housekeeping, {@code close} releases all. */
  public static MetadataFixture of(ControllerClient client, Supplier<CompletableFuture<Void>> lifecycle,
      AutoCloseable close) {
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
        return lifecycle.get();
      }

      @Override
      public void close() throws Exception {
        close.close();
      }
    };
  }

  /** A {@link Clock} reading a test's millisecond supplier. */
  public static final class SupplierClock extends Clock {
    private final LongSupplier millis;

    public SupplierClock(LongSupplier millis) {
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
