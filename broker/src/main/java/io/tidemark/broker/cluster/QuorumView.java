package io.tidemark.broker.cluster;

import java.util.List;

/**
 * The metadata quorum as its Raft leader sees it, for DescribeQuorum: the seam through
 * which the server hands the broker its Raft (Apache Ratis) state without the broker depending on
 * the controller module. Implementations are thread-safe and cheap to call.
 */
@FunctionalInterface
public interface QuorumView {

  /**
   * One replica of the metadata log.
   *
   * @param logEndOffset last log index known to be in its log, -1 when unknown
   * @param lastFetchTimestampMs last time the leader heard from it, -1 when unknown
   * @param lastCaughtUpTimestampMs last time it was known to hold everything committed, -1 when unknown
   * @param host its controller address (voters), null when not known
   */
  record Replica(int id, long logEndOffset, long lastFetchTimestampMs, long lastCaughtUpTimestampMs, String host, int port) {}

  /** The quorum now: leader (-1: none), its epoch (Raft term), the committed end of the log. */
  record Status(int leaderId, int leaderEpoch, long highWatermark, List<Replica> voters, List<Replica> observers) {}

  /** The current status; null when the local voter is not running. */
  Status status();

  /**
   * The current status without blocking the caller (a view that asks the quorum's leader over the
   * network completes later); completes with null or exceptionally when the quorum cannot be described.
   */
  default java.util.concurrent.CompletableFuture<Status> statusAsync() {
    return java.util.concurrent.CompletableFuture.completedFuture(status());
  }
}
