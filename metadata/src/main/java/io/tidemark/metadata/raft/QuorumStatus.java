package io.tidemark.metadata.raft;

import java.util.List;

/**
 * The controller quorum as one voter sees it at one moment, for operators and Kafka's
 * DescribeQuorum: the leader and its term, the committed end of the Raft log, and per peer how far
 * its log is known to match the leader's. Only the leader knows its followers' progress; another
 * voter reports its own log and -1 (unknown) for the others. Immutable.
 *
 * @param leaderId node id of the leader, -1 while there is none
 * @param term the leader's term (Kafka's leader epoch)
 * @param commitIndex the last committed Raft index (Kafka's high watermark)
 * @param voters every voter, this one included
 * @param listeners non-voting image followers (Kafka's observers)
 */
public record QuorumStatus(int leaderId, long term, long commitIndex, List<Peer> voters, List<Peer> listeners) {

  /**
   * One peer.
   *
   * @param nodeId its node id
   * @param matchIndex last Raft index known to be in its log, -1 when unknown
   * @param lastContactMs wall-clock time of the leader's last answer from it, -1 when unknown
   * @param address its Raft address (host:port) from {@code controller.voters}, null for a listener
   */
  public record Peer(int nodeId, long matchIndex, long lastContactMs, String address) {}
}
