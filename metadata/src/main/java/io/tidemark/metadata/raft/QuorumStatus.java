package io.tidemark.metadata.raft;

import io.tidemark.metadata.record.FieldReader;
import io.tidemark.metadata.record.FieldWriter;
import java.util.ArrayList;
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

  /** This status as a controller reply body (the DescribeQuorum read). */
  public byte[] toBytes() {
    FieldWriter w = new FieldWriter().writeInt(leaderId).writeLong(term).writeLong(commitIndex);
    for (List<Peer> peers : List.of(voters, listeners)) {
      w.writeInt(peers.size());
      for (Peer p : peers) {
        w.writeInt(p.nodeId()).writeLong(p.matchIndex()).writeLong(p.lastContactMs()).writeString(p.address());
      }
    }
    return w.toByteArray();
  }

  /** Reads what {@link #toBytes} wrote. */
  public static QuorumStatus read(FieldReader r) {
    int leader = r.readInt();
    long term = r.readLong();
    long commit = r.readLong();
    List<List<Peer>> lists = new ArrayList<>();
    for (int l = 0; l < 2; l++) {
      int n = r.readCount(20);
      List<Peer> peers = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        peers.add(new Peer(r.readInt(), r.readLong(), r.readLong(), r.readString()));
      }
      lists.add(List.copyOf(peers));
    }
    return new QuorumStatus(leader, term, commit, lists.get(0), lists.get(1));
  }
}
