package io.tidemark.metadata.controller;

import io.tidemark.metadata.controller.ControllerRequest.CompleteReassignment;
import io.tidemark.metadata.controller.ControllerRequest.ElectLeaders;
import io.tidemark.metadata.controller.ControllerRequest.PartitionRef;
import io.tidemark.metadata.controller.ControllerRequest.ReassignPartitions;
import io.tidemark.metadata.controller.ControllerRequest.Reassignment;
import io.tidemark.metadata.image.BrokerEntry;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.FieldReader;
import io.tidemark.metadata.record.FieldWriter;
import io.tidemark.metadata.record.MetadataRecord;
import io.tidemark.metadata.record.MetadataRecord.Partition;
import io.tidemark.metadata.record.MetadataRecord.Stream;
import io.tidemark.stream.metadata.StreamMetadata.StreamState;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Moving partitions between brokers: reassignments (AlterPartitionReassignments), leader elections
 * (ElectLeaders) and the completion of a reassignment. Pure; stateless.
 *
 * <p>A move never copies data: every replica reads the same streams. Moving leadership writes the
 * partition with the new leader and a bumped leader epoch. The old leader sees that in its image,
 * stops taking appends, uploads the partition's un-uploaded data and closes its streams; the new
 * leader opens the streams with the new epoch, which the controller allows only once no other node
 * holds them ({@link ErrorCode#STREAM_NOT_CLOSED} until then), so no acknowledged record is left
 * behind in the old leader's WAL. The reassignment stays visible (ListPartitionReassignments)
 * until the leader housekeeping sees the new leader holding the data stream at the new epoch and
 * completes it ({@link #completable}).
 *
 * <p>Errors per entry (each entry changes nothing when rejected; the others still apply): an
 * unknown partition, an assignment naming an unregistered broker or repeating one, a second
 * reassignment of a partition being reassigned, a cancel of a partition not being reassigned, an
 * election that is not needed or whose candidate is not live.
 */
public final class PartitionControl {
  private PartitionControl() {}

  /** What happened to one entry of a reassignment or election. */
  public enum Outcome {
    NONE,
    UNKNOWN_PARTITION,
    INVALID_ASSIGNMENT,
    REASSIGNMENT_IN_PROGRESS,
    NO_REASSIGNMENT_IN_PROGRESS,
    ELECTION_NOT_NEEDED,
    PREFERRED_LEADER_NOT_AVAILABLE,
    ELIGIBLE_LEADERS_NOT_AVAILABLE
  }

  /** The outcome of one entry, with a message for the operator (empty for NONE). */
  public record Result(Outcome outcome, String message) {
    static Result ok() {
      return new Result(Outcome.NONE, "");
    }
  }

  static ControllerResult reassign(MetadataImage image, ReassignPartitions r) {
    List<MetadataRecord> records = new ArrayList<>();
    List<Result> results = new ArrayList<>();
    Set<PartitionRef> seen = new HashSet<>();
    for (Reassignment m : r.reassignments()) {
      if (!seen.add(new PartitionRef(m.topicId(), m.partition()))) {
        results.add(new Result(Outcome.INVALID_ASSIGNMENT, "partition " + m.partition() + " is named twice"));
        continue;
      }
      try {
        Partition p = requirePartition(image, m.topicId(), m.partition());
        Partition next = m.targetReplicas() == null ? cancel(image, p) : reassign(image, p, m.targetReplicas());
        if (next != null) {
          records.add(next);
        }
        results.add(Result.ok());
      } catch (Refusal e) {
        results.add(e.result);
      }
    }
    return ControllerResult.of(records, encode(results));
  }

  private static Partition reassign(MetadataImage image, Partition p, List<Integer> target) {
    String name = name(image, p);
    refuseIf(target.isEmpty(), Outcome.INVALID_ASSIGNMENT, "the new assignment of " + name + " is empty");
    refuseIf(new LinkedHashSet<>(target).size() != target.size(), Outcome.INVALID_ASSIGNMENT,
        "the new assignment " + target + " of " + name + " names a broker twice");
    for (int node : target) {
      refuseIf(image.broker(node) == null, Outcome.INVALID_ASSIGNMENT, "the new assignment " + target + " of " + name
          + " includes broker " + node + ", but no broker with that id is registered");
    }
    refuseIf(p.reassigning(), Outcome.REASSIGNMENT_IN_PROGRESS, name + " is being reassigned from " + p.previousReplicas()
        + " to " + p.replicas() + "; wait for it to finish or cancel it first");
    refuseIf(p.streamIds().isEmpty(), Outcome.INVALID_ASSIGNMENT, name + " is still being created; retry shortly");
    if (target.equals(p.replicas())) {
      return null; // nothing to do, as in Kafka
    }
    if (target.contains(p.leaderNodeId()) && live(image, p.leaderNodeId())) {
      return p.with(p.leaderNodeId(), p.leaderEpoch(), target, List.of()); // leadership stays: nothing moves
    }
    int leader = firstLive(image, target);
    refuseIf(leader < 0, Outcome.INVALID_ASSIGNMENT, "no broker of the new assignment " + target + " of " + name
        + " is live; a partition moves only to a live broker");
    return p.with(leader, p.leaderEpoch() + 1, target, p.replicas());
  }

  /** Back to the assignment before the reassignment; leadership returns there unless it is already in it. */
  private static Partition cancel(MetadataImage image, Partition p) {
    String name = name(image, p);
    refuseIf(!p.reassigning(), Outcome.NO_REASSIGNMENT_IN_PROGRESS, "no reassignment of " + name + " is in progress");
    List<Integer> back = p.previousReplicas();
    if (back.contains(p.leaderNodeId())) {
      return p.with(p.leaderNodeId(), p.leaderEpoch(), back, List.of());
    }
    int leader = firstLive(image, back);
    return p.with(leader < 0 ? back.get(0) : leader, p.leaderEpoch() + 1, back, List.of());
  }

  static ControllerResult electLeaders(MetadataImage image, ElectLeaders r) {
    List<MetadataRecord> records = new ArrayList<>();
    List<Result> results = new ArrayList<>();
    Set<PartitionRef> seen = new HashSet<>();
    for (PartitionRef ref : r.partitions()) {
      if (!seen.add(ref)) {
        results.add(new Result(Outcome.ELECTION_NOT_NEEDED, "partition " + ref.partition() + " is named twice"));
        continue;
      }
      try {
        Partition p = requirePartition(image, ref.topicId(), ref.partition());
        records.add(r.unclean() ? electLive(image, p) : electPreferred(image, p));
        results.add(Result.ok());
      } catch (Refusal e) {
        results.add(e.result);
      }
    }
    return ControllerResult.of(records, encode(results));
  }

  private static Partition electPreferred(MetadataImage image, Partition p) {
    String name = name(image, p);
    refuseIf(p.replicas().isEmpty(), Outcome.ELIGIBLE_LEADERS_NOT_AVAILABLE, name + " has no assignment yet");
    int preferred = p.replicas().get(0);
    refuseIf(preferred == p.leaderNodeId(), Outcome.ELECTION_NOT_NEEDED, "the preferred leader " + preferred + " of "
        + name + " already leads it");
    refuseIf(!live(image, preferred), Outcome.PREFERRED_LEADER_NOT_AVAILABLE, "the preferred leader " + preferred
        + " of " + name + " is not live");
    return p.with(preferred, p.leaderEpoch() + 1, p.replicas(), p.previousReplicas());
  }

  private static Partition electLive(MetadataImage image, Partition p) {
    String name = name(image, p);
    refuseIf(live(image, p.leaderNodeId()), Outcome.ELECTION_NOT_NEEDED, "the leader " + p.leaderNodeId() + " of "
        + name + " is live");
    int leader = firstLive(image, p.replicas());
    refuseIf(leader < 0, Outcome.ELIGIBLE_LEADERS_NOT_AVAILABLE, "no replica of " + name + " " + p.replicas()
        + " is live");
    return p.with(leader, p.leaderEpoch() + 1, p.replicas(), p.previousReplicas());
  }

  static ControllerResult complete(MetadataImage image, CompleteReassignment r) {
    Partition p = image.partition(r.topicId(), r.partition());
    if (p == null || !p.reassigning() || p.leaderEpoch() != r.leaderEpoch()) {
      return ControllerResult.of(List.of(), ReplyBodies.empty()); // overtaken by another change
    }
    return ControllerResult.of(List.of(p.with(p.leaderNodeId(), p.leaderEpoch(), p.replicas(), List.of())),
        ReplyBodies.empty());
  }

  /** Key-value namespace of brokers shutting down: key = node id, value = the node epoch that is shutting down. */
  public static final String SHUTDOWN_NAMESPACE = "broker.shutdown";

  /**
   * Controlled shutdown of {@code node}: marks it as shutting down at its epoch and moves each
   * partition it leads to the first other replica that is live and not shutting down, else to
   * one of those brokers (spread by partition), with a bumped leader epoch; a partition whose
   * new leader is outside its assignment is assigned to that leader alone. Partitions stay when
   * no such broker exists. Replies with the number of partitions moved.
   */
  static ControllerResult drain(MetadataImage image, io.tidemark.stream.metadata.NodeRef node) {
    Checks.requireCurrent(image, node);
    List<MetadataRecord> records = new ArrayList<>();
    records.add(new MetadataRecord.KeyValue(SHUTDOWN_NAMESPACE, Integer.toString(node.nodeId()),
        new FieldWriter(8).writeLong(node.nodeEpoch()).toByteArray()));
    int moved = moveLeadershipAway(image, node.nodeId(), records);
    return ControllerResult.of(records, ReplyBodies.ofLong(moved));
  }

  /**
   * Moves each partition {@code nodeId} leads to the first other replica that is live and not
   * shutting down, else to one of those brokers (spread by partition), with a bumped leader epoch;
   * a partition whose new leader is outside its assignment is assigned to that leader alone.
   * Partitions stay when no such broker exists. Adds the records to {@code out}; returns how many moved.
   */
  static int moveLeadershipAway(MetadataImage image, int nodeId, List<MetadataRecord> out) {
    List<Integer> others = liveBrokersExcept(image, nodeId);
    if (others.isEmpty()) {
      return 0;
    }
    int moved = 0;
    for (Partition p : image.partitions().values()) {
      if (p.leaderNodeId() != nodeId || p.streamIds().isEmpty()) {
        continue;
      }
      int target = -1;
      for (int r : p.replicas()) {
        if (r != nodeId && live(image, r)) {
          target = r;
          break;
        }
      }
      if (target < 0) {
        target = others.get(Math.floorMod(p.partition() + p.topicId().hashCode(), others.size()));
      }
      List<Integer> replicas = p.replicas().contains(target) ? p.replicas() : List.of(target);
      out.add(p.with(target, p.leaderEpoch() + 1, replicas, p.previousReplicas()));
      moved++;
    }
    return moved;
  }

  /** The live brokers other than {@code nodeId}, in node id order. */
  static List<Integer> liveBrokersExcept(MetadataImage image, int nodeId) {
    List<Integer> others = new ArrayList<>();
    for (BrokerEntry b : image.brokers().values()) {
      if (b.nodeId() != nodeId && live(image, b.nodeId())) {
        others.add(b.nodeId());
      }
    }
    others.sort(null);
    return others;
  }

  /** Whether {@code nodeId} at its current epoch announced a controlled shutdown. */
  public static boolean shuttingDown(MetadataImage image, int nodeId) {
    BrokerEntry b = image.broker(nodeId);
    byte[] v = image.keyValue(SHUTDOWN_NAMESPACE, Integer.toString(nodeId));
    return b != null && v != null && v.length == 8 && java.nio.ByteBuffer.wrap(v).getLong() == b.nodeEpoch();
  }

  /**
   * Whether the reassignment of {@code p} is done: its leader holds the data stream open at the
   * partition's leader epoch (it fenced the old holder and serves).
   */
  public static boolean completable(MetadataImage image, Partition p) {
    if (!p.reassigning() || p.streamIds().isEmpty()) {
      return false;
    }
    Stream data = image.stream(p.streamIds().get(0));
    return data != null && data.state() == StreamState.OPEN && data.ownerNodeId() == p.leaderNodeId()
        && data.epoch() == p.leaderEpoch();
  }

  /** Registered, not fenced and not shutting down: a broker a partition may move to. */
  static boolean live(MetadataImage image, int nodeId) {
    BrokerEntry b = nodeId < 0 ? null : image.broker(nodeId);
    return b != null && !b.fenced() && !shuttingDown(image, nodeId);
  }

  private static int firstLive(MetadataImage image, List<Integer> nodes) {
    for (int n : nodes) {
      if (live(image, n)) {
        return n;
      }
    }
    return -1;
  }

  private static Partition requirePartition(MetadataImage image, java.util.UUID topicId, int partition) {
    Partition p = image.partition(topicId, partition);
    refuseIf(p == null || image.topics().get(topicId) == null, Outcome.UNKNOWN_PARTITION,
        "partition " + partition + " of topic id " + topicId + " does not exist");
    return p;
  }

  private static String name(MetadataImage image, Partition p) {
    MetadataRecord.Topic t = image.topics().get(p.topicId());
    return (t == null ? p.topicId().toString() : t.name()) + "-" + p.partition();
  }

  private static void refuseIf(boolean condition, Outcome outcome, String message) {
    if (condition) {
      throw new Refusal(new Result(outcome, message));
    }
  }

  /** One entry refused; the request goes on with the next. */
  private static final class Refusal extends RuntimeException {
    final Result result;

    Refusal(Result result) {
      super(result.message(), null, false, false);
      this.result = result;
    }
  }

  static byte[] encode(List<Result> results) {
    FieldWriter w = new FieldWriter(results.size() * 16 + 4);
    w.writeInt(results.size());
    for (Result r : results) {
      w.writeByte(r.outcome().ordinal()).writeString(r.message());
    }
    return w.toByteArray();
  }

  /** Decodes a reply body of {@link ReassignPartitions} or {@link ElectLeaders}. */
  public static List<Result> decode(FieldReader r) {
    int n = r.readCount(5);
    List<Result> out = new ArrayList<>(n);
    Outcome[] all = Outcome.values();
    for (int i = 0; i < n; i++) {
      int code = r.readByte();
      String message = r.readString();
      out.add(new Result(code >= 0 && code < all.length ? all[code] : Outcome.INVALID_ASSIGNMENT, message));
    }
    return out;
  }
}
