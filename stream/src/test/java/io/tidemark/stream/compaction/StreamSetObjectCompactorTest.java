package io.tidemark.stream.compaction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.metadata.InvalidCommitException;
import io.tidemark.stream.metadata.ObjectMetadata;
import io.tidemark.stream.metadata.StreamRange;
import io.tidemark.stream.objectstore.ObjectInfo;
import io.tidemark.stream.read.CachedColdReader;
import io.tidemark.stream.read.ColdDataFixture;
import io.tidemark.stream.read.ReadConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class StreamSetObjectCompactorTest {

  private static final long SEED = Long.getLong("tidemark.test.seed", System.nanoTime());

  static CompactionConfig config(int maxObjects, long maxBytes, long splitBytes) {
    return new CompactionConfig(60_000, maxObjects, maxBytes, splitBytes, 7_200_000, 64 << 10, 1024, 1 << 20,
        3_600_000, 4);
  }

  /** Reads every batch of {@code stream} from {@code from} with a fresh cold reader (no cache from before). */
  static List<StreamBatch> readAll(ColdDataFixture f, long stream, long from) {
    ReadConfig rc = new ReadConfig(1 << 20, 50, 1 << 20, 4096, 4096, 100, 60_000, 1, 16, 4);
    try (CachedColdReader reader = CachedColdReader.create(rc, f.metadata, f.store, f.keys, new SimpleMeterRegistry(),
        f.clockMs::get)) {
      List<StreamBatch> all = new ArrayList<>();
      long cursor = from;
      long end = f.endOffset(stream);
      while (cursor < end) {
        List<StreamBatch> got = reader.read(stream, cursor, end, 64 << 10).join();
        assertThat(got).as("stream %d at %d (seed %d)", stream, cursor, SEED).isNotEmpty();
        all.addAll(got);
        cursor = got.getLast().nextOffset();
      }
      return all;
    }
  }

  static void assertEveryStreamReadsBack(ColdDataFixture f, List<Long> streams, Map<Long, Long> from) {
    for (long s : streams) {
      long start = from.getOrDefault(s, 0L);
      assertThat(readAll(f, s, start)).as("stream %d (seed %d)", s, SEED)
          .isEqualTo(f.expected(s, start, f.endOffset(s), Integer.MAX_VALUE));
    }
  }

  static int committed(ColdDataFixture f) {
    return f.metadata.objectCounts().get("COMMITTED");
  }

  @Test
  void compactionPreservesEveryByteAndOffsetAndReducesObjectCount() {
    // Goal: 20 stream-set objects of 8 streams become one stream-set object plus stream objects for
    // the large streams; every stream reads back byte-identical and its ranges stay gap-free.
    System.out.println("StreamSetObjectCompactorTest seed=" + SEED);
    ColdDataFixture f = new ColdDataFixture(SEED, 400);
    List<Long> streams = f.createStreams(8);
    f.uploadRandom(streams, 20, 6, 0.1, 1024);
    // One stream much larger than the others, to be split out.
    f.upload(Map.of(streams.getFirst(), 200), Set.of(), 1024);
    int before = committed(f);
    int setsBefore = f.metadata.getStreamSetObjects(1).join().size();
    StreamSetObjectCompactor compactor = new StreamSetObjectCompactor(f.node, f.metadata, f.metadata, f.store, f.keys,
        config(100, 64 << 20, 16 << 10), f.clockMs::get);

    CompactionReport report = compactor.runOnce().join();

    assertThat(report.didWork()).isTrue();
    assertThat(report.compactedObjectIds()).hasSize(setsBefore);
    assertThat(report.streamObjectIds()).isNotEmpty();
    assertThat(f.metadata.getStreamSetObjects(1).join()).hasSize(1);
    // Every input set object is replaced by the one output set object plus one stream object per gap-free
    // run of a split stream (how many runs there are depends on the seed's earlier stream objects).
    assertThat(setsBefore).isGreaterThanOrEqualTo(20);
    assertThat(committed(f)).isEqualTo(before - setsBefore + 1 + report.streamObjectIds().size());
    assertEveryStreamReadsBack(f, streams, Map.of());
    for (long s : streams) {
      assertGapFree(f, s, 0);
    }
    // Once the replaced objects are physically deleted, reads still work.
    f.clockMs.addAndGet(3_600_000);
    f.metadata.tick().join();
    assertThat(f.metadata.objectCounts().get("MARKED_FOR_DELETION")).isZero();
    assertEveryStreamReadsBack(f, streams, Map.of());
  }

  static void assertGapFree(ColdDataFixture f, long stream, long from) {
    List<ObjectMetadata> objects = f.metadata.getObjects(stream, from, f.endOffset(stream), 10_000).join();
    long expected = -1;
    for (ObjectMetadata o : objects) {
      StreamRange r = o.rangeOf(stream);
      if (expected >= 0) {
        assertThat(r.startOffset()).as("stream %d object %d", stream, o.objectId()).isEqualTo(expected);
      }
      expected = r.endOffset();
    }
    assertThat(expected).isEqualTo(f.endOffset(stream));
  }

  @Test
  void eachRunIsBoundedInObjectsAndBytes() {
    // Goal: a run replaces at most max.objects objects and max.bytes bytes; repeated runs converge.
    ColdDataFixture f = new ColdDataFixture(SEED, 300);
    List<Long> streams = f.createStreams(3);
    f.uploadRandom(streams, 12, 4, 0, 1024);
    List<ObjectMetadata> sets = f.metadata.getStreamSetObjects(1).join();
    long largest = sets.stream().mapToLong(ObjectMetadata::sizeBytes).max().orElseThrow();
    long maxBytes = 3 * largest;
    StreamSetObjectCompactor compactor = new StreamSetObjectCompactor(f.node, f.metadata, f.metadata, f.store, f.keys,
        config(4, maxBytes, 1L << 40), f.clockMs::get);
    for (int run = 0; run < 20 && f.metadata.getStreamSetObjects(1).join().size() > 1; run++) {
      Map<Long, Long> sizes = new TreeMap<>();
      f.metadata.getStreamSetObjects(1).join().forEach(o -> sizes.put(o.objectId(), o.sizeBytes()));
      CompactionReport report = compactor.runOnce().join();
      if (!report.didWork()) {
        break;
      }
      assertThat(report.compactedObjectIds()).hasSizeLessThanOrEqualTo(4);
      assertThat(report.compactedObjectIds().stream().mapToLong(sizes::get).sum()).isLessThanOrEqualTo(maxBytes);
      assertEveryStreamReadsBack(f, streams, Map.of());
    }
    assertThat(f.metadata.getStreamSetObjects(1).join().size()).isLessThan(sets.size());
  }

  @Test
  void trimmedAndDeletedStreamsAreDroppedNeverResurrected() {
    // Goal: a stream trimmed past all its data and a deleted stream leave no data in the outputs; a
    // partly trimmed stream reads back identical from its start offset; no output is wholly dead.
    ColdDataFixture f = new ColdDataFixture(SEED, 300);
    List<Long> streams = f.createStreams(4);
    long whollyTrimmed = streams.get(0);
    long partlyTrimmed = streams.get(1);
    long deleted = streams.get(2);
    long untouched = streams.get(3);
    Map<Long, Integer> counts = new TreeMap<>();
    streams.forEach(s -> counts.put(s, 5));
    for (int i = 0; i < 4; i++) {
      f.upload(counts, Set.of(), 1024);
    }
    f.metadata.trimStream(f.node, whollyTrimmed, 1, f.endOffset(whollyTrimmed)).join();
    long partStart = f.written(partlyTrimmed).get(7).baseOffset() + 1; // inside the second object
    f.metadata.trimStream(f.node, partlyTrimmed, 1, partStart).join();
    f.metadata.deleteStream(f.node, deleted, 1).join();

    StreamSetObjectCompactor compactor = new StreamSetObjectCompactor(f.node, f.metadata, f.metadata, f.store, f.keys,
        config(100, 64 << 20, 1L << 40), f.clockMs::get);
    CompactionReport report = compactor.runOnce().join();

    assertThat(report.didWork()).isTrue();
    assertThat(report.bytesDropped()).isPositive();
    List<ObjectMetadata> sets = f.metadata.getStreamSetObjects(1).join();
    assertThat(sets).hasSize(1);
    assertThat(sets.getFirst().ranges()).extracting(StreamRange::streamId).containsExactly(partlyTrimmed, untouched);
    assertThat(f.metadata.getObjects(whollyTrimmed, 0, Long.MAX_VALUE, 100).join()).isEmpty();
    assertEveryStreamReadsBack(f, List.of(partlyTrimmed), Map.of(partlyTrimmed, partStart));
    assertEveryStreamReadsBack(f, List.of(untouched), Map.of());
  }

  @Test
  void trimDuringTheRunAbortsItAndLosesNothing() {
    // Goal: a stream trimmed past all its data while a run works makes the run abort (its outputs
    // deleted), the inputs stay readable, and the next run drops that stream.
    ColdDataFixture f = new ColdDataFixture(SEED, 300);
    List<Long> streams = f.createStreams(2);
    Map<Long, Integer> counts = Map.of(streams.get(0), 5, streams.get(1), 5);
    f.upload(counts, Set.of(), 1024);
    f.upload(Map.of(streams.get(0), 5), Set.of(), 1024);
    HookedObjectManager objects = new HookedObjectManager(f.metadata);
    long victim = streams.get(1);
    objects.beforePrepare = () -> {
      objects.beforePrepare = () -> {};
      f.metadata.trimStream(f.node, victim, 1, f.endOffset(victim)).join();
    };
    Set<String> keysBefore = keys(f);
    StreamSetObjectCompactor compactor = new StreamSetObjectCompactor(f.node, objects, f.metadata, f.store, f.keys,
        config(100, 64 << 20, 1L << 40), f.clockMs::get);

    assertThatThrownBy(() -> compactor.runOnce().join()).hasCauseInstanceOf(CompactionAbortedException.class)
        .hasMessageContaining("stream " + victim);
    assertThat(keys(f)).isEqualTo(keysBefore);
    assertEveryStreamReadsBack(f, List.of(streams.get(0)), Map.of());

    CompactionReport next = compactor.runOnce().join();
    assertThat(next.didWork()).isTrue();
    assertThat(f.metadata.getStreamSetObjects(1).join().getFirst().ranges()).extracting(StreamRange::streamId)
        .containsExactly(streams.get(0));
    assertEveryStreamReadsBack(f, List.of(streams.get(0)), Map.of());
  }

  @Test
  void rejectedCommitLosesNothingAndDeletesTheOutputs() {
    // Goal: when the metadata authority rejects the commit, the inputs stay committed and readable
    // and the uploaded outputs are deleted again.
    ColdDataFixture f = new ColdDataFixture(SEED, 300);
    List<Long> streams = f.createStreams(3);
    f.uploadRandom(streams, 5, 5, 0, 1024);
    HookedObjectManager objects = new HookedObjectManager(f.metadata);
    objects.commitFailure = () -> new InvalidCommitException("rejected by test");
    List<ObjectMetadata> setsBefore = f.metadata.getStreamSetObjects(1).join();
    Set<String> keysBefore = keys(f);
    StreamSetObjectCompactor compactor = new StreamSetObjectCompactor(f.node, objects, f.metadata, f.store, f.keys,
        config(100, 64 << 20, 1L << 40), f.clockMs::get);

    assertThatThrownBy(() -> compactor.runOnce().join()).hasCauseInstanceOf(InvalidCommitException.class);

    assertThat(f.metadata.getStreamSetObjects(1).join()).isEqualTo(setsBefore);
    assertThat(keys(f)).isEqualTo(keysBefore);
    assertEveryStreamReadsBack(f, streams, Map.of());
    objects.commitFailure = null;
    assertThat(compactor.runOnce().join().didWork()).isTrue();
    assertEveryStreamReadsBack(f, streams, Map.of());
  }

  @Test
  void unknownCommitOutcomeKeepsTheOutputs() {
    // Goal: a commit that fails without a verdict (e.g. a timeout) deletes nothing: it may have committed.
    ColdDataFixture f = new ColdDataFixture(SEED, 300);
    List<Long> streams = f.createStreams(2);
    f.uploadRandom(streams, 3, 5, 0, 1024);
    HookedObjectManager objects = new HookedObjectManager(f.metadata);
    objects.commitFailure = () -> new IllegalStateException("commit timed out");
    Set<String> keysBefore = keys(f);
    StreamSetObjectCompactor compactor = new StreamSetObjectCompactor(f.node, objects, f.metadata, f.store, f.keys,
        config(100, 64 << 20, 1L << 40), f.clockMs::get);

    assertThatThrownBy(() -> compactor.runOnce().join()).hasMessageContaining("timed out");

    assertThat(keys(f)).containsAll(keysBefore).hasSizeGreaterThan(keysBefore.size());
    assertEveryStreamReadsBack(f, streams, Map.of());
  }

  @Test
  void oldStreamSetObjectsAreSplitEntirely() {
    // Goal: inputs older than force.split.age become stream objects only, so stream-set data has a bounded life.
    ColdDataFixture f = new ColdDataFixture(SEED, 300);
    List<Long> streams = f.createStreams(3);
    f.uploadRandom(streams, 3, 5, 0, 1024);
    f.clockMs.addAndGet(7_200_000);
    StreamSetObjectCompactor compactor = new StreamSetObjectCompactor(f.node, f.metadata, f.metadata, f.store, f.keys,
        config(100, 64 << 20, 1L << 40), f.clockMs::get);

    CompactionReport report = compactor.runOnce().join();

    assertThat(report.streamSetObjectId()).isEqualTo(-1);
    assertThat(f.metadata.getStreamSetObjects(1).join()).isEmpty();
    assertEveryStreamReadsBack(f, streams, Map.of());
  }

  @Test
  void singleFreshObjectIsLeftAlone() {
    // Goal: nothing to gain from one stream-set object with only live data: the run is skipped and says so.
    ColdDataFixture f = new ColdDataFixture(SEED, 300);
    List<Long> streams = f.createStreams(2);
    f.uploadRandom(streams, 1, 5, 0, 1024);
    StreamSetObjectCompactor compactor = new StreamSetObjectCompactor(f.node, f.metadata, f.metadata, f.store, f.keys,
        config(100, 64 << 20, 1L << 40), f.clockMs::get);
    CompactionReport report = compactor.runOnce().join();
    assertThat(report.didWork()).isFalse();
    assertThat(report.skippedReason()).contains("only one");
  }

  static Set<String> keys(ColdDataFixture f) {
    return Set.copyOf(f.store.list("").join().stream().map(ObjectInfo::key).toList());
  }
}
