package io.tidemark.stream.time;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Goal: virtual time runs due tasks in (time, scheduling) order on the advancing thread, replayably by seed. */
class DeterministicSchedulerTest {

  @Test
  void tasksRunOnlyWhenTimeAdvancesInTimeThenSchedulingOrder() {
    DeterministicScheduler s = new DeterministicScheduler(1, 1_000);
    List<String> ran = new ArrayList<>();
    s.schedule(() -> ran.add("b@20"), 20, TimeUnit.MILLISECONDS);
    s.schedule(() -> ran.add("a@10"), 10, TimeUnit.MILLISECONDS);
    s.schedule(() -> ran.add("c@20"), 20, TimeUnit.MILLISECONDS);
    Scheduler.Timer cancelled = s.schedule(() -> ran.add("never"), 15, TimeUnit.MILLISECONDS);
    assertThat(cancelled.cancel(false)).isTrue();
    assertThat(s.advance(9)).isZero();
    assertThat(ran).isEmpty();
    assertThat(s.advance(11)).isEqualTo(3);
    assertThat(ran).containsExactly("a@10", "b@20", "c@20");
    assertThat(s.nowMs()).isEqualTo(1_020);
    assertThat(cancelled.cancel(false)).isFalse();
  }

  @Test
  void aFixedDelayTaskRepeatsUntilCancelledAndMaySchedule() {
    DeterministicScheduler s = new DeterministicScheduler(1, 0);
    List<Long> at = new ArrayList<>();
    Scheduler.Timer[] timer = new Scheduler.Timer[1];
    timer[0] = s.scheduleWithFixedDelay(() -> {
      at.add(s.nowMs());
      s.schedule(() -> at.add(-s.nowMs()), 1, TimeUnit.MILLISECONDS); // a task scheduling another
      if (at.size() >= 5) {
        timer[0].cancel(false);
      }
    }, 5, 10, TimeUnit.MILLISECONDS);
    s.advance(100);
    assertThat(at).containsExactly(5L, -6L, 15L, -16L, 25L, -26L);
    assertThat(s.pending()).isZero();
  }

  @Test
  void theSameSeedGivesTheSameRandomnessAndShutdownRefuses() {
    DeterministicScheduler a = new DeterministicScheduler(42, 0);
    DeterministicScheduler b = new DeterministicScheduler(42, 0);
    assertThat(IntStream.range(0, 20).map(i -> a.random().nextInt(1000)).toArray())
        .isEqualTo(IntStream.range(0, 20).map(i -> b.random().nextInt(1000)).toArray());
    a.shutdown();
    assertThatThrownBy(() -> a.schedule(() -> { }, 1, TimeUnit.MILLISECONDS))
        .isInstanceOf(RejectedExecutionException.class);
    assertThatThrownBy(() -> b.advance(-1)).isInstanceOf(IllegalArgumentException.class);
  }
}
