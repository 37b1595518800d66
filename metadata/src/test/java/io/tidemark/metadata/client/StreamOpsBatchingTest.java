package io.tidemark.metadata.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.metadata.raft.TestQuorum;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.stream.api.StreamFencedException;
import io.tidemark.stream.metadata.NodeFencedException;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.StreamMetadata;
import io.tidemark.stream.metadata.StreamMetadata.StreamState;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client sends stream opens and closes that wait behind an outstanding one as one batched
 * request, each with its own outcome (a restart's recovery closes hundreds and opens them again).
 */
class StreamOpsBatchingTest {
  private static final int STREAMS = 200;

  @Test
  void concurrentClosesAndOpensGoOutAsFewLogEntriesEachWithItsOwnOutcome(@TempDir Path dir) throws Exception {
    // Goal: a restart closing every stream its previous epoch held, then opening them again at a new epoch, costs a
    // few log entries instead of one per stream; a stale operation among them fails alone; a stale node fails all.
    try (TestQuorum q = new TestQuorum(dir, 1, Clock.systemUTC(), Map.of()).startAll()) {
      ControllerClient c = q.client();
      List<Endpoint> endpoints = List.of(new Endpoint("PLAINTEXT", "localhost", 9092));
      NodeRef first = c.registerBroker(7, endpoints, "").join();
      List<Long> streams = new ArrayList<>();
      for (int i = 0; i < STREAMS; i++) {
        streams.add(c.createStream(first, Map.of()).join());
      }
      List<CompletableFuture<StreamMetadata>> opens = new ArrayList<>();
      streams.forEach(s -> opens.add(c.openStream(first, s, 1)));
      CompletableFuture.allOf(opens.toArray(CompletableFuture[]::new)).join();

      NodeRef restarted = c.registerBroker(7, endpoints, "").join();
      long before = c.lastWriteOffset();
      List<CompletableFuture<Void>> closes = new ArrayList<>();
      streams.forEach(s -> closes.add(c.closeStream(restarted, s, 1)));
      CompletableFuture.allOf(closes.toArray(CompletableFuture[]::new)).join();
      long closeEntries = c.lastWriteOffset() - before;

      before = c.lastWriteOffset();
      List<CompletableFuture<StreamMetadata>> reopens = new ArrayList<>();
      for (int i = 0; i < STREAMS; i++) {
        reopens.add(c.openStream(restarted, streams.get(i), i == STREAMS / 2 ? 0 : 2)); // one stale epoch
      }
      CompletableFuture.allOf(reopens.toArray(CompletableFuture[]::new)).exceptionally(e -> null).join();
      long openEntries = c.lastWriteOffset() - before;

      assertThat(closeEntries).as("log entries for %d closes", STREAMS).isLessThanOrEqualTo(STREAMS / 4);
      assertThat(openEntries).as("log entries for %d opens", STREAMS).isLessThanOrEqualTo(STREAMS / 4);
      for (int i = 0; i < STREAMS; i++) {
        if (i == STREAMS / 2) {
          assertThat(reopens.get(i)).failsWithin(java.time.Duration.ZERO).withThrowableThat()
              .havingCause().isInstanceOf(StreamFencedException.class);
        } else {
          assertThat(reopens.get(i).join().epoch()).isEqualTo(2);
        }
      }
      List<StreamMetadata> now = c.getStreams(streams).join();
      assertThat(now.get(STREAMS / 2).state()).isEqualTo(StreamState.CLOSED);
      assertThat(now.stream().filter(m -> m.state() == StreamState.OPEN && m.epoch() == 2)).hasSize(STREAMS - 1);

      // the previous epoch of the node is fenced: none of its closes changes anything
      List<CompletableFuture<Void>> stale = new ArrayList<>();
      streams.forEach(s -> stale.add(c.closeStream(first, s, 2)));
      for (CompletableFuture<Void> f : stale) {
        assertThat(f).failsWithin(java.time.Duration.ofSeconds(30)).withThrowableThat()
            .havingCause().isInstanceOf(NodeFencedException.class);
      }
      assertThat(c.getStreams(streams).join().stream().filter(m -> m.state() == StreamState.OPEN)).hasSize(STREAMS - 1);
    }
  }
}
