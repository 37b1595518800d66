package io.tidemark.metadata.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.metadata.client.ControllerClient;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.stream.metadata.NodeRef;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CorruptLogTest {

  @Test
  void aCorruptLogEntryStopsTheNodeAtStart(@TempDir Path dir) throws Exception {
    // Goal: a flipped byte inside the Raft log is detected at restart and the node does not start (no wrong metadata served).
    Map<String, String> cfg = Map.of(ControllerConfig.SESSION_TIMEOUT_MS.name(), "3600000",
        ControllerConfig.SNAPSHOT_INTERVAL_ENTRIES.name(), "1000000");
    try (TestQuorum q = new TestQuorum(dir, 1, Clock.systemUTC(), cfg).startAll()) {
      ControllerClient c = q.client();
      NodeRef node = c.registerBroker(1, List.of(new Endpoint("PLAINTEXT", "127.0.0.1", 9092)), "").join();
      for (int i = 0; i < 50; i++) {
        c.createStream(node, Map.of("tag", "value-" + i)).join();
      }
    }
    // no snapshot may cover the log: remove any taken at stop so the log is replayed
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path p : files.filter(p -> p.getFileName().toString().startsWith("snapshot.")).toList()) {
        Files.delete(p);
      }
    }
    Path segment;
    try (Stream<Path> files = Files.walk(dir)) {
      segment = files.filter(p -> p.getFileName().toString().startsWith("log_")).max((a, b) ->
          Long.compare(a.toFile().length(), b.toFile().length())).orElseThrow();
    }
    try (RandomAccessFile f = new RandomAccessFile(segment.toFile(), "rw")) {
      long at = f.length() / 2;
      f.seek(at);
      int b = f.read();
      f.seek(at);
      f.write(b ^ 0xff);
    }
    try (TestQuorum q = new TestQuorum(dir, 1, Clock.systemUTC(), cfg)) {
      assertThatThrownBy(() -> q.start(1)).hasMessageContaining("cannot start")
          .satisfies(e -> assertThat(e.getMessage()).containsIgnoringCase("checksum"));
    }
  }
}
