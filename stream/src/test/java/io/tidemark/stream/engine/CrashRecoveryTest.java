package io.tidemark.stream.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.stream.api.Stream;
import io.tidemark.stream.api.StreamBatch;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a child JVM running a node under append load (SIGKILL, at seeded random points: during
 * recovery or after a random number of acknowledgements), restarts it, and finally checks every
 * stream: offsets dense, every acknowledged batch read back byte-identical (count and CRC) at its
 * acknowledged offset, and the only unacknowledged batches present are a prefix of those that were
 * in flight at the kill. Uses the block WAL on a file, journaled metadata and local object storage. Cycles: 3 by default, 20 with {@code tidemark.test.scale=full}.
 */
public class CrashRecoveryTest {

  /** The child's metadata authority ({@link CrashTestNode.MetadataOpener} class): journaled memory here. */
  protected String metadataOpener() {
    return CrashTestNode.JournaledOpener.class.getName();
  }

  private static final int STREAMS = 6;

  private record Send(long seq, int count, long crc) {}

  /** What one child run printed. */
  private static final class Cycle {
    final Map<Long, Long> openOffsets = new HashMap<>();
    final Map<Long, TreeMap<Long, Send>> sends = new HashMap<>();
    final Map<Long, Map<Long, Long>> acks = new HashMap<>();
    final AtomicInteger ackCount = new AtomicInteger();
    volatile boolean ready;
    volatile boolean started;

    synchronized void accept(String line) {
      String[] f = line.trim().split(" ");
      try {
        switch (f[0]) {
          case "STARTING" -> started = true;
          case "READY" -> ready = true;
          case "OPEN" -> openOffsets.put(Long.parseLong(f[1]), Long.parseLong(f[2]));
          case "SEND" -> sends.computeIfAbsent(Long.parseLong(f[1]), k -> new TreeMap<>()).put(Long.parseLong(f[2]),
              new Send(Long.parseLong(f[2]), Integer.parseInt(f[3]), Long.parseLong(f[4])));
          case "ACK" -> {
            acks.computeIfAbsent(Long.parseLong(f[1]), k -> new HashMap<>()).put(Long.parseLong(f[2]),
                Long.parseLong(f[3]));
            ackCount.incrementAndGet();
          }
          default -> { }
        }
      } catch (RuntimeException torn) {
        // the last line may be cut by the kill
      }
    }
  }

  @TempDir Path dir;

  @Test
  void everyAcknowledgedAppendSurvivesKillNine() throws Exception {
    // Goal: after repeated kill -9 under load, every acknowledged record reads back byte-identical with dense offsets.
    boolean full = "full".equals(System.getProperty("tidemark.test.scale"));
    int cycles = full ? 20 : 3;
    long seed = Long.getLong("tidemark.test.seed", System.nanoTime());
    System.out.println("CrashRecoveryTest seed=" + seed + " cycles=" + cycles + " (rerun with -Dtidemark.test.seed="
        + seed + ")");
    Random random = new Random(seed);
    List<Cycle> runs = new ArrayList<>();
    int totalAcks = 0;
    for (int c = 0; c < cycles; c++) {
      // Some cycles kill during recovery (target 0); the first always runs under load, so every run has acks.
      int target = c > 0 && random.nextInt(8) == 0 ? 0 : 20 + random.nextInt(800);
      Cycle cycle = runChild(random.nextLong(), target, c);
      runs.add(cycle);
      totalAcks += cycle.ackCount.get();
    }
    assertThat(totalAcks).as("acknowledged appends over all cycles").isPositive();
    verify(runs, seed);
  }

  private Cycle runChild(long childSeed, int killAfterAcks, int index) throws Exception {
    String java = ProcessHandle.current().info().command().orElse("java");
    Path events = dir.resolve("events-" + index + ".log");
    ProcessBuilder builder = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
        CrashTestNode.class.getName(), dir.toString(), Long.toString(childSeed), Integer.toString(STREAMS),
        events.toString(), metadataOpener());
    builder.redirectError(dir.resolve("child-" + index + ".err").toFile());
    builder.redirectOutput(ProcessBuilder.Redirect.DISCARD);
    Process process = builder.start();
    try {
      if (killAfterAcks == 0) {
        await().atMost(Duration.ofSeconds(60)).until(() -> read(events).started || !process.isAlive());
      } else {
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(20))
            .until(() -> read(events).ackCount.get() >= killAfterAcks || !process.isAlive());
      }
      assertThat(process.isAlive()).as("child %d alive (see %s)", index, dir.resolve("child-" + index + ".err"))
          .isTrue();
    } finally {
      process.destroyForcibly();
      process.waitFor();
    }
    Cycle cycle = read(events);
    System.out.println("cycle " + index + ": killed after " + cycle.ackCount.get() + " acks (target "
        + killAfterAcks + ")");
    return cycle;
  }

  /** Parses the events a child wrote so far (the last line may be torn). */
  private static Cycle read(Path events) throws IOException {
    Cycle cycle = new Cycle();
    if (Files.exists(events)) {
      for (String line : Files.readAllLines(events, StandardCharsets.UTF_8)) {
        cycle.accept(line);
      }
    }
    return cycle;
  }

  private void verify(List<Cycle> runs, long seed) throws Exception {
    CrashTestNode.Node node = CrashTestNode.open(dir, metadataOpener());
    try {
      List<Stream> streams = CrashTestNode.openStreams(node, STREAMS);
      for (Stream stream : streams) {
        long id = stream.streamId();
        List<StreamBatch> batches = StreamEngineTest.readAll(stream, 0, stream.nextOffset());
        Map<Long, StreamBatch> byOffset = new HashMap<>();
        long cursor = 0;
        for (StreamBatch b : batches) {
          assertThat(b.baseOffset()).as("dense offsets of stream %d (seed %d)", id, seed).isEqualTo(cursor);
          byOffset.put(b.baseOffset(), b);
          cursor = b.nextOffset();
        }
        long end = stream.nextOffset();
        List<Cycle> withStream = runs.stream().filter(c -> c.openOffsets.containsKey(id)).toList();
        for (int i = 0; i < withStream.size(); i++) {
          Cycle cycle = withStream.get(i);
          long from = cycle.openOffsets.get(id);
          long to = i + 1 < withStream.size() ? withStream.get(i + 1).openOffsets.get(id) : end;
          try {
            checkCycle(id, cycle, from, to, byOffset, seed);
          } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\n" + diagnose(id, runs, byOffset, from, to), e);
          }
        }
      }
    } finally {
      node.halt();
    }
  }

  /** Where each batch of [from, to) of stream {@code id} was sent (cycle, seq), to explain a mismatch. */
  private static String diagnose(long id, List<Cycle> runs, Map<Long, StreamBatch> byOffset, long from, long to) {
    StringBuilder sb = new StringBuilder("batches of stream " + id + " in [" + from + ", " + to + "):");
    for (long o = from; o < to; ) {
      StreamBatch b = byOffset.get(o);
      if (b == null) {
        sb.append("\n  ").append(o).append(": missing");
        break;
      }
      CRC32 crc = new CRC32();
      crc.update(b.payload().duplicate());
      sb.append("\n  ").append(o).append(" x").append(b.recordCount()).append(" crc ").append(crc.getValue())
          .append(" sent in:");
      for (int c = 0; c < runs.size(); c++) {
        for (Send send : runs.get(c).sends.getOrDefault(id, new TreeMap<>()).values()) {
          if (send.crc() == crc.getValue()) {
            sb.append(" cycle ").append(c).append(" seq ").append(send.seq()).append(" acked at ")
                .append(runs.get(c).acks.getOrDefault(id, Map.of()).get(send.seq()));
          }
        }
      }
      o = b.nextOffset();
    }
    for (int c = 0; c < runs.size(); c++) {
      sb.append("\n  cycle ").append(c).append(" opened at ").append(runs.get(c).openOffsets.get(id)).append(", ")
          .append(runs.get(c).sends.getOrDefault(id, new TreeMap<>()).size()).append(" sends, ")
          .append(runs.get(c).acks.getOrDefault(id, Map.of()).size()).append(" acks");
    }
    return sb.toString();
  }

  /** Batches in [from, to) are the cycle's sends in order: all acknowledged ones, then possibly some in flight. */
  private static void checkCycle(long id, Cycle cycle, long from, long to, Map<Long, StreamBatch> byOffset, long seed) {
    Map<Long, Long> acks = cycle.acks.getOrDefault(id, Map.of());
    long cursor = from;
    for (Send send : cycle.sends.getOrDefault(id, new TreeMap<>()).values()) {
      Long ackedAt = acks.get(send.seq());
      if (cursor >= to) {
        assertThat(ackedAt).as("stream %d seq %d acknowledged at %s but missing after restart (seed %d)", id,
            send.seq(), ackedAt, seed).isNull();
        continue;
      }
      StreamBatch b = byOffset.get(cursor);
      assertThat(b).as("batch at %d of stream %d (seed %d)", cursor, id, seed).isNotNull();
      if (ackedAt != null) {
        assertThat(ackedAt).as("acknowledged offset of stream %d seq %d (seed %d)", id, send.seq(), seed)
            .isEqualTo(cursor);
      }
      CRC32 crc = new CRC32();
      crc.update(b.payload().duplicate());
      assertThat(b.recordCount()).as("record count at %d of stream %d (seed %d)", cursor, id, seed)
          .isEqualTo(send.count());
      assertThat(crc.getValue()).as("payload CRC at %d of stream %d (seed %d)", cursor, id, seed)
          .isEqualTo(send.crc());
      cursor += send.count();
    }
    assertThat(cursor).as("stream %d: data in [%d, %d) beyond what this cycle sent (seed %d)", id, from, to, seed)
        .isEqualTo(to);
  }
}
