package io.tidemark.metadata.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.metadata.client.ControllerClient;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.metadata.CommitStreamSetObjectRequest;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.ObjectMetadata;
import io.tidemark.stream.metadata.StreamMetadata;
import io.tidemark.stream.metadata.StreamRange;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three voters as child JVMs on loopback: the leader is killed with SIGKILL repeatedly while the
 * test JVM writes through a {@link ControllerClient} (stream creations and upload commits), and
 * the killed voter is restarted from its directory. Afterwards every acknowledged write is present
 * and the three processes report the same image. Kills: 3 by default, 12 with
 * {@code tidemark.test.scale=full}.
 */
class VoterKillTest {
  private static final int VOTERS = 3;

  private record Report(long offset, long digest, boolean leader) {}

  @TempDir Path dir;
  private final Map<Integer, Process> processes = new HashMap<>();
  private String voters;

  @Test
  void killingTheLeaderProcessRepeatedlyLosesNoAcknowledgedWrite() throws Exception {
    // Goal: SIGKILL of the leader JVM under write load never loses an acknowledged write, and the voters converge.
    int kills = "full".equals(System.getProperty("tidemark.test.scale")) ? 12 : 3;
    StringJoiner j = new StringJoiner(",");
    for (int id = 1; id <= VOTERS; id++) {
      j.add(id + "@127.0.0.1:" + TestQuorum.freePort());
    }
    voters = j.toString();
    long t0 = System.nanoTime();
    try {
      for (int id = 1; id <= VOTERS; id++) {
        start(id);
      }
      // child JVMs start slowly on a loaded machine: the client's retry budget starts once there is a leader
      await().atMost(Duration.ofSeconds(120)).until(this::leader, l -> l > 0);
      try (ControllerClient c = new ControllerClient(clientConfig())) {
        run(c, kills, t0);
      }
    } finally {
      processes.values().forEach(Process::destroyForcibly);
    }
  }

  private void run(ControllerClient c, int kills, long t0) throws Exception {
    NodeRef node = c.registerBroker(1, List.of(new Endpoint("PLAINTEXT", "127.0.0.1", 9092)), "").join();
    long stream = c.createStream(node, Map.of()).join();
    c.openStream(node, stream, 1).join();

    AtomicLong ackedEnd = new AtomicLong();
    AtomicLong acks = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    List<Long> createdStreams = new CopyOnWriteArrayList<>();
    Thread writer = new Thread(() -> {
      long end = 0;
      for (long op = 0; !Thread.currentThread().isInterrupted(); op++) {
        try {
          if (op % 10 == 0) {
            createdStreams.add(c.createStream(node, Map.of("op", String.valueOf(op))).join());
          } else {
            long id = c.prepareObjects(node, 1, 600_000).join();
            c.commitStreamSetObject(node, new CommitStreamSetObjectRequest(id, 10,
                List.of(new StreamRange(stream, 1, end, end + 10)), List.of(), List.of())).join();
            end += 10;
            ackedEnd.set(end);
          }
          acks.incrementAndGet();
        } catch (RuntimeException e) {
          failed.incrementAndGet();
          try { // unknown outcome: continue from what the quorum committed
            end = c.getStreams(List.of(stream)).join().get(0).endOffset();
          } catch (RuntimeException again) {
            // no leader yet; the next attempt reconciles
          }
        }
      }
    }, "voter-kill-writer");
    writer.start();
    List<Long> gapsMs = new ArrayList<>();
    try {
      for (int i = 0; i < kills; i++) {
        int leader = await().atMost(Duration.ofSeconds(90)).until(this::leader, l -> l > 0);
        long before = acks.get();
        await().atMost(Duration.ofSeconds(90)).until(() -> acks.get() >= before + 20);
        kill(leader);
        long killedAt = System.nanoTime();
        long atKill = acks.get();
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(10))
            .until(() -> acks.get() > atKill + 1); // +1: a write may have been acknowledged just before the kill
        gapsMs.add((System.nanoTime() - killedAt) / 1_000_000);
        await().atMost(Duration.ofSeconds(90)).until(() -> { int l = leader(); return l > 0 && l != leader; });
        start(leader);
      }
    } finally {
      writer.interrupt();
      writer.join(120_000);
    }
    assertThat(writer.isAlive()).isFalse();

    // every acknowledged write is present
    long end = c.getStreams(List.of(stream)).join().get(0).endOffset();
    assertThat(end).isGreaterThanOrEqualTo(ackedEnd.get());
    long expected = 0;
    for (ObjectMetadata o : c.getObjects(stream, 0, end, Integer.MAX_VALUE).join()) {
      assertThat(o.rangeOf(stream).startOffset()).isEqualTo(expected);
      expected = o.rangeOf(stream).endOffset();
    }
    assertThat(expected).isEqualTo(end);
    List<StreamMetadata> created = c.getStreams(createdStreams).join();
    assertThat(created).extracting(StreamMetadata::streamId).containsExactlyInAnyOrderElementsOf(createdStreams);

    // the three processes converge on one image at or after the last acknowledged write
    long lastWrite = c.lastWriteOffset();
    await().atMost(Duration.ofSeconds(120)).untilAsserted(() -> {
      List<Report> reports = new ArrayList<>();
      for (int id = 1; id <= VOTERS; id++) {
        reports.add(report(id));
      }
      assertThat(reports).doesNotContainNull();
      assertThat(reports.get(0).offset()).isGreaterThanOrEqualTo(lastWrite);
      assertThat(reports).extracting(Report::offset).containsOnly(reports.get(0).offset());
      assertThat(reports).extracting(Report::digest).containsOnly(reports.get(0).digest());
    });
    Collections.sort(gapsMs);
    System.out.printf("voter kill test: %d leader kills in %d s, %d acknowledged writes (%d created streams, end "
            + "offset %d), %d failed attempts, write gap after a kill p50 %d ms max %d ms%n", kills,
        (System.nanoTime() - t0) / 1_000_000_000, acks.get(), createdStreams.size(), end, failed.get(),
        gapsMs.get(gapsMs.size() / 2), gapsMs.get(gapsMs.size() - 1));
  }

  private ControllerConfig clientConfig() {
    return new ControllerConfig(new Settings(Map.of(
        ControllerConfig.VOTERS.name(), voters,
        ControllerConfig.REQUEST_TIMEOUT_MS.name(), "2000",
        ControllerConfig.CLIENT_MAX_ATTEMPTS.name(), "100",
        ControllerConfig.CLIENT_RETRY_BACKOFF_MS.name(), "200")));
  }

  private void start(int id) throws IOException {
    Path nodeDir = dir.resolve("node-" + id);
    Files.createDirectories(nodeDir);
    Files.deleteIfExists(nodeDir.resolve("image.txt")); // a report from before a kill says nothing now
    String java = ProcessHandle.current().info().command().orElse("java");
    // small, cheaply compiled JVMs: three of them share a loaded 2-core machine with the test
    ProcessBuilder b = new ProcessBuilder(java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
        VoterProcess.class.getName(), String.valueOf(id), voters, nodeDir.toString());
    b.redirectError(ProcessBuilder.Redirect.appendTo(nodeDir.resolve("child.err").toFile()));
    b.redirectOutput(ProcessBuilder.Redirect.appendTo(nodeDir.resolve("child.out").toFile()));
    processes.put(id, b.start());
  }

  private void kill(int id) throws InterruptedException {
    Process p = processes.remove(id);
    p.destroyForcibly(); // SIGKILL
    p.waitFor();
  }

  /** The voter a live process reports as leader, or 0. */
  private int leader() throws IOException {
    for (int id : processes.keySet()) {
      Report r = report(id);
      if (r != null && r.leader() && processes.get(id).isAlive()) {
        return id;
      }
    }
    return 0;
  }

  private Report report(int id) throws IOException {
    try {
      String[] f = Files.readString(dir.resolve("node-" + id).resolve("image.txt"), StandardCharsets.UTF_8)
          .trim().split(" ");
      return new Report(Long.parseLong(f[0]), Long.parseLong(f[1]), Boolean.parseBoolean(f[2]));
    } catch (NoSuchFileException e) {
      return null;
    }
  }
}
