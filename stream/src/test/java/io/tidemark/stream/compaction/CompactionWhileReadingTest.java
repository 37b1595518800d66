package io.tidemark.stream.compaction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.read.CachedColdReader;
import io.tidemark.stream.read.ColdDataFixture;
import io.tidemark.stream.read.GatedStorage;
import io.tidemark.stream.read.ReadConfig;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class CompactionWhileReadingTest {

  private static final long SEED = Long.getLong("tidemark.test.seed", System.nanoTime());

  @Test
  void readThatLookedUpReplacedObjectsFindsTheirSuccessors() {
    // Goal: a cold read that located objects just before compaction replaced and deleted them looks
    // them up again and still returns every batch, byte-identical; a warm reader keeps working too.
    System.out.println("CompactionWhileReadingTest seed=" + SEED);
    ColdDataFixture f = new ColdDataFixture(SEED, 300);
    List<Long> streams = f.createStreams(3);
    f.uploadRandom(streams, 6, 6, 0, 1024);
    GatedStorage gated = new GatedStorage(f.store);
    ReadConfig config = new ReadConfig(1 << 20, 50, 1 << 20, 4096, 4096, 100, 60_000, 2, 64, 8);
    try (CachedColdReader reader = CachedColdReader.create(config, f.metadata, gated, f.keys,
        new SimpleMeterRegistry(), f.clockMs::get)) {
      long s = streams.getFirst();
      long end = f.endOffset(s);
      reader.read(streams.get(1), 0, f.endOffset(streams.get(1)), Integer.MAX_VALUE).join(); // warm caches

      gated.closeGate();
      CompletableFuture<List<StreamBatch>> read = reader.read(s, 0, end, Integer.MAX_VALUE);
      await().atMost(Duration.ofSeconds(10)).until(() -> gated.heldGets() > 0);

      StreamSetObjectCompactor compactor = new StreamSetObjectCompactor(f.node, f.metadata, f.metadata, f.store,
          f.keys, StreamSetObjectCompactorTest.config(100, 64 << 20, 1L << 40), f.clockMs::get);
      assertThat(compactor.runOnce().join().didWork()).isTrue();
      f.clockMs.addAndGet(3_600_000);
      f.metadata.tick().join(); // the replaced objects are now gone from the store

      gated.openGate();
      assertThat(read.join()).isEqualTo(f.expected(s, 0, end, Integer.MAX_VALUE));
      long other = streams.get(1);
      assertThat(reader.read(other, 0, f.endOffset(other), Integer.MAX_VALUE).join())
          .isEqualTo(f.expected(other, 0, f.endOffset(other), Integer.MAX_VALUE));
    }
  }
}
