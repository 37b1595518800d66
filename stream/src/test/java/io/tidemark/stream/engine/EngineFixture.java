package io.tidemark.stream.engine;

import io.tidemark.stream.metadata.MemoryStreamMetadata;
import io.tidemark.stream.metadata.MemoryStreamMetadataTest;
import io.tidemark.stream.metadata.StreamMetadataContractTest.MetadataFixture;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.StreamMetadataConfig;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.MemoryObjectStorage;
import io.tidemark.stream.objectstore.ObjectStorage;
import io.tidemark.stream.wal.MemoryWriteAheadLog;
import io.tidemark.stream.wal.WriteAheadLog;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * One node's collaborators in memory, restartable: the WAL, object storage and metadata outlive an
 * engine. The metadata authority comes from a {@link MetadataFactory}: in memory by default, the
 * replicated controller when the metadata module runs these tests.
 */
final class EngineFixture implements AutoCloseable {

  /** Creates the metadata authority of one fixture, on the fixture's clock, storage and keys. */
  public interface MetadataFactory {
    MetadataFixture create(LongSupplier clockMs, ObjectStorage storage, ObjectKeys keys) throws Exception;
  }

  static final MetadataFactory IN_MEMORY = (clockMs, storage, keys) -> MemoryStreamMetadataTest.fixtureOf(
      new MemoryStreamMetadata(clockMs, storage, keys, new StreamMetadataConfig(1000, 1000, 10_000)));

  static StreamEngineConfig smallConfig() {
    return new StreamEngineConfig(64 * 1024, 16 * 1024, 3_600_000, 8 * 1024, 1024, 16 * 1024, 60_000,
        1024 * 1024, 5, 50, 8);
  }

  final AtomicLong clock = new AtomicLong(1_000_000);
  final MemoryObjectStorage storage = new MemoryObjectStorage(clock::get);
  final ObjectKeys keys = ObjectKeys.defaults();
  final MetadataFixture metadata;
  final MemoryWriteAheadLog wal = new MemoryWriteAheadLog();
  private final List<StreamEngine> engines = new ArrayList<>();

  EngineFixture() {
    this(IN_MEMORY);
  }

  EngineFixture(MetadataFactory factory) {
    try {
      this.metadata = factory.create(clock::get, storage, keys);
    } catch (Exception e) {
      throw new IllegalStateException("cannot create the metadata authority of the engine fixture", e);
    }
  }

  StreamEngine start(StreamEngineConfig config) {
    return start(config, wal, storage);
  }

  StreamEngine start(StreamEngineConfig config, WriteAheadLog log, ObjectStorage objects) {
    return start(config, log, objects, null);
  }

  StreamEngine start(StreamEngineConfig config, WriteAheadLog log, ObjectStorage objects, ColdReader coldReader) {
    return start(config, log, objects, coldReader, metadata.streams());
  }

  /** As {@link #start(StreamEngineConfig)}, with the engine's stream manager given (a wrapper injecting faults). */
  StreamEngine start(StreamEngineConfig config, io.tidemark.stream.metadata.StreamManager streams) {
    return start(config, wal, storage, null, streams);
  }

  private StreamEngine start(StreamEngineConfig config, WriteAheadLog log, ObjectStorage objects, ColdReader coldReader,
      io.tidemark.stream.metadata.StreamManager streams) {
    NodeRef node = metadata.registerNode(1);
    StreamEngine engine = StreamEngine.builder().node(node).wal(log).objectStorage(objects).streamManager(streams)
        .objectManager(metadata.objects()).objectKeys(keys).config(config).coldReader(coldReader).build();
    engines.add(engine);
    engine.start().join();
    return engine;
  }

  /** Simulates kill -9 of the engine: nothing more is uploaded; the WAL keeps what was durable. */
  void crash(StreamEngine engine) {
    engine.halt();
    wal.crash();
  }

  @Override
  public void close() {
    engines.forEach(StreamEngine::halt);
    try {
      metadata.close();
    } catch (Exception e) {
      throw new IllegalStateException("closing the metadata authority of the engine fixture", e);
    }
  }
}
