package io.tidemark.stream.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.stream.api.Stream;
import io.tidemark.stream.time.DeterministicScheduler;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Goal: the engine takes its time and timers from an injected scheduler: on a deterministic one,
 * the upload interval fires when virtual time passes it and not before, and health reads the
 * virtual clock (the first step toward running the engine in a seeded simulation).
 */
class EngineSchedulerTest {

  private final EngineFixture fixture = new EngineFixture();
  private StreamEngine engine;

  @AfterEach
  void tearDown() {
    if (engine != null) {
      engine.halt();
    }
    fixture.close();
  }

  @Test
  void theUploadIntervalRunsOnVirtualTime() {
    DeterministicScheduler time = new DeterministicScheduler(7, 5_000_000);
    StreamEngineConfig config = EngineFixture.smallConfig(); // upload interval one hour, threshold 16 KiB
    engine = StreamEngine.builder().node(fixture.metadata.registerNode(1)).wal(fixture.wal)
        .objectStorage(fixture.storage).streamManager(fixture.metadata.streams()).objectManager(fixture.metadata.objects())
        .objectKeys(fixture.keys).config(config).timing(time).build();
    engine.start().join();
    Stream stream = engine.openStream(engine.createStream(Map.of()).join(), 1).join();
    for (int i = 0; i < 3; i++) {
      stream.append(1, StreamEngineTest.text("r" + i)).join();
    }
    assertThat(engine.unuploadedBytes()).isPositive();
    assertThat(time.pending()).isEqualTo(1); // the upload interval, nothing else

    time.advance(config.uploadIntervalMs() - 1);
    assertThat(engine.unuploadedBytes()).as("not due yet on the virtual clock").isPositive();
    assertThat(fixture.metadata.streams().getStreams(List.of(stream.streamId())).join().getFirst().endOffset()).isZero();

    time.advance(1);
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      assertThat(engine.unuploadedBytes()).isZero();
      assertThat(fixture.metadata.streams().getStreams(List.of(stream.streamId())).join().getFirst().endOffset())
          .isEqualTo(3);
    });
    assertThat(time.pending()).isEqualTo(1); // the interval is rescheduled
    assertThat(engine.health().uploadFailingForMs()).isZero();
  }
}
