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
import java.util.concurrent.TimeUnit;
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
      NodeRef node = c.registerBroker(7, List.of(new Endpoint("PLAINTEXT", "localhost", 9092)), "").join();
      long first = c.createStream(node, Map.of("n", "1")).get(30, TimeUnit.SECONDS);

      q.stop(1);
      for (int i = 0; i < 3; i++) { // writes and reads both give up while no voter answers
        assertThatThrownBy(() -> c.createStream(node, Map.of("n", "lost")).get(30, TimeUnit.SECONDS))
            .hasCauseInstanceOf(ErrorCode.ControllerUnavailableException.class);
        assertThatThrownBy(() -> c.heartbeat(node).get(30, TimeUnit.SECONDS))
            .hasCauseInstanceOf(ErrorCode.ControllerUnavailableException.class);
      }
      q.start(1);

      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      Long second = null;
      while (second == null) {
        try {
          second = c.createStream(node, Map.of("n", "2")).get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
          if (System.nanoTime() > deadline) {
            throw new AssertionError("the client never served again after the quorum came back", e);
          }
          Thread.sleep(200);
        }
      }
      assertThat(second).isGreaterThan(first);
      assertThat(c.getStreams(List.of(first, second)).get(30, TimeUnit.SECONDS)).hasSize(2);
    }
  }
}
