package io.tidemark.metadata.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.metadata.raft.TestQuorum;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client sends partition updates that wait behind an outstanding one as one batched request,
 * each with its own outcome (a restart bumps the leader epoch of every partition it leads at once).
 */
class PartitionUpdatesBatchingTest {
  private static final int PARTITIONS = 200;

  @Test
  void concurrentPartitionUpdatesGoOutAsFewLogEntriesEachWithItsOwnOutcome(@TempDir Path dir) throws Exception {
    // Goal: 200 leader-epoch bumps cost a few log entries, not 200; a refused update (an epoch below the current one)
    // fails alone and changes nothing, the others apply.
    try (TestQuorum q = new TestQuorum(dir, 1, Clock.systemUTC(), Map.of()).startAll()) {
      ControllerClient c = q.client();
      c.registerBroker(7, List.of(new Endpoint("PLAINTEXT", "localhost", 9092)), "").join();
      UUID topic = UUID.randomUUID();
      c.createTopic(topic, "many", PARTITIONS).join();
      List<CompletableFuture<Void>> placed = new ArrayList<>();
      for (int p = 0; p < PARTITIONS; p++) {
        placed.add(c.updatePartition(topic, p, 7, 3, List.of()));
      }
      CompletableFuture.allOf(placed.toArray(CompletableFuture[]::new)).join();

      long before = c.lastWriteOffset();
      List<CompletableFuture<Void>> bumps = new ArrayList<>();
      for (int p = 0; p < PARTITIONS; p++) {
        bumps.add(c.updatePartition(topic, p, 7, p == PARTITIONS / 2 ? 2 : 4, List.of())); // one below the current epoch
      }
      CompletableFuture.allOf(bumps.toArray(CompletableFuture[]::new)).exceptionally(e -> null).join();
      long entries = c.lastWriteOffset() - before;

      assertThat(entries).as("log entries for %d partition updates", PARTITIONS).isLessThanOrEqualTo(PARTITIONS / 4);
      assertThat(bumps.get(PARTITIONS / 2)).failsWithin(Duration.ZERO).withThrowableThat()
          .withMessageContaining("is below the current 3");
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
        for (int p = 0; p < PARTITIONS; p++) {
          assertThat(q.leader().image().partition(topic, p).leaderEpoch()).as("partition %d", p)
              .isEqualTo(p == PARTITIONS / 2 ? 3 : 4);
        }
      });
    }
  }
}
