package io.tidemark.metadata.controller;

import io.tidemark.metadata.controller.ControllerRequest.CompleteFailover;
import io.tidemark.metadata.controller.ControllerRequest.FailoverBroker;
import io.tidemark.metadata.image.BrokerEntry;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.FieldReader;
import io.tidemark.metadata.record.FieldWriter;
import io.tidemark.metadata.record.MetadataRecord;
import io.tidemark.metadata.record.MetadataRecord.BrokerFencing;
import io.tidemark.metadata.record.MetadataRecord.BrokerRegistration;
import io.tidemark.metadata.record.MetadataRecord.KeyValue;
import io.tidemark.metadata.record.MetadataRecord.Partition;
import io.tidemark.metadata.record.MetadataRecord.Stream;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.StreamMetadata.StreamState;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Failover of a dead broker: the recovery of its WAL by a live broker, on its behalf and under
 * fencing. Pure; stateless.
 *
 * <p>The leader's housekeeping fences a broker {@code D} at epoch {@code e} whose session expired,
 * then asks for {@link #failover}. When {@code D} still holds open streams or leads partitions and
 * another broker {@code R} is live, one entry computes:
 * <ol>
 *   <li>a <b>recovery incarnation</b> of {@code D}: a registration of {@code D} at epoch {@code e+1}
 *       without endpoints, marked shutting down (so it is never live: it leads nothing and no
 *       partition moves to it). {@code D@e} is no longer current: every later request of the dead
 *       process or of a paused zombie of it is refused ({@link ErrorCode#NODE_FENCED}), and the WALs
 *       fence an older epoch ({@code wal.type=object}: the fence marker; block: the header epoch).
 *       An epoch that failed over is never unfenced (it is not current any more, and a recovery
 *       incarnation is refused too): a node that returns registers again with a newer epoch and
 *       holds nothing until moves give it partitions. A fenced broker that held nothing is only
 *       marked ({@code recoverer = -1}) and is unfenced by its next heartbeat;</li>
 *   <li>the failover entry {@code broker.failover/D} = (recovery epoch, {@code R}, {@code R}'s epoch,
 *       not done): {@code R} sees it in its image, heartbeats for {@code D@e+1}, opens {@code D}'s WAL
 *       with epoch {@code e+1} and runs the storage engine's own crash recovery as {@code D@e+1}:
 *       what the WAL holds above the committed ends is uploaded and committed, then every stream
 *       still open on {@code D} is closed. Then it sends {@link #complete};</li>
 *   <li>every partition {@code D} led gets a live leader and a bumped leader epoch at once. The new
 *       leader opens the partition's streams with that epoch only after the recovery closed them
 *       ({@link ErrorCode#STREAM_NOT_CLOSED} until then), so no acknowledged record in {@code D}'s
 *       WAL is left behind.</li>
 * </ol>
 * If {@code R} dies during the recovery, the recovery incarnation misses heartbeats, is fenced in
 * turn and fails over to another broker at {@code e+2}, which recovers the same WAL (recovery is
 * idempotent: it uploads only what lies above the committed ends). If {@code D} itself returns
 * during the recovery, its registration takes a newer epoch, the recovery incarnation is fenced and
 * {@code D}'s own start-up recovery finishes the job. With no live broker, nothing happens until one
 * is live or {@code D} returns.
 */
public final class FailoverControl {
  /** Key-value namespace of failovers: key = node id, value = {@link Failover#encode}. */
  public static final String NAMESPACE = "broker.failover";
  /** Key-value namespace where each broker records where its WAL lives (key = node id, value = {@link #walLocation}). */
  public static final String WAL_NAMESPACE = "broker.wal";

  private FailoverControl() {}

  /**
   * One failover of a node: the recovery incarnation's epoch, the recovering broker at its epoch
   * ({@code -1} when there was nothing to recover) and whether the recovery is done.
   */
  public record Failover(long recoveryEpoch, int recovererId, long recovererEpoch, boolean done) {
    byte[] encode() {
      return new FieldWriter(21).writeLong(recoveryEpoch).writeInt(recovererId).writeLong(recovererEpoch)
          .writeBoolean(done).toByteArray();
    }

    static Failover decode(byte[] value) {
      FieldReader r = new FieldReader(ByteBuffer.wrap(value));
      return new Failover(r.readLong(), r.readInt(), r.readLong(), r.readBoolean());
    }
  }

  /** The failover recorded for {@code nodeId}, or null. */
  public static Failover failoverOf(MetadataImage image, int nodeId) {
    byte[] v = image.keyValue(NAMESPACE, Integer.toString(nodeId));
    return v == null ? null : Failover.decode(v);
  }

  /** Whether the housekeeping should ask for the failover of {@code b}: fenced, and not failed over at this epoch. */
  public static boolean needed(MetadataImage image, BrokerEntry b) {
    if (!b.fenced()) {
      return false;
    }
    Failover f = failoverOf(image, b.nodeId());
    return f == null || f.recoveryEpoch() != b.nodeEpoch() || !f.done();
  }

  static ControllerResult failover(MetadataImage image, FailoverBroker r, long nowMs) {
    BrokerEntry b = image.broker(r.nodeId());
    if (b == null || b.nodeEpoch() != r.nodeEpoch() || !b.fenced()) {
      return ControllerResult.of(List.of(), ReplyBodies.ofLong(-1)); // overtaken: it registered again, or done
    }
    String key = Integer.toString(r.nodeId());
    if (!holdsAnything(image, r.nodeId())) {
      Failover nothing = new Failover(r.nodeEpoch(), -1, -1, true);
      return ControllerResult.of(List.of(new KeyValue(NAMESPACE, key, nothing.encode())), ReplyBodies.ofLong(-1));
    }
    List<Integer> live = PartitionControl.liveBrokersExcept(image, r.nodeId());
    if (live.isEmpty()) {
      return ControllerResult.of(List.of(), ReplyBodies.ofLong(-1)); // the node's own restart recovers its WAL
    }
    int recoverer = live.get((int) Math.floorMod(r.nodeId() * 31L + r.nodeEpoch(), (long) live.size()));
    long recoveryEpoch = r.nodeEpoch() + 1;
    List<MetadataRecord> records = new ArrayList<>();
    records.add(new BrokerRegistration(r.nodeId(), recoveryEpoch, List.of(), nowMs, b.registration().rack()));
    records.add(new KeyValue(PartitionControl.SHUTDOWN_NAMESPACE, key,
        new FieldWriter(8).writeLong(recoveryEpoch).toByteArray()));
    records.add(new KeyValue(NAMESPACE, key,
        new Failover(recoveryEpoch, recoverer, image.broker(recoverer).nodeEpoch(), false).encode()));
    PartitionControl.moveLeadershipAway(image, r.nodeId(), records);
    return ControllerResult.of(records, ReplyBodies.ofLong(recoverer));
  }

  /**
   * The recovery of {@code r.recovery()} (the recovery incarnation) is done: the incarnation is
   * fenced for good and the failover marked done. Refused while a stream is still open on the node.
   */
  static ControllerResult complete(MetadataImage image, CompleteFailover r) {
    NodeRef node = r.recovery();
    Checks.requireActive(image, node);
    Failover f = failoverOf(image, node.nodeId());
    Checks.require(f != null && f.recoveryEpoch() == node.nodeEpoch() && !f.done(), ErrorCode.INVALID_REQUEST,
        "node " + node.nodeId() + " epoch " + node.nodeEpoch() + " is not a failover in progress");
    for (Stream s : image.streams().values()) {
      Checks.require(!(s.state() == StreamState.OPEN && s.ownerNodeId() == node.nodeId()), ErrorCode.INVALID_REQUEST,
          "stream " + s.streamId() + " is still open on node " + node.nodeId() + "; the recovery closes it first");
    }
    return ControllerResult.of(List.of(new BrokerFencing(node.nodeId(), node.nodeEpoch(), true),
        new KeyValue(NAMESPACE, Integer.toString(node.nodeId()),
            new Failover(f.recoveryEpoch(), f.recovererId(), f.recovererEpoch(), true).encode())),
        ReplyBodies.empty());
  }

  /** Whether {@code nodeId} leads a partition or holds a stream open (a scan: only for fenced brokers). */
  static boolean holdsAnything(MetadataImage image, int nodeId) {
    for (Partition p : image.partitions().values()) {
      if (p.leaderNodeId() == nodeId && !p.streamIds().isEmpty()) {
        return true;
      }
    }
    for (Stream s : image.streams().values()) {
      if (s.state() == StreamState.OPEN && s.ownerNodeId() == nodeId) {
        return true;
      }
    }
    return false;
  }

  /** The value a broker with a block WAL at {@code path} records under {@link #WAL_NAMESPACE}. */
  public static String walLocation(String type, String path) {
    return type.equals("block") ? "block:" + path : type;
  }
}
