package io.tidemark.stream.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class GetLimiterTest {

  @Test
  void holdsOperationsBeyondTheBoundAndRefusesBeyondTheQueue() {
    // Goal: at most maxInFlight operations run; the next maxWaiting wait; one more fails fast as busy.
    GetLimiter limiter = new GetLimiter(2, 2);
    List<CompletableFuture<Integer>> gets = new ArrayList<>();
    List<CompletableFuture<Integer>> results = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      int n = i;
      results.add(limiter.submit(() -> {
        CompletableFuture<Integer> get = new CompletableFuture<>();
        gets.add(get);
        return get.thenApply(v -> v + n);
      }));
    }
    assertThat(gets).hasSize(2);
    assertThat(limiter.hasSpareCapacity()).isFalse();
    assertThatThrownBy(() -> limiter.submit(() -> CompletableFuture.completedFuture(0)).join())
        .hasCauseInstanceOf(ColdReadBusyException.class);
    gets.get(0).complete(100);
    assertThat(results.get(0).join()).isEqualTo(100);
    assertThat(gets).hasSize(3); // the first waiter got the permit
    gets.get(1).completeExceptionally(new IllegalStateException("failed GET"));
    assertThatThrownBy(results.get(1)::join).hasMessageContaining("failed GET");
    gets.get(2).complete(10);
    gets.get(3).complete(10);
    assertThat(results.get(2).join()).isEqualTo(12);
    assertThat(results.get(3).join()).isEqualTo(13);
    assertThat(limiter.inFlight()).isZero();
    assertThat(limiter.peakInFlight()).isEqualTo(2);
    assertThat(limiter.hasSpareCapacity()).isTrue();
  }

  @Test
  @Timeout(60) // without the trampoline the recursion overflows inside a callback and the joins hang
  void longQueueOfSynchronousOperationsDoesNotRecurseDeeply() {
    // Goal: 50,000 queued operations that complete at once run one after another without a stack overflow.
    GetLimiter limiter = new GetLimiter(1, 100_000);
    CompletableFuture<Integer> first = new CompletableFuture<>();
    CompletableFuture<Integer> head = limiter.submit(() -> first);
    List<CompletableFuture<Integer>> rest = new ArrayList<>();
    for (int i = 0; i < 50_000; i++) {
      int n = i;
      rest.add(limiter.submit(() -> CompletableFuture.completedFuture(n)));
    }
    first.complete(-1);
    assertThat(head.join()).isEqualTo(-1);
    for (int i = 0; i < rest.size(); i++) {
      assertThat(rest.get(i).join()).isEqualTo(i);
    }
    assertThat(limiter.inFlight()).isZero();
  }
}
