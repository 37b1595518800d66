package io.tidemark.stream.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

/** The concurrency bound: permits, a bounded FIFO queue, fast failure beyond it, and close. */
class RequestLimiterTest {

  private final List<CompletableFuture<Integer>> started = new ArrayList<>();
  private final AtomicInteger running = new AtomicInteger();
  private final AtomicInteger maxRunning = new AtomicInteger();

  private CompletableFuture<Integer> operation(int id) {
    maxRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
    CompletableFuture<Integer> f = new CompletableFuture<>();
    started.add(f);
    return f.whenComplete((v, e) -> running.decrementAndGet());
  }

  @Test
  void runsAtMostThePermitCountAndQueuesInOrder() {
    // Goal: 3 permits and a queue of 2: 3 run, 2 wait, the 6th fails at once; finishing one starts the oldest waiter.
    RequestLimiter limiter = new RequestLimiter("test store", 3, 2);
    List<CompletableFuture<Integer>> results = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      int id = i;
      results.add(limiter.submit(() -> operation(id)));
    }
    assertThat(started).hasSize(3);
    assertThat(limiter.inFlight()).isEqualTo(3);
    assertThat(limiter.queued()).isEqualTo(2);
    assertThat(results.get(5)).isCompletedExceptionally();
    assertThatThrownBy(results.get(5)::join).hasCauseInstanceOf(ObjectStorageException.class)
        .hasMessageContaining("overloaded");

    started.get(1).complete(1);
    assertThat(results.get(1)).isCompletedWithValue(1);
    assertThat(started).hasSize(4);
    started.get(0).complete(0);
    started.get(2).completeExceptionally(new IllegalStateException("boom"));
    assertThat(results.get(2)).isCompletedExceptionally();
    assertThat(started).hasSize(5);
    started.get(3).complete(3);
    started.get(4).complete(4);
    assertThat(results.get(3)).isCompletedWithValue(3);
    assertThat(results.get(4)).isCompletedWithValue(4);
    assertThat(maxRunning.get()).isEqualTo(3);
    assertThat(limiter.inFlight()).isZero();
  }

  @Test
  void anOperationThatThrowsReleasesItsPermit() {
    // Goal: an operation that throws instead of returning a future fails its call and frees its permit.
    RequestLimiter limiter = new RequestLimiter("test store", 1, 0);
    CompletableFuture<Integer> thrown = limiter.submit(() -> {
      throw new IllegalArgumentException("bad");
    });
    assertThat(thrown).isCompletedExceptionally();
    assertThat(limiter.inFlight()).isZero();
    assertThat(limiter.submit(() -> CompletableFuture.completedFuture(7))).isCompletedWithValue(7);
  }

  @Test
  void closeFailsQueuedAndNewCalls() {
    // Goal: closing fails every queued call and every later call with "closed"; running ones finish normally.
    RequestLimiter limiter = new RequestLimiter("test store", 1, 5);
    CompletableFuture<Integer> running = limiter.submit(() -> operation(0));
    CompletableFuture<Integer> queued = limiter.submit(() -> operation(1));
    limiter.close();
    assertThatThrownBy(queued::join).hasMessageContaining("closed");
    assertThatThrownBy(() -> limiter.submit(() -> operation(2)).join()).hasMessageContaining("closed");
    started.get(0).complete(9);
    assertThat(running).isCompletedWithValue(9);
    assertThat(started).hasSize(1);
  }
}
