package io.tidemark.stream.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tidemark.stream.api.FetchResult;
import io.tidemark.stream.api.Stream;
import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.engine.StreamEngine;
import io.tidemark.stream.engine.StreamEngineConfig;
import io.tidemark.stream.metadata.MemoryStreamMetadata;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.StreamMetadataConfig;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.MemoryObjectStorage;
import io.tidemark.stream.wal.MemoryWriteAheadLog;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class ColdReadIsolationTest {

  private final AtomicLong clock = new AtomicLong(1_000_000);
  private final MemoryObjectStorage store = new MemoryObjectStorage(clock::get);
  private final GatedStorage storage = new GatedStorage(store);
  private final ObjectKeys keys = ObjectKeys.defaults();
  private final MemoryStreamMetadata metadata =
      new MemoryStreamMetadata(clock::get, store, keys, new StreamMetadataConfig(1000, 1000, 10_000));
  private final CachedColdReader coldReader = CachedColdReader.create(
      new ReadConfig(1 << 20, 50, 1 << 20, 4096, 64 << 10, 100, 60_000, 2, 64, 8), metadata, storage, keys,
      new SimpleMeterRegistry(), clock::get);
  private StreamEngine engine;

  @AfterEach
  void tearDown() {
    storage.openGate();
    if (engine != null) {
      engine.halt();
    }
    coldReader.close();
  }

  @Test
  @Timeout(120) // a cold read that blocked the caller or the append path would hang here
  void stalledColdReadsDoNotDelayAppendsOrHotReads() throws Exception {
    // Goal: while every object GET hangs, a cold fetch waits, but appends (with uploads) and hot
    // reads keep completing; once the store answers, the cold fetch returns the appended bytes.
    NodeRef node = metadata.registerNode(1);
    StreamEngineConfig config = new StreamEngineConfig(64 * 1024, 16 * 1024, 3_600_000, 8 * 1024, 1024, 16 * 1024,
        60_000, 1024 * 1024, 5, 50, 8);
    engine = StreamEngine.builder().node(node).wal(new MemoryWriteAheadLog()).objectStorage(storage)
        .streamManager(metadata).objectManager(metadata).objectKeys(keys).config(config).coldReader(coldReader).build();
    engine.start().join();
    Stream cold = engine.openStream(engine.createStream(Map.of()).join(), 1).join();
    Stream hot = engine.openStream(engine.createStream(Map.of()).join(), 1).join();
    Random random = new Random(11);
    List<byte[]> written = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      byte[] payload = new byte[1000];
      random.nextBytes(payload);
      cold.append(1, ByteBuffer.wrap(payload)).join();
      written.add(payload);
    }
    engine.flush().join();

    storage.closeGate();
    CompletableFuture<FetchResult> stalled = cold.fetch(0, 300, 10_000);
    await().atMost(Duration.ofSeconds(10)).until(() -> storage.heldGets() > 0);

    for (int i = 0; i < 200; i++) {
      byte[] payload = new byte[1000];
      random.nextBytes(payload);
      assertThat(hot.append(1, ByteBuffer.wrap(payload)).get(10, TimeUnit.SECONDS)).isEqualTo(i);
      assertThat(hot.fetch(i, i + 1, 10_000).get(10, TimeUnit.SECONDS).batches()).hasSize(1);
    }
    engine.flush().get(10, TimeUnit.SECONDS); // uploads (PUTs) are not held up by stalled GETs either
    assertThat(stalled).isNotDone();

    storage.openGate();
    FetchResult result = stalled.get(10, TimeUnit.SECONDS);
    assertThat(result.cold()).isTrue();
    assertThat(result.batches()).isNotEmpty();
    for (StreamBatch batch : result.batches()) {
      byte[] bytes = new byte[batch.payload().remaining()];
      batch.payload().duplicate().get(bytes);
      assertThat(bytes).isEqualTo(written.get((int) batch.baseOffset()));
    }
  }
}
