package io.tidemark.server.console;

import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.image.MetadataListener;
import io.tidemark.metadata.record.MetadataRecord;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.LongSupplier;

/**
 * The partition moves this node saw finish, newest first: it follows every metadata image its
 * replica applies (so a move that starts and ends between two refreshes of the console is seen too)
 * and remembers, per partition, when a reassignment began (a {@code Partition} record with previous
 * replicas) and when it ended (the next one without). Soft state: a restart forgets it; a move whose
 * start this node did not see shows with an unknown start.
 *
 * <p>Bounded: at most {@value #MAX_FINISHED} finished moves and {@value #MAX_MOVING} moving partitions.
 * Thread-safe: {@link #onImage} runs on the replica's apply thread, {@link #finished} on admin threads;
 * one monitor, a few map operations per record.
 */
final class RecentMoves implements MetadataListener {

  static final int MAX_FINISHED = 50;
  static final int MAX_MOVING = 10_000;

  record Finished(String topic, int partition, List<Integer> from, List<Integer> to, int leader, int leaderEpoch,
      long startedAtMs, long finishedAtMs) {}

  private record Key(UUID topicId, int partition) {}

  private record Moving(List<Integer> from, long startedAtMs) {}

  private final LongSupplier clockMs;
  private final Map<Key, Moving> moving = new HashMap<>();
  private final ArrayDeque<Finished> finished = new ArrayDeque<>();

  RecentMoves(LongSupplier clockMs) {
    this.clockMs = clockMs;
  }

  @Override
  public synchronized void onImage(MetadataImage image, List<MetadataRecord> records) {
    for (MetadataRecord r : records) {
      if (r instanceof MetadataRecord.Partition p) {
        partition(image, p);
      }
    }
  }

  private void partition(MetadataImage image, MetadataRecord.Partition p) {
    Key key = new Key(p.topicId(), p.partition());
    long now = clockMs.getAsLong();
    if (p.reassigning()) {
      if (moving.size() < MAX_MOVING || moving.containsKey(key)) {
        moving.putIfAbsent(key, new Moving(p.previousReplicas(), now));
      }
      return;
    }
    Moving m = moving.remove(key);
    if (m == null) {
      return; // not a move's end (a leader election), or its start came before this node followed the log
    }
    MetadataRecord.Topic topic = image.topics().get(p.topicId());
    finished.addFirst(new Finished(topic == null ? p.topicId().toString() : topic.name(), p.partition(), m.from(),
        p.replicas(), p.leaderNodeId(), p.leaderEpoch(), m.startedAtMs(), now));
    while (finished.size() > MAX_FINISHED) {
      finished.removeLast();
    }
  }

  /** The finished moves, newest first. */
  synchronized List<Finished> finished() {
    return new ArrayList<>(finished);
  }
}
