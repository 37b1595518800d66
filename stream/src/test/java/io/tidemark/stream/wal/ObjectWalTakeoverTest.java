package io.tidemark.stream.wal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Seeded simulation of object WAL take-overs: PUTs land asynchronously after random delays, and
 * a writer with the next epoch recovers while the previous writer still has batches in flight
 * (it is never closed: a zombie). Invariants: every append that was ever acknowledged, by any
 * writer, is recovered byte-identical by every later writer (until trimmed); offsets are dense;
 * recovery returns nothing that was not appended at that offset.
 */
class ObjectWalTakeoverTest {

  private int fencedAppends;
  private int acknowledgedInFlight;

  static final int ROUNDS = "full".equals(System.getProperty("tidemark.test.scale")) ? 300 : 25;

  @Test
  void noAcknowledgedRecordIsLostAcrossTakeoversWithUploadsInFlight() {
    // Goal: the fencing protocol keeps every acknowledged record and lets no stale writer extend the log (seed printed).
    long seed = 20261202L;
    System.out.println("ObjectWalTakeoverTest seed " + seed + ", rounds " + ROUNDS);
    Random random = new Random(seed);
    ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);
    ScheduledExecutorService storageThreads = Executors.newScheduledThreadPool(3);
    GatedObjectStorage storage = new GatedObjectStorage();
    storage.delayPuts(storageThreads, () -> random.nextInt(3000));
    List<ObjectWriteAheadLog> zombies = new ArrayList<>();
    try {
      TreeMap<Long, byte[]> everAcknowledged = new TreeMap<>();
      java.util.Set<ByteBuffer> everAppended = java.util.concurrent.ConcurrentHashMap.newKeySet();
      long trimmed = 0;
      ObjectWriteAheadLog current = null;
      List<Pending> inFlight = new ArrayList<>();
      for (int epoch = 1; epoch <= ROUNDS; epoch++) {
        ObjectWriteAheadLog next = new ObjectWriteAheadLog(new ObjectWalOptions(1, epoch, 1 + random.nextInt(3),
            1 + random.nextInt(4000), 1 + random.nextInt(4), 1 << 20, 10_000), storage, scheduler, Clock.systemUTC());
        TreeMap<Long, byte[]> recovered = new TreeMap<>(WriteAheadLogContractTest.drain(next.recover()));
        next.start();
        if (current != null) {
          zombies.add(current);
        }
        // Let the previous writer's in-flight appends settle now that it is fenced (or not yet: its checks decide).
        int before = everAcknowledged.size();
        settle(inFlight, everAcknowledged);
        acknowledgedInFlight += everAcknowledged.size() - before;
        inFlight.clear();
        long floor = trimmed;
        everAcknowledged.headMap(floor).clear();
        for (Map.Entry<Long, byte[]> acked : everAcknowledged.entrySet()) {
          assertThat(recovered.get(acked.getKey())).as("acknowledged record %d recovered by epoch %d", acked.getKey(), epoch)
              .isEqualTo(acked.getValue());
        }
        long expected = recovered.isEmpty() ? 0 : recovered.firstKey();
        for (Map.Entry<Long, byte[]> r : recovered.entrySet()) {
          assertThat(r.getKey()).as("dense offsets").isEqualTo(expected++);
          assertThat(everAppended).as("record %d holds bytes that were appended", r.getKey())
              .contains(ByteBuffer.wrap(r.getValue()));
        }
        assertThat(recovered.isEmpty() || recovered.firstKey() >= trimmed).isTrue();
        // From now on the recovered records are the log: later writers must keep them even if never acknowledged.
        everAcknowledged.putAll(recovered);
        current = next;
        // Some acknowledged appends, maybe a trim, then appends left in flight for the take-over.
        int waited = random.nextInt(20);
        List<Pending> batch = appendSome(current, random, waited, everAppended);
        settle(batch, everAcknowledged);
        if (random.nextInt(4) == 0 && !everAcknowledged.isEmpty()) {
          long at = everAcknowledged.lastKey() - random.nextInt(5);
          if (at > trimmed) {
            current.trim(at).orTimeout(10, TimeUnit.SECONDS).join();
            trimmed = at;
          }
        }
        inFlight = appendSome(current, random, random.nextInt(15), everAppended);
      }
      System.out.println("in-flight appends acknowledged across a take-over: " + acknowledgedInFlight
          + ", fenced: " + fencedAppends);
      assertThat(fencedAppends).as("the simulation exercised fencing").isPositive();
      assertThat(acknowledgedInFlight).as("and acknowledgements racing a take-over").isPositive();
    } finally {
      zombies.forEach(ObjectWriteAheadLog::close);
      scheduler.shutdownNow();
      storageThreads.shutdownNow();
    }
  }

  private record Pending(CompletableFuture<Long> future, byte[] bytes) {}

  private static List<Pending> appendSome(ObjectWriteAheadLog wal, Random random, int count,
      java.util.Set<ByteBuffer> appended) {
    List<Pending> pending = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      byte[] bytes = WriteAheadLogContractTest.payload(random, random.nextInt(2000));
      appended.add(ByteBuffer.wrap(bytes));
      pending.add(new Pending(wal.append(ByteBuffer.wrap(bytes)), bytes));
    }
    return pending;
  }

  private void settle(List<Pending> pending, TreeMap<Long, byte[]> acknowledged) {
    for (Pending p : pending) {
      try {
        long offset = p.future.orTimeout(30, TimeUnit.SECONDS).join();
        acknowledged.put(offset, p.bytes);
      } catch (CompletionException e) {
        assertThat(e.getCause()).isInstanceOf(WalFencedException.class);
        fencedAppends++;
      }
    }
  }
}
