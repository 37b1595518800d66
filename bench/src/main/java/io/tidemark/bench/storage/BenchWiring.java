package io.tidemark.bench.storage;

import io.tidemark.stream.api.StreamStore;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.engine.StreamEngine;
import io.tidemark.stream.engine.StreamEngineConfig;
import io.tidemark.stream.metadata.MemoryStreamMetadata;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.StreamMetadataConfig;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.MemoryObjectStorage;
import io.tidemark.stream.objectstore.ObjectStorage;
import io.tidemark.stream.objectstore.ObjectStorages;
import io.tidemark.stream.read.CachedColdReader;
import io.tidemark.stream.read.ReadConfig;
import io.tidemark.stream.testing.S3ProxyFixture;
import io.tidemark.stream.wal.WalConfig;
import io.tidemark.stream.wal.WriteAheadLog;
import io.tidemark.stream.wal.WriteAheadLogs;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Which parts of the storage engine the benchmark drives, built as the server builds them
 * ({@code WriteAheadLogs}, {@code ObjectStorages}, {@code StreamEngine} with the cached cold
 * reader) from default settings, except the WAL capacity. A part that is not in a build would be
 * {@link Availability#missing} with the reason, and its rows read "not measured: reason".
 */
class BenchWiring {

  /** WAL file size: large enough that trimming behind durable appends never stalls it (smaller in quick mode). */
  private final long walCapacityBytes;

  BenchWiring(long walCapacityBytes) {
    this.walCapacityBytes = walCapacityBytes;
  }

  private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "bench-timer");
    t.setDaemon(true);
    return t;
  });

  Settings walSettings(Path walFile) {
    return new Settings(Map.of(WalConfig.PATH.name(), walFile.toString(),
        WalConfig.CAPACITY_BYTES.name(), Long.toString(walCapacityBytes)));
  }

  /** The block WAL on a preallocated file with O_DIRECT and group commit. */
  Availability<WalFactory> blockWal() {
    return Availability.of(new WalFactory() {
      @Override
      public WriteAheadLog open(Path dir) throws Exception {
        Files.createDirectories(dir);
        WriteAheadLog wal = WriteAheadLogs.create(walSettings(dir.resolve("wal.log")), new MemoryObjectStorage(), 0, 1,
            Clock.systemUTC(), TIMER);
        wal.recover();
        wal.start();
        return wal;
      }

      @Override
      public String description() {
        return "Block WAL (`BlockWriteAheadLog`: preallocated file, O_DIRECT, group commit), default settings, "
            + "capacity " + StorageReport.size(walCapacityBytes) + ", trimmed behind the durable appends";
      }
    });
  }

  /**
   * The stream engine over the given object storage with a block WAL under the directory; the
   * metadata (in memory) is kept by the factory across opens, so a second open is a restart.
   */
  Availability<EngineFactory> s3Engine() {
    return Availability.of(new EngineFactory() {
      private MemoryStreamMetadata metadata;

      @Override
      public StreamStore open(Path dir, ObjectStorage storage, ReadConfig read) throws Exception {
        ObjectKeys keys = ObjectKeys.defaults();
        if (metadata == null) {
          metadata = new MemoryStreamMetadata(System::currentTimeMillis, storage, keys, StreamMetadataConfig.defaults());
        }
        NodeRef node = metadata.registerNode(0);
        Files.createDirectories(dir);
        WriteAheadLog wal = WriteAheadLogs.create(walSettings(dir.resolve("wal.log")), storage, 0, node.nodeEpoch(),
            Clock.systemUTC(), TIMER);
        CachedColdReader coldReader = CachedColdReader.create(read, metadata, storage, keys,
            new SimpleMeterRegistry(), System::currentTimeMillis);
        StreamEngine engine = StreamEngine.builder().node(node).wal(wal).objectStorage(storage).streamManager(metadata)
            .objectManager(metadata).objectKeys(keys).config(StreamEngineConfig.defaults())
            .coldReader(coldReader::read).build();
        engine.start().join();
        return new StreamStore() {
          @Override
          public java.util.concurrent.CompletableFuture<Long> createStream(Map<String, String> tags) {
            return engine.createStream(tags);
          }

          @Override
          public java.util.concurrent.CompletableFuture<io.tidemark.stream.api.Stream> openStream(long streamId, long epoch) {
            return engine.openStream(streamId, epoch);
          }

          @Override
          public java.util.Optional<io.tidemark.stream.api.Stream> stream(long streamId) {
            return engine.stream(streamId);
          }

          @Override
          public void close() {
            engine.close();
            coldReader.close();
          }
        };
      }
    });
  }

  /** The S3 object store (AWS SDK v2) pointed at the in-process S3Proxy, as the server would build it. */
  ObjectStorage s3Storage(S3ProxyFixture s3) {
    return ObjectStorages.create(s3.settings());
  }
}
