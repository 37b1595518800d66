package io.tidemark.server.console;

import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.metadata.controller.FailoverControl;
import io.tidemark.metadata.image.BrokerEntry;
import io.tidemark.metadata.image.MetadataImage;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Moves and failovers in progress: partitions being reassigned (their assignment before and after,
 * the current leader) and brokers being failed over (fenced, their WAL recovered by another broker),
 * from the controller's metadata, and the moves this node saw finish lately ({@link RecentMoves}). At
 * most {@value #MAX_ROWS} moves in progress are listed.
 */
final class MovesPage {

  static final int MAX_ROWS = 1000;

  record Move(String topic, int partition, int leader, int leaderEpoch, List<Integer> from, List<Integer> to) {}

  record Failover(int nodeId, long epoch, String state, int recoveredBy, boolean done) {}

  record View(int movesTotal, List<Move> moves, List<RecentMoves.Finished> finished, List<Failover> failovers,
      boolean failoversKnown, long atMs) {}

  private final Sources s;

  MovesPage(Sources sources) {
    this.s = sources;
  }

  View render() {
    List<Move> moves = new ArrayList<>();
    int total = 0;
    List<TopicInfo> topics = new ArrayList<>(s.requireBroker().topics());
    topics.sort(Comparator.comparing(TopicInfo::name));
    for (TopicInfo t : topics) {
      for (TopicInfo.PartitionInfo p : t.partitions()) {
        if (p.reassigning()) {
          total++;
          if (moves.size() < MAX_ROWS) {
            moves.add(new Move(t.name(), p.partition(), p.leader(), p.leaderEpoch(), p.previousReplicas(), p.replicas()));
          }
        }
      }
    }
    MetadataImage image = s.image();
    List<Failover> failovers = new ArrayList<>();
    if (image != null) {
      for (BrokerEntry b : image.brokers().values()) {
        FailoverControl.Failover f = FailoverControl.failoverOf(image, b.nodeId());
        boolean current = f != null && f.recoveryEpoch() == b.nodeEpoch();
        if (current && !f.done() || b.fenced() && !current) {
          failovers.add(new Failover(b.nodeId(), b.nodeEpoch(), ClusterPage.brokerState(image, b),
              current ? f.recovererId() : -1, current && f.done()));
        }
      }
    }
    return new View(total, moves, s.recentMoves().finished(), failovers, image != null, s.nowMs());
  }
}
