package io.tidemark.metadata.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tidemark.metadata.client.ControllerClient;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.stream.metadata.CommitStreamSetObjectRequest;
import io.tidemark.stream.metadata.CommitStreamSetObjectRequest.StreamObject;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.StreamRange;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SnapshotRestartTest {
  static final int OBJECTS = 100_000;
  static final int STREAMS = 100;
  static final int PER_COMMIT = 2_000;
  static final Map<String, String> NO_FENCING = Map.of(ControllerConfig.SESSION_TIMEOUT_MS.name(), "3600000",
      ControllerConfig.REQUEST_TIMEOUT_MS.name(), "20000");

  /** Fills a single voter with {@code objects} committed stream objects; returns the client's node. */
  static NodeRef fill(ControllerClient c, int objects) {
    NodeRef node = c.registerBroker(1, List.of(new Endpoint("PLAINTEXT", "127.0.0.1", 9092)), "").join();
    List<Long> streams = new ArrayList<>();
    for (int i = 0; i < STREAMS; i++) {
      long s = c.createStream(node, Map.of("i", String.valueOf(i))).join();
      c.openStream(node, s, 1).join();
      streams.add(s);
    }
    long[] ends = new long[STREAMS];
    for (int done = 0; done < objects; done += PER_COMMIT) {
      long first = c.prepareObjects(node, PER_COMMIT, 600_000).join();
      List<StreamObject> sos = new ArrayList<>(PER_COMMIT);
      for (int k = 0; k < PER_COMMIT; k++) {
        int si = k % STREAMS;
        sos.add(new StreamObject(first + k, 1024, new StreamRange(streams.get(si), 1, ends[si], ends[si] + 10)));
        ends[si] += 10;
      }
      c.commitStreamSetObject(node, new CommitStreamSetObjectRequest(-1, 0, List.of(), sos, List.of())).join();
    }
    return node;
  }

  @Test
  void restartLoadsASnapshotOfOneHundredThousandObjects(@TempDir Path dir) throws Exception {
    // Goal: a voter with 100k objects snapshots, restarts from the snapshot plus the log tail, and has the same image.
    MetadataImage before;
    Path sm;
    try (TestQuorum q = new TestQuorum(dir, 1, Clock.systemUTC(), NO_FENCING).startAll()) {
      ControllerClient c = q.client();
      long t0 = System.nanoTime();
      NodeRef node = fill(c, OBJECTS);
      long fillMs = (System.nanoTime() - t0) / 1_000_000;
      long t1 = System.nanoTime();
      q.node(1).takeSnapshot(60_000);
      long snapMs = (System.nanoTime() - t1) / 1_000_000;
      assertThat(snapshotFiles(dir.resolve("node-1"))).isNotEmpty();
      // a tail after the snapshot
      long s = c.createStream(node, Map.of("tail", "yes")).join();
      before = q.node(1).replica().awaitOffset(c.lastWriteOffset()).join();
      assertThat(before.objects().size()).isEqualTo(OBJECTS);
      assertThat(before.stream(s)).isNotNull();
      System.out.printf("snapshot test: filled %d objects in %d ms, snapshot in %d ms%n", OBJECTS, fillMs, snapMs);
      q.stop(1);
      long t2 = System.nanoTime();
      ControllerNode restarted = q.start(1);
      await().atMost(Duration.ofSeconds(60)).until(() -> restarted.image().offset() >= before.offset());
      long restartMs = (System.nanoTime() - t2) / 1_000_000;
      System.out.printf("snapshot test: restart to offset %d in %d ms%n", before.offset(), restartMs);
      assertThat(restarted.image().toRecords()).isEqualTo(before.toRecords());
    }
    List<Path> files = snapshotFiles(dir.resolve("node-1"));
    sm = files.get(files.size() - 1); // the newest (written at stop): the one a restart loads
    // a corrupt snapshot stops the node with a message naming the file instead of serving wrong metadata
    try (RandomAccessFile f = new RandomAccessFile(sm.toFile(), "rw")) {
      f.seek(f.length() / 2);
      int b = f.read();
      f.seek(f.length() / 2);
      f.write(b ^ 0x5a);
    }
    try (TestQuorum q = new TestQuorum(dir, 1, Clock.systemUTC(), NO_FENCING)) {
      assertThatThrownBy(() -> q.start(1)).hasMessageContaining(sm.getFileName().toString());
    }
    // the same with Ratis' MD5 file gone: our own checksum catches it
    Files.deleteIfExists(Path.of(sm + ".md5"));
    try (TestQuorum q = new TestQuorum(dir, 1, Clock.systemUTC(), NO_FENCING)) {
      assertThatThrownBy(() -> q.start(1)).hasMessageContaining("is corrupt");
    }
  }

  static List<Path> snapshotFiles(Path nodeDir) throws IOException {
    try (Stream<Path> files = Files.walk(nodeDir)) {
      return files.filter(p -> p.getFileName().toString().matches("snapshot\\.\\d+_\\d+"))
          .sorted(java.util.Comparator.comparingLong(p -> Long.parseLong(p.getFileName().toString().split("_")[1])))
          .toList();
    }
  }
}
