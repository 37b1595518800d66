package io.tidemark.server.cluster;

import io.tidemark.broker.cluster.QuorumView;
import io.tidemark.metadata.client.ControllerClient;
import io.tidemark.metadata.raft.QuorumStatus;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The Raft leader's view of the controller quorum, asked over the controller client (a DescribeQuorum
 * read, which Ratis routes to the leader, as a Kafka broker forwards DescribeQuorum to the active
 * controller; so voters that do not lead and nodes without the controller role answer it too), in
 * the broker's terms (Kafka's DescribeQuorum): term →
 * leader epoch, commit index + 1 → high watermark, match index + 1 → log end offset (Kafka's
 * offsets are exclusive ends, Ratis' indices the last entry), listeners → observers. A follower counts as caught up, at its last contact, when its log holds every
 * committed entry. Asks on every call; thread-safe.
 */
final class RatisQuorumView implements QuorumView {

  /** Longest wait of the blocking {@link #status()}. */
  private static final long STATUS_TIMEOUT_SECONDS = 30;

  private final ControllerClient client;

  RatisQuorumView(ControllerClient client) {
    this.client = client;
  }

  @Override
  public Status status() {
    try {
      return statusAsync().get(STATUS_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      return null;
    }
  }

  @Override
  public CompletableFuture<Status> statusAsync() {
    return client.describeQuorum().thenApply(RatisQuorumView::status);
  }

  static Status status(QuorumStatus q) {
    return new Status(q.leaderId(), (int) Math.min(Integer.MAX_VALUE, q.term()), end(q.commitIndex()),
        replicas(q.voters(), q.commitIndex()), replicas(q.listeners(), q.commitIndex()));
  }

  private static List<Replica> replicas(List<QuorumStatus.Peer> peers, long commitIndex) {
    return peers.stream().map(p -> {
      String host = null;
      int port = -1;
      if (p.address() != null && p.address().lastIndexOf(':') > 0) {
        host = p.address().substring(0, p.address().lastIndexOf(':'));
        port = Integer.parseInt(p.address().substring(p.address().lastIndexOf(':') + 1));
      }
      long caughtUp = p.matchIndex() >= commitIndex && p.lastContactMs() >= 0 ? p.lastContactMs() : -1;
      return new Replica(p.nodeId(), end(p.matchIndex()), p.lastContactMs(), caughtUp, host, port);
    }).toList();
  }

  /** The exclusive end offset after Raft index {@code index}; -1 stays unknown. */
  private static long end(long index) {
    return index < 0 ? -1 : index + 1;
  }
}
