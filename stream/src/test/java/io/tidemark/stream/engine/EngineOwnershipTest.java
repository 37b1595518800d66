package io.tidemark.stream.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.stream.api.Stream;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The engine has one owner: only its loop thread changes engine and stream state, through checked
 * transitions. A change from any other thread trips the owner assertion (the suite runs with
 * {@code -ea}); a step the lifecycle does not have throws with the current state, on the loop too.
 */
class EngineOwnershipTest {

  private final EngineFixture fixture = new EngineFixture();

  @AfterEach
  void tearDown() {
    fixture.close();
  }

  @Test
  void theSuiteRunsWithAssertionsEnabled() {
    // Goal: the owner checks below are assertions; a build that ran without -ea would not check them.
    assertThat(StreamEngine.class.desiredAssertionStatus()).isTrue();
  }

  @Test
  void engineStateChangedFromAnotherThreadFailsAndChangesNothing() {
    // Goal: a state change off the loop thread is refused by the owner assertion; the engine keeps serving.
    StreamEngine engine = fixture.start(EngineFixture.smallConfig());
    assertThat(engine.ownsState()).isFalse();
    assertThatThrownBy(() -> engine.transition(StreamEngine.State.SERVING, StreamEngine.State.CLOSING))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("SERVING").hasMessageContaining("CLOSING")
        .hasMessageContaining(Thread.currentThread().getName()).hasMessageContaining("not on its loop thread");
    assertThat(engine.health().state()).isEqualTo(StreamEngine.State.SERVING);
    Stream stream = open(engine);
    assertThat(stream.append(1, StreamEngineTest.text("still serving")).join()).isZero();
  }

  @Test
  void streamStateChangedFromAnotherThreadFailsAndChangesNothing() {
    // Goal: the same for a stream's state: only the loop moves it.
    StreamEngine engine = fixture.start(EngineFixture.smallConfig());
    EngineStream stream = (EngineStream) open(engine);
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Thread other = new Thread(() -> {
      try {
        stream.transition(EngineStream.State.OPEN, EngineStream.State.CLOSING);
      } catch (Throwable t) {
        thrown.set(t);
      }
    }, "not-the-loop");
    other.start();
    join(other);
    assertThat(thrown.get()).isInstanceOf(AssertionError.class).hasMessageContaining("not-the-loop")
        .hasMessageContaining("OPEN").hasMessageContaining("CLOSING");
    assertThat(stream.state()).isEqualTo(EngineStream.State.OPEN);
    assertThat(stream.append(1, StreamEngineTest.text("x")).join()).isZero();
  }

  @Test
  void aStepTheLifecycleLacksThrowsWithTheCurrentStateEvenOnTheLoop() {
    // Goal: on the owning thread, a transition from a state the engine is not in, or one the
    // lifecycle does not have, throws IllegalStateException naming both states and the current one.
    StreamEngine engine = fixture.start(EngineFixture.smallConfig());
    assertThatThrownBy(() -> engine.runOnLoop(
        () -> engine.transition(StreamEngine.State.CREATED, StreamEngine.State.RECOVERING)).join())
        .isInstanceOf(CompletionException.class).cause().isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("cannot move from CREATED to RECOVERING: it is SERVING");
    assertThatThrownBy(() -> engine.runOnLoop(
        () -> engine.transition(StreamEngine.State.SERVING, StreamEngine.State.CREATED)).join())
        .cause().isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("cannot move from SERVING to CREATED: it is SERVING");
    EngineStream stream = (EngineStream) open(engine);
    assertThatThrownBy(() -> engine.runOnLoop(
        () -> stream.transition(EngineStream.State.OPEN, EngineStream.State.CLOSED)).join())
        .cause().isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("cannot move from OPEN to CLOSED: it is OPEN");
    assertThat(engine.health().state()).isEqualTo(StreamEngine.State.SERVING);
    // the real lifecycle still runs its steps on the loop: a close moves OPEN -> CLOSING -> CLOSED
    stream.close().join();
    assertThat(stream.state()).isEqualTo(EngineStream.State.CLOSED);
    engine.close();
    assertThat(engine.health().state()).isEqualTo(StreamEngine.State.CLOSED);
  }

  @Test
  void aHaltedEngineIsOwnedByTheHaltingThread() {
    // Goal: once halt() has waited for the loop thread to end, the halting thread owns the state
    // (it fails what still waits); the loop is gone, so nothing runs there any more.
    StreamEngine engine = fixture.start(EngineFixture.smallConfig());
    engine.halt();
    assertThat(engine.ownsState()).isTrue();
    assertThat(engine.health().state()).isEqualTo(StreamEngine.State.CLOSED);
    assertThatThrownBy(() -> engine.runOnLoop(() -> { }).join()).cause()
        .isInstanceOf(io.tidemark.stream.api.StreamClosedException.class);
  }

  private static Stream open(StreamEngine engine) {
    long id = engine.createStream(Map.of()).join();
    return engine.openStream(id, 1).join();
  }

  private static void join(Thread thread) {
    try {
      thread.join(30_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
