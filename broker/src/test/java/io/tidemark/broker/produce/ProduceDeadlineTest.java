package io.tidemark.broker.produce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.broker.partition.AppendResult;
import io.tidemark.broker.protocol.ErrorMapping;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Goal: a produce waiting on storage backpressure is answered REQUEST_TIMED_OUT once its request timeout passed. */
class ProduceDeadlineTest {

  private final ProduceHandler handler = new ProduceHandler(null, null);

  @AfterEach
  void stop() {
    handler.close();
  }

  @Test
  void anAppendStillWaitingAtTheRequestTimeoutIsAnsweredWithARetriableTimeout() {
    CompletableFuture<AppendResult> stuck = new CompletableFuture<>();
    CompletableFuture<AppendResult> answer = handler.bounded(stuck, 200, (short) -1);
    assertThatThrownBy(() -> answer.get(30, TimeUnit.SECONDS)).cause()
        .satisfies(e -> assertThat(ErrorMapping.toErrors(e)).isEqualTo(Errors.REQUEST_TIMED_OUT))
        .hasMessageContaining("backpressure");
    assertThat(stuck).as("the write itself goes on").isNotDone();
  }

  @Test
  void anAppendThatCompletesInTimeIsAnsweredWithItsResult() {
    CompletableFuture<AppendResult> append = new CompletableFuture<>();
    CompletableFuture<AppendResult> answer = handler.bounded(append, 60_000, (short) 1);
    AppendResult result = new AppendResult(7, -1, 0, false);
    append.complete(result);
    assertThat(answer.join()).isEqualTo(result);
    assertThat(handler.bounded(new CompletableFuture<>(), 0, (short) -1)).as("no timeout: unbounded").isNotDone();
  }
}
