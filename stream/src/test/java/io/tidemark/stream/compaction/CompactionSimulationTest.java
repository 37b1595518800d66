package io.tidemark.stream.compaction;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.stream.metadata.StreamMetadata;
import io.tidemark.stream.read.ColdDataFixture;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class CompactionSimulationTest {

  private static final long SEED = Long.getLong("tidemark.test.seed", System.nanoTime());

  @Test
  void randomUploadsTrimsCompactionsAndDeletionsNeverLoseReadableData() {
    // Goal: under a seeded random mix of uploads, trims, both compactions and physical deletions,
    // every stream always reads back byte-identical from its start offset (steps from tidemark.test.scale).
    int steps = "full".equals(System.getProperty("tidemark.test.scale")) ? 1500 : 60;
    System.out.println("CompactionSimulationTest seed=" + SEED + " steps=" + steps);
    Random random = new Random(SEED);
    ColdDataFixture f = new ColdDataFixture(SEED, 300);
    List<Long> streams = f.createStreams(5);
    Map<Long, Long> starts = new HashMap<>();
    StreamSetObjectCompactor sets = new StreamSetObjectCompactor(f.node, f.metadata, f.metadata, f.store, f.keys,
        new CompactionConfig(60_000, 2 + random.nextInt(8), 64 << 20, 2_000 + random.nextInt(8_000), 7_200_000,
            4_000 + random.nextInt(20_000), 1024, 1 << 20, 3_600_000, 2), f.clockMs::get);
    StreamObjectCompactor objects = new StreamObjectCompactor(f.node, f.metadata, f.metadata, f.store, f.keys,
        new CompactionConfig(60_000, 2 + random.nextInt(8), 64 << 20, 8 << 20, 7_200_000,
            4_000 + random.nextInt(20_000), 1024, 1 << 20, 3_600_000, 2));
    for (int step = 0; step < steps; step++) {
      int action = random.nextInt(10);
      String what;
      if (action < 4) {
        what = "upload";
        f.uploadRandom(streams, 1, 5, 0.2, 1024);
      } else if (action == 4) {
        long s = streams.get(random.nextInt(streams.size()));
        long end = f.endOffset(s);
        long start = starts.getOrDefault(s, 0L);
        long to = start + (end > start ? random.nextLong(end - start + 1) : 0);
        what = "trim " + s + " to " + to;
        f.metadata.trimStream(f.node, s, 1, to).join();
        starts.put(s, to);
      } else if (action < 7) {
        what = "stream-set compaction";
        sets.runOnce().join();
      } else if (action < 9) {
        what = "stream-object compaction";
        CompactionReport report = objects.runOnce(streams).join();
        assertThat(report.failures()).as("seed %d step %d", SEED, step).isEmpty();
      } else {
        what = "delete marked objects";
        f.clockMs.addAndGet(120_000);
        f.metadata.tick().join();
      }
      for (long s : streams) {
        StreamMetadata meta = f.metadata.getStreams(List.of(s)).join().getFirst();
        assertThat(meta.endOffset()).isEqualTo(f.endOffset(s));
        long from = meta.startOffset();
        if (from < meta.endOffset()) {
          assertThat(StreamSetObjectCompactorTest.readAll(f, s, from)).as("seed %d step %d after %s, stream %d", SEED,
              step, what, s).isEqualTo(f.expected(s, from, f.endOffset(s), Integer.MAX_VALUE));
        }
      }
    }
    System.out.println("CompactionSimulationTest objects at the end: " + f.metadata.objectCounts());
  }
}
