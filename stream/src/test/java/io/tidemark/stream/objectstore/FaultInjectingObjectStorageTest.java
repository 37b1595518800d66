package io.tidemark.stream.objectstore;

import static io.tidemark.stream.objectstore.ObjectStorageContractTest.bytes;
import static io.tidemark.stream.objectstore.ObjectStorageContractTest.join;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.tidemark.stream.objectstore.FaultInjectingObjectStorage.Fault;
import io.tidemark.stream.objectstore.FaultInjectingObjectStorage.Operation;
import io.tidemark.stream.objectstore.FaultInjectingObjectStorage.Rule;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The fault-injecting wrapper: each fault kind, runtime rule changes, limits, seeds and counters. */
class FaultInjectingObjectStorageTest {
  private static final long SEED = 7L;

  /** A scheduler whose delayed tasks run only when the test says so. */
  private static final class ManualScheduler extends ScheduledThreadPoolExecutor {
    final List<Runnable> tasks = new ArrayList<>();
    final List<Long> delaysMs = new ArrayList<>();

    ManualScheduler() {
      super(1);
    }

    @Override
    public synchronized ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
      tasks.add(command);
      delaysMs.add(unit.toMillis(delay));
      return null;
    }

    synchronized void runAll() {
      List<Runnable> due = new ArrayList<>(tasks);
      tasks.clear();
      due.forEach(Runnable::run);
    }
  }

  private final MemoryObjectStorage memory = new MemoryObjectStorage(() -> 1L);
  private final ManualScheduler scheduler = new ManualScheduler();
  private final FaultInjectingObjectStorage storage =
      new FaultInjectingObjectStorage(memory, new Random(SEED), scheduler);

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  private static ByteBuffer one(int b) {
    return ByteBuffer.wrap(new byte[] {(byte) b});
  }

  @Test
  void failRuleFailsWithoutCallingTheStore() {
    // Goal: a FAIL rule fails the call with ObjectStorageException, the store is untouched and the fault is counted.
    storage.setRules(Rule.of(Operation.PUT, Fault.FAIL, 1.0));
    assertThatThrownBy(() -> join(storage.put("k", one(1))))
        .isInstanceOf(ObjectStorageException.class).hasMessageContaining("injected");
    assertThatThrownBy(() -> join(memory.get("k"))).isInstanceOf(ObjectNotFoundException.class);
    assertThat(storage.injected(Fault.FAIL)).isEqualTo(1);
    assertThat(storage.injected(Operation.PUT)).isEqualTo(1);
    assertThat(storage.injected(Operation.GET)).isZero();
  }

  @Test
  void throttleRuleFailsAsThrottled() {
    // Goal: a THROTTLE rule fails with the retryable ThrottledException and changes nothing.
    storage.setRules(Rule.of(Operation.PUT, Fault.THROTTLE, 1.0));
    assertThatThrownBy(() -> join(storage.put("k", one(1)))).isInstanceOf(ThrottledException.class);
    assertThatThrownBy(() -> join(memory.get("k"))).isInstanceOf(ObjectNotFoundException.class);
    assertThat(storage.injected(Fault.THROTTLE)).isEqualTo(1);
  }

  @Test
  void unknownOutcomeAfterApplyHasWritten() {
    // Goal: UNKNOWN_AFTER_APPLY performs the put and then reports UnknownOutcomeException.
    storage.setRules(Rule.of(Operation.PUT, Fault.UNKNOWN_AFTER_APPLY, 1.0));
    assertThatThrownBy(() -> join(storage.put("k", one(5)))).isInstanceOf(UnknownOutcomeException.class);
    assertThat(bytes(join(memory.get("k")))).containsExactly(5);
  }

  @Test
  void unknownOutcomeDroppedHasNotWritten() {
    // Goal: UNKNOWN_DROPPED reports UnknownOutcomeException without performing the put.
    storage.setRules(Rule.of(Operation.PUT, Fault.UNKNOWN_DROPPED, 1.0));
    assertThatThrownBy(() -> join(storage.put("k", one(5)))).isInstanceOf(UnknownOutcomeException.class);
    assertThatThrownBy(() -> join(memory.get("k"))).isInstanceOf(ObjectNotFoundException.class);
  }

  @Test
  void delayWaitsOnTheInjectedScheduler() {
    // Goal: a DELAY rule holds the call on the injected scheduler for its delay, then performs it.
    storage.setRules(Rule.delay(Operation.PUT, 250, 1.0));
    CompletableFuture<Void> put = storage.put("k", one(1));
    assertThat(put).isNotDone();
    assertThat(scheduler.delaysMs).containsExactly(250L);
    assertThatThrownBy(() -> join(memory.get("k"))).isInstanceOf(ObjectNotFoundException.class);
    scheduler.runAll();
    join(put);
    assertThat(bytes(join(memory.get("k")))).containsExactly(1);
    assertThat(storage.injected(Fault.DELAY)).isEqualTo(1);
  }

  @Test
  void delayCombinesWithALaterFault() {
    // Goal: delay rules add up and a later failing rule still decides the outcome after the delay.
    storage.setRules(Rule.delay(null, 100, 1.0), Rule.delay(Operation.GET, 50, 1.0),
        Rule.of(Operation.GET, Fault.FAIL, 1.0));
    join(memory.put("k", one(1)));
    CompletableFuture<ByteBuffer> get = storage.get("k");
    assertThat(scheduler.delaysMs).containsExactly(150L);
    scheduler.runAll();
    assertThatThrownBy(() -> join(get)).isInstanceOf(ObjectStorageException.class);
    assertThat(storage.injectedTotal()).isEqualTo(3);
  }

  @Test
  void rulesChangeAtRuntimeAndRespectTheirLimit() {
    // Goal: a rule limited to two firings fails two calls only, and clearing the rules turns faults off.
    storage.setRules(Rule.of(null, Fault.FAIL, 1.0).times(2));
    assertThat(storage.put("a", one(1))).isCompletedExceptionally();
    assertThat(storage.put("a", one(1))).isCompletedExceptionally();
    join(storage.put("a", one(1)));
    storage.setRules(Rule.of(Operation.GET, Fault.FAIL, 1.0).forKeysStartingWith("b"));
    join(storage.get("a"));
    assertThat(storage.get("b")).isCompletedExceptionally();
    storage.clearRules();
    assertThat(storage.get("b")).isCompletedExceptionally(); // not injected: the key does not exist
    assertThatThrownBy(() -> join(storage.get("b"))).isInstanceOf(ObjectNotFoundException.class);
    assertThat(storage.injected(Fault.FAIL)).isEqualTo(3);
  }

  @Test
  void probabilisticFaultsAreReproducibleFromTheSeed() {
    // Goal: the same seed gives the same sequence of injected faults, at about the configured rate.
    List<Boolean> first = failurePattern(new Random(SEED));
    List<Boolean> second = failurePattern(new Random(SEED));
    List<Boolean> other = failurePattern(new Random(SEED + 1));
    assertThat(first).isEqualTo(second).isNotEqualTo(other);
    long failures = first.stream().filter(b -> b).count();
    assertThat(failures).isBetween(35L, 85L); // p = 0.3 over 200 calls
  }

  private List<Boolean> failurePattern(Random random) {
    FaultInjectingObjectStorage s = new FaultInjectingObjectStorage(new MemoryObjectStorage(() -> 1L), random, scheduler);
    s.setRules(Rule.of(Operation.PUT, Fault.FAIL, 0.3));
    List<Boolean> pattern = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      pattern.add(s.put("k" + i, one(i)).isCompletedExceptionally());
    }
    return pattern;
  }

  @Test
  void multipartCallsAreTargetable() {
    // Goal: faults reach multipart calls: an unknown-outcome completion still publishes the object.
    storage.setRules(Rule.of(Operation.COMPLETE_MULTIPART, Fault.UNKNOWN_AFTER_APPLY, 1.0),
        Rule.of(Operation.UPLOAD_PART, Fault.FAIL, 1.0).times(1));
    MultipartUpload upload = join(storage.startMultipartUpload("mp"));
    assertThat(upload.uploadPart(1, one(1))).isCompletedExceptionally();
    join(upload.uploadPart(1, one(1)));
    assertThatThrownBy(() -> join(upload.complete())).isInstanceOf(UnknownOutcomeException.class);
    assertThat(bytes(join(memory.get("mp")))).containsExactly(1);
    assertThat(storage.injected(Operation.UPLOAD_PART)).isEqualTo(1);
    assertThat(storage.injected(Operation.COMPLETE_MULTIPART)).isEqualTo(1);
  }
}
