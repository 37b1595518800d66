package io.tidemark.stream.read;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.object.StreamRecordBatch;
import io.tidemark.stream.objectstore.ObjectStorage;
import io.tidemark.stream.objectstore.ObjectStorages;
import io.tidemark.stream.testing.S3ProxyFixture;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Cold-read throughput through the whole read path (metadata lookup, index, ranged GETs, block
 * cache, read-ahead) from a real S3 protocol server (S3Proxy on loopback). Size from
 * {@code tidemark.test.scale}: 16 MiB by default, 512 MiB under {@code -Pfull}. Prints the figure;
 * asserts only that every byte came back identical (the figure depends on the machine).
 * Reproduce: {@code mvn -o -pl stream -Dtest=ColdReadThroughputTest -Dtidemark.test.scale=full test}.
 */
class ColdReadThroughputTest {

  @Test
  void sequentialColdReadFromS3ProxyReturnsEveryByteAndReportsThroughput() {
    // Goal: measure MB/s of a sequential cold read of uploaded stream objects over S3, byte-identical.
    boolean full = "full".equals(System.getProperty("tidemark.test.scale"));
    int objects = full ? 64 : 2;
    try (S3ProxyFixture s3 = S3ProxyFixture.start(); ObjectStorage storage = ObjectStorages.create(s3.settings())) {
      ColdDataFixture f = new ColdDataFixture(7, 128 << 10, storage);
      long s = f.createStreams(1).getFirst();
      for (int i = 0; i < objects; i++) {
        f.upload(Map.of(s, 128), Set.of(s), 512 << 10); // ~8 MiB stream objects, 512 KiB blocks
      }
      long totalBytes = f.written(s).stream().mapToLong(StreamRecordBatch::payloadBytes).sum();
      // Baseline in the same run: whole-object GETs of the same objects, one after another.
      long baselineStarted = System.nanoTime();
      long baselineBytes = 0;
      for (var object : f.metadata.getStreamObjects(s).join()) {
        baselineBytes += storage.get(f.keys.key(object.objectId())).join().remaining();
      }
      double baselineSeconds = (System.nanoTime() - baselineStarted) / 1e9;
      ReadConfig config = new ReadConfig(256L << 20, 50, 32 << 20, 512 << 10, 32 << 20, 1000, 60_000, 4, 1024, 64);
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      try (CachedColdReader reader = CachedColdReader.create(config, f.metadata, storage, f.keys, registry,
          f.clockMs::get)) {
        long end = f.endOffset(s);
        long started = System.nanoTime();
        long cursor = 0;
        long bytes = 0;
        List<StreamRecordBatch> expected = f.written(s);
        int index = 0;
        while (cursor < end) {
          List<StreamBatch> got = reader.read(s, cursor, end, 1 << 20).join();
          for (StreamBatch b : got) {
            assertThat(b).isEqualTo(expected.get(index++).toStreamBatch());
            bytes += b.payload().remaining();
          }
          cursor = got.getLast().nextOffset();
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        assertThat(bytes).isEqualTo(totalBytes);
        System.out.printf("cold read throughput from S3Proxy: %.1f MB/s (%d MiB in %.2f s, 1 MiB fetches, read-ahead up"
            + " to 32 MiB, 64 GETs in flight; block cache hits %.0f, misses %.0f, read-ahead loads %.0f); baseline"
            + " whole-object GETs one by one: %.1f MB/s%n", bytes / seconds / 1e6, bytes >> 20, seconds,
            registry.counter("tidemark.stream.block.cache.hits").count(), registry.counter("tidemark.stream.block.cache.misses").count(),
            registry.counter("tidemark.stream.block.cache.readahead.loads").count(), baselineBytes / baselineSeconds / 1e6);
      }
    }
  }
}
