package io.tidemark.metadata.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.metadata.client.ControllerClient;
import io.tidemark.metadata.controller.ErrorCode;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.stream.metadata.NodeRef;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class QuorumOutageTest {

  @Test
  void aClientWhoseRequestsRanOutOfRetriesServesAgainOnceTheQuorumIsBack(@TempDir Path dir) throws Exception {
    // Goal: a broker that lived through a quorum outage longer than its retry policy keeps working
    // afterwards (Ratis closes a client whose ordered request gave up; ours replaces it).
    Map<String, String> quickGiveUp = Map.of(ControllerConfig.CLIENT_MAX_ATTEMPTS.name(), "3",
        ControllerConfig.CLIENT_RETRY_BACKOFF_MS.name(), "50", ControllerConfig.REQUEST_TIMEOUT_MS.name(), "500");
    try (TestQuorum q = new TestQuorum(dir, 1, Clock.systemUTC(), quickGiveUp).startAll()) {
      ControllerClient c = q.client();
      // the voter elects itself first; requests that give up meanwhile close a Ratis client too
      NodeRef node = untilServed(() -> c.registerBroker(7, List.of(new Endpoint("PLAINTEXT", "localhost", 9092)), ""));
      long first = untilServed(() -> c.createStream(node, Map.of("n", "1")));

      q.stop(1);
      for (int i = 0; i < 3; i++) { // writes and reads both give up while no voter answers
        assertThatThrownBy(() -> c.createStream(node, Map.of("n", "lost")).get(30, TimeUnit.SECONDS))
            .hasCauseInstanceOf(ErrorCode.ControllerUnavailableException.class);
        assertThatThrownBy(() -> c.heartbeat(node).get(30, TimeUnit.SECONDS))
            .hasCauseInstanceOf(ErrorCode.ControllerUnavailableException.class);
      }
      q.start(1);

      long second = untilServed(() -> c.createStream(node, Map.of("n", "2")));
      assertThat(second).isGreaterThan(first);
      assertThat(c.getStreams(List.of(first, second)).get(30, TimeUnit.SECONDS)).hasSize(2);
    }
  }

  /** The request's answer, sent again until the controller answers (30 s at most). */
  private static <T> T untilServed(Supplier<CompletableFuture<T>> request) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      try {
        return request.get().get(30, TimeUnit.SECONDS);
      } catch (ExecutionException | TimeoutException e) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError("the client never got an answer", e);
        }
        Thread.sleep(200);
      }
    }
  }
}
