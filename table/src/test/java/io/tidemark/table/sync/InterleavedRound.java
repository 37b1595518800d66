package io.tidemark.table.sync;

import io.tidemark.table.source.PartitionRecordSource;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;

/**
 * One commit round of a table topic prepared by several syncs at once, as a worker's conversion
 * groups or the workers of several brokers prepare it, with their record batches converted in a
 * prescribed global order: each partition hands out one batch per read, and a group may read a
 * batch only when every batch before it in the order has been written (its reader moved on or its
 * group finished). The shares are then joined and committed in one snapshot, as the coordinator does.
 * A turn that is not reached within a minute fails the round instead of hanging the test.
 */
final class InterleavedRound {

  private final Map<String, Integer> turnOf = new HashMap<>();
  private final Map<Integer, List<Integer>> turnsOfPartition = new HashMap<>();
  private final Set<Integer> done = new HashSet<>();
  private final Map<Thread, Integer> held = new HashMap<>();
  private int next;

  /** Appends the batch of {@code partition} at {@code baseOffset} as the next turn of the order. */
  synchronized void then(int partition, long baseOffset) {
    int turn = turnOf.size();
    turnOf.put(partition + "/" + baseOffset, turn);
    turnsOfPartition.computeIfAbsent(partition, p -> new ArrayList<>()).add(turn);
  }

  /**
   * Prepares the round with one sync per group ({@code groups}: the partitions of each) on its own
   * thread, reading {@code sources} in the order given by {@link #then}; then commits the joined
   * round with {@code committer}.
   *
   * @param syncOfGroup builds a group's sync over the gated sources of its partitions
   */
  TableSync.RoundResult run(String commitId, List<List<Integer>> groups, Map<Integer, PartitionRecordSource> sources,
      Function<Map<Integer, PartitionRecordSource>, TableSync> syncOfGroup, TableSync committer) throws Exception {
    List<TableSync> syncs = new ArrayList<>();
    for (List<Integer> group : groups) {
      Map<Integer, PartitionRecordSource> gated = new TreeMap<>();
      group.forEach(p -> gated.put(p, new Gated(p, sources.get(p))));
      syncs.add(syncOfGroup.apply(gated));
    }
    ExecutorService threads = Executors.newFixedThreadPool(groups.size());
    try {
      List<Future<TableSync.PreparedRound>> running = new ArrayList<>();
      for (int g = 0; g < groups.size(); g++) {
        TableSync sync = syncs.get(g);
        List<Integer> partitions = groups.get(g);
        running.add(threads.submit(() -> {
          try {
            return sync.prepare();
          } finally {
            finished(partitions);
          }
        }));
      }
      List<TableSync.PreparedRound> parts = new ArrayList<>();
      for (Future<TableSync.PreparedRound> f : running) {
        try {
          parts.add(f.get(5, TimeUnit.MINUTES));
        } catch (ExecutionException e) {
          throw new AssertionError("a group failed to prepare the round", e.getCause());
        }
      }
      return committer.commit(TableSync.PreparedRound.union(commitId, parts));
    } finally {
      threads.shutdownNow();
    }
  }

  /** The calling thread is about to read the batch at {@code offset}: its previous batch is written; waits for the batch's turn. */
  private synchronized void enter(int partition, long offset) {
    leave();
    Integer turn = turnOf.get(partition + "/" + offset);
    if (turn == null) {
      throw new IllegalStateException("partition " + partition + " read offset " + offset + ", which starts no batch of the order");
    }
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    while (next != turn) {
      long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
      if (leftMs <= 0) {
        throw new IllegalStateException("turn " + turn + " (partition " + partition + " offset " + offset
            + ") not reached within a minute; waiting for turn " + next);
      }
      try {
        wait(leftMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
    held.put(Thread.currentThread(), turn);
  }

  private synchronized void leave() {
    Integer turn = held.remove(Thread.currentThread());
    if (turn != null) {
      complete(List.of(turn));
    }
  }

  /** A group finished (or failed): its batches are all done, read or not. */
  private synchronized void finished(List<Integer> partitions) {
    leave();
    partitions.forEach(p -> complete(turnsOfPartition.getOrDefault(p, List.of())));
  }

  private void complete(List<Integer> turns) {
    done.addAll(turns);
    while (done.contains(next)) {
      next++;
    }
    notifyAll();
  }

  /** A partition that hands out one whole batch per read, each in its turn. */
  private final class Gated implements PartitionRecordSource {
    private final int partition;
    private final PartitionRecordSource log;

    Gated(int partition, PartitionRecordSource log) {
      this.partition = partition;
      this.log = log;
    }

    @Override
    public CompletableFuture<Batches> read(long offset, int maxBytes) {
      enter(partition, offset);
      return log.read(offset, maxBytes).thenApply(b -> new Batches(List.of(first(b.batches(), offset)), b.highWatermark(),
          b.logStartOffset()));
    }

    private static ByteBuffer first(List<ByteBuffer> buffers, long offset) {
      for (ByteBuffer buf : buffers) {
        for (RecordBatch batch : MemoryRecords.readableRecords(buf.duplicate()).batches()) {
          if (batch.lastOffset() >= offset) {
            ByteBuffer one = ByteBuffer.allocate(batch.sizeInBytes());
            batch.writeTo(one);
            return one.flip();
          }
        }
      }
      throw new IllegalStateException("no batch holds offset " + offset);
    }

    @Override
    public long logStartOffset() {
      return log.logStartOffset();
    }

    @Override
    public long highWatermark() {
      return log.highWatermark();
    }
  }
}
