package io.tidemark.server.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Goal: the console's pure parts hold their contracts: one computation per key and window, bounded work, rates, diffs. */
class ConsolePartsTest {

  @Test
  void manyCallersOfOneKeyShareOneComputationPerWindow() throws Exception {
    AtomicLong now = new AtomicLong(1_000);
    Snapshots snapshots = new Snapshots(now::get, 16, 4, 10_000);
    AtomicInteger computed = new AtomicInteger();
    CountDownLatch release = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(20);
    try {
      List<Future<Integer>> answers = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        answers.add(pool.submit(() -> snapshots.get("k", 2_000, () -> {
          await(release);
          return computed.incrementAndGet();
        })));
      }
      Thread.sleep(200); // let every caller arrive while the first computation is still running
      release.countDown();
      for (Future<Integer> a : answers) {
        assertThat(a.get(10, TimeUnit.SECONDS)).isEqualTo(1);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(snapshots.get("k", 2_000, computed::incrementAndGet)).as("still fresh").isEqualTo(1);
    now.addAndGet(2_000);
    assertThat(snapshots.get("k", 2_000, computed::incrementAndGet)).as("stale: computed again").isEqualTo(2);
  }

  @Test
  void tooManyComputationsAtOnceAreRefusedAndFailuresAreNotKept() throws Exception {
    Snapshots snapshots = new Snapshots(System::currentTimeMillis, 16, 1, 10_000);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch started = new CountDownLatch(1);
    Thread busy = Thread.ofPlatform().start(() -> snapshots.get("slow", 1_000, () -> {
      started.countDown();
      await(release);
      return "done";
    }));
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    assertThatThrownBy(() -> snapshots.get("other", 1_000, () -> "x")).isInstanceOf(Snapshots.BusyException.class);
    release.countDown();
    busy.join(10_000);
    assertThat(snapshots.<String>get("other", 1_000, () -> "x")).as("refusal not kept").isEqualTo("x");

    AtomicInteger calls = new AtomicInteger();
    assertThatThrownBy(() -> snapshots.get("failing", 60_000, () -> {
      calls.incrementAndGet();
      throw new IllegalStateException("boom");
    })).hasMessage("boom");
    assertThat(snapshots.<String>get("failing", 60_000, () -> "ok " + calls.incrementAndGet())).isEqualTo("ok 2");
  }

  @Test
  void keptAnswersAreBounded() {
    AtomicLong now = new AtomicLong();
    Snapshots snapshots = new Snapshots(now::get, 8, 4, 1_000);
    for (int i = 0; i < 100; i++) {
      now.incrementAndGet();
      int n = i;
      snapshots.get("page-" + i, 60_000, () -> n);
    }
    assertThat(snapshots.size()).isLessThanOrEqualTo(8);
  }

  @Test
  void ratesComeFromTheLastTwoSamplesAndRestartWhenATotalGoesDown() {
    Rates rates = new Rates(2, 60_000);
    assertThat(rates.sample("a", 100, 0)).isNull();
    assertThat(rates.sample("a", 300, 2_000)).isEqualTo(100.0);
    assertThat(rates.sample("a", 301, 2_100)).as("too close: previous rate").isEqualTo(100.0);
    assertThat(rates.sample("a", 50, 4_000)).as("went down: restarts").isNull();
    assertThat(rates.sample("a", 150, 5_000)).isEqualTo(100.0);
    assertThat(rates.sample("b", 1, 5_000)).isNull();
    assertThat(rates.sample("c", 1, 5_000)).as("bounded: no room for a third key").isNull();
    assertThat(rates.sample("c", 2, 6_000)).isNull();
    assertThat(rates.sample("d", 1, 100_000)).as("old keys are forgotten to make room").isNull();
    assertThat(rates.sample("d", 11, 101_000)).isEqualTo(10.0);
  }

  @Test
  void aDiffKeepsCommonLinesAndMarksRemovedThenAddedOnes() {
    List<TextDiff.Line> d = TextDiff.diff("{\n  \"a\": 1,\n  \"b\": 2\n}", "{\n  \"a\": 1,\n  \"b\": 3,\n  \"c\": 4\n}");
    assertThat(d).containsExactly(new TextDiff.Line(" ", "{"), new TextDiff.Line(" ", "  \"a\": 1,"),
        new TextDiff.Line("-", "  \"b\": 2"), new TextDiff.Line("+", "  \"b\": 3,"), new TextDiff.Line("+", "  \"c\": 4"),
        new TextDiff.Line(" ", "}"));
    assertThat(TextDiff.diff("same", "same")).containsExactly(new TextDiff.Line(" ", "same"));
    assertThatThrownBy(() -> TextDiff.diff("x\n".repeat(TextDiff.MAX_LINES + 1), "x"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most " + TextDiff.MAX_LINES);
  }

  @Test
  void aMoveIsListedFinishedOnceItsReassignmentEndsAndTheListIsBounded() {
    // Goal: the moves page lists a move that started and ended between two refreshes, newest first, at most 50.
    AtomicLong now = new AtomicLong(1_000);
    RecentMoves moves = new RecentMoves(now::get);
    java.util.UUID id = java.util.UUID.randomUUID();
    io.tidemark.metadata.record.MetadataRecord topic = new io.tidemark.metadata.record.MetadataRecord.Topic(id, "t", 2);
    io.tidemark.metadata.image.MetadataImage image = io.tidemark.metadata.image.MetadataImage.fromRecords(List.of(topic), 1);
    moves.onImage(image, List.of(partition(id, 0, 1, List.of(2), List.of(1))));
    assertThat(moves.finished()).isEmpty();
    moves.onImage(image, List.of(partition(id, 1, 3, List.of(3), List.of()))); // a leader change, not a move's end
    now.set(1_700);
    moves.onImage(image, List.of(partition(id, 0, 2, List.of(2), List.of())));
    assertThat(moves.finished()).containsExactly(new RecentMoves.Finished("t", 0, List.of(1), List.of(2), 2, 7, 1_000, 1_700));
    for (int i = 0; i < RecentMoves.MAX_FINISHED + 5; i++) {
      moves.onImage(image, List.of(partition(id, 1, 3, List.of(1), List.of(3))));
      moves.onImage(image, List.of(partition(id, 1, 1, List.of(1), List.of())));
    }
    assertThat(moves.finished()).hasSize(RecentMoves.MAX_FINISHED).allMatch(f -> f.partition() == 1);
  }

  private static io.tidemark.metadata.record.MetadataRecord partition(java.util.UUID topic, int p, int leader,
      List<Integer> replicas, List<Integer> previous) {
    return new io.tidemark.metadata.record.MetadataRecord.Partition(topic, p, leader, 7, List.of(1L, 2L), replicas, previous);
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
