package io.tidemark.stream.compaction;

import static io.tidemark.stream.compaction.StreamSetObjectCompactorTest.assertEveryStreamReadsBack;
import static io.tidemark.stream.compaction.StreamSetObjectCompactorTest.assertGapFree;
import static io.tidemark.stream.compaction.StreamSetObjectCompactorTest.keys;
import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.stream.metadata.InvalidCommitException;
import io.tidemark.stream.metadata.ObjectMetadata;
import io.tidemark.stream.read.ColdDataFixture;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class StreamObjectCompactorTest {

  private static final long SEED = Long.getLong("tidemark.test.seed", System.nanoTime());

  static CompactionConfig config(int maxObjects, long targetBytes) {
    return new CompactionConfig(60_000, maxObjects, 64 << 20, 8 << 20, 7_200_000, targetBytes, 1024, 1 << 20,
        3_600_000, 4);
  }

  /** A stream with {@code objects} stream objects of 4 batches each, plus a second stream likewise. */
  static List<Long> streamsWithStreamObjects(ColdDataFixture f, int objects) {
    List<Long> streams = f.createStreams(2);
    for (int i = 0; i < objects; i++) {
      f.upload(Map.of(streams.get(0), 4, streams.get(1), 4), Set.copyOf(streams), 1024);
    }
    return streams;
  }

  @Test
  void smallConsecutiveStreamObjectsAreMergedWithinTheTargetSize() {
    // Goal: 12 small stream objects per stream are merged into groups no larger than the target;
    // every byte and offset reads back identical and the ranges stay gap-free.
    System.out.println("StreamObjectCompactorTest seed=" + SEED);
    ColdDataFixture f = new ColdDataFixture(SEED, 300);
    List<Long> streams = streamsWithStreamObjects(f, 12);
    List<ObjectMetadata> before = f.metadata.getStreamObjects(streams.getFirst()).join();
    long largest = before.stream().mapToLong(ObjectMetadata::sizeBytes).max().orElseThrow();
    long target = 4 * largest;
    StreamObjectCompactor compactor =
        new StreamObjectCompactor(f.node, f.metadata, f.metadata, f.store, f.keys, config(100, target));

    CompactionReport report = compactor.runOnce(streams).join();

    assertThat(report.didWork()).isTrue();
    assertThat(report.failures()).isEmpty();
    for (long s : streams) {
      List<ObjectMetadata> after = f.metadata.getStreamObjects(s).join();
      assertThat(after.size()).as("stream %d objects", s).isLessThanOrEqualTo(12 / 2);
      assertThat(after).allMatch(o -> o.sizeBytes() <= target + 1024);
      assertGapFree(f, s, 0);
    }
    assertEveryStreamReadsBack(f, streams, Map.of());
  }

  @Test
  void runIsBoundedInObjects() {
    // Goal: one run replaces at most max.objects source objects in total.
    ColdDataFixture f = new ColdDataFixture(SEED, 300);
    List<Long> streams = streamsWithStreamObjects(f, 10);
    StreamObjectCompactor compactor =
        new StreamObjectCompactor(f.node, f.metadata, f.metadata, f.store, f.keys, config(6, 1L << 30));
    CompactionReport report = compactor.runOnce(streams).join();
    assertThat(report.compactedObjectIds()).hasSizeBetween(2, 6);
    assertEveryStreamReadsBack(f, streams, Map.of());
  }

  @Test
  void trimmedStreamObjectsAreNeverMergedBack() {
    // Goal: stream objects wholly below the start offset (marked for deletion by the trim) are not
    // copied; the merged object starts at the first live source and the stream reads back from its start.
    ColdDataFixture f = new ColdDataFixture(SEED, 300);
    List<Long> streams = streamsWithStreamObjects(f, 8);
    long s = streams.getFirst();
    long start = f.written(s).get(13).baseOffset() + 1; // inside the fourth object
    f.metadata.trimStream(f.node, s, 1, start).join();
    long firstLiveStart = f.written(s).get(12).baseOffset();
    StreamObjectCompactor compactor =
        new StreamObjectCompactor(f.node, f.metadata, f.metadata, f.store, f.keys, config(100, 1L << 30));

    CompactionReport report = compactor.runOnce(List.of(s)).join();

    assertThat(report.didWork()).isTrue();
    List<ObjectMetadata> after = f.metadata.getStreamObjects(s).join();
    assertThat(after).hasSize(1);
    assertThat(after.getFirst().rangeOf(s).startOffset()).isEqualTo(firstLiveStart);
    assertEveryStreamReadsBack(f, List.of(s), Map.of(s, start));
  }

  @Test
  void rejectedCommitKeepsTheSourcesAndDeletesTheOutput() {
    // Goal: a rejected stream-object commit leaves the sources committed and readable, the output deleted.
    ColdDataFixture f = new ColdDataFixture(SEED, 300);
    List<Long> streams = streamsWithStreamObjects(f, 4);
    HookedObjectManager objects = new HookedObjectManager(f.metadata);
    objects.commitFailure = () -> new InvalidCommitException("rejected by test");
    Set<String> keysBefore = keys(f);
    List<ObjectMetadata> before = f.metadata.getStreamObjects(streams.getFirst()).join();
    StreamObjectCompactor compactor =
        new StreamObjectCompactor(f.node, objects, f.metadata, f.store, f.keys, config(100, 1L << 30));

    CompactionReport report = compactor.runOnce(streams).join();

    assertThat(report.failures()).hasSize(2).allMatch(m -> m.contains("rejected by test"));
    assertThat(f.metadata.getStreamObjects(streams.getFirst()).join()).isEqualTo(before);
    assertThat(keys(f)).isEqualTo(keysBefore);
    assertEveryStreamReadsBack(f, streams, Map.of());
  }
}
