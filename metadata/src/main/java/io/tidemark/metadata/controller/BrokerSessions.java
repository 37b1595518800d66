package io.tidemark.metadata.controller;

import io.tidemark.metadata.image.BrokerEntry;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.stream.metadata.NodeRef;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One voter's table of broker heartbeats: soft state (never in the image or a snapshot), kept by
 * every voter, leader or not. Brokers heartbeat through the log
 * ({@link ControllerRequest.SessionHeartbeat}); each voter records a heartbeat at its own clock when
 * it applies the entry, which is never before the broker sent it. A broker acknowledges writes only
 * for its lease after sending a heartbeat that was committed, and a new leader has applied every
 * committed entry before it acts, so a leader that fences at {@code last heartbeat + session timeout}
 * by its own clock never fences a broker whose lease still holds, whichever voter answered it.
 *
 * <p>Across a leader change the table is kept: a dead broker is detected a session timeout after
 * its last heartbeat, not a session timeout after the election. A new leader gives every broker at
 * least {@code leaderGraceMs} from the moment it took over ({@link #leaderSince}) to find it, so
 * live brokers whose heartbeats had no leader to go to during the election are not all fenced.
 * A broker this voter never heard from (it restarted, or installed a snapshot) starts its session
 * when first seen here: a full timeout, never less.
 *
 * <p>Stalls: heartbeats reach this table only once committed and applied. When no heartbeat of any
 * broker was applied for {@code leaderGraceMs} (the log does not commit: a starved machine, slow
 * disks, an election; or this voter was paused), the table is stale rather than the brokers dead:
 * nobody expires, and once heartbeats are applied again every broker gets the grace from then. A
 * fence appended during a stall would also be applied after heartbeats queued before it. The
 * grace is shorter than the session timeout minus one interval, so a stall is noticed before any
 * live broker's session runs out.
 *
 * <p>Threading: heartbeats are recorded on the Raft apply thread (and by the leader's read path for
 * clients of older builds), {@link #expired} runs on the housekeeping thread; a concurrent map
 * keeps them apart. Time is passed in.
 */
public final class BrokerSessions {
  private final long sessionTimeoutMs;
  private final long leaderGraceMs;
  private final ConcurrentHashMap<NodeRef, Long> lastHeartbeatMs = new ConcurrentHashMap<>();
  /** Since when every broker gets the grace: this voter became the leader, or the log resumed after a stall. */
  private volatile long graceFromMs = Long.MIN_VALUE / 4;
  /** The latest heartbeat of any broker applied here (this voter's clock). */
  private volatile long lastAnyHeartbeatMs = Long.MIN_VALUE / 4;
  /**
   * Brokers this voter, as leader, found gone: silent and their listener refusing connections after
   * it accepted one at the same epoch ({@link #gone}). They count as expired at once.
   */
  private final java.util.Set<NodeRef> gone = ConcurrentHashMap.newKeySet();

  /**
   * @param sessionTimeoutMs a broker silent for this long is expired
   * @param leaderGraceMs the least time a new leader gives each broker to reach it, and the time without any
   *     heartbeat applied after which the table counts as stale; capped below the session timeout
   */
  public BrokerSessions(long sessionTimeoutMs, long leaderGraceMs) {
    this.sessionTimeoutMs = sessionTimeoutMs;
    this.leaderGraceMs = Math.min(leaderGraceMs, sessionTimeoutMs / 2);
  }

  public void heartbeat(NodeRef node, long nowMs) {
    if (nowMs - lastAnyHeartbeatMs > leaderGraceMs) {
      graceFromMs = Math.max(graceFromMs, nowMs); // the first heartbeat after a stall
    }
    lastAnyHeartbeatMs = Math.max(lastAnyHeartbeatMs, nowMs);
    lastHeartbeatMs.merge(node, nowMs, Math::max);
  }

  /** This voter became the leader at {@code nowMs}: the sessions it knows are kept (see the class comment). */
  public void leaderSince(long nowMs) {
    graceFromMs = Math.max(graceFromMs, nowMs);
  }

  /**
   * Whether {@code node}'s session has expired at {@code nowMs} by this voter's table (a node never
   * heard from here starts its session now, so it has not). The leader checks every fence it
   * appends with this: a fence computed elsewhere (a deposed leader's stale table) is refused.
   */
  public boolean expired(NodeRef node, long nowMs) {
    if (gone.contains(node)) {
      return true;
    }
    long last = lastHeartbeatMs.computeIfAbsent(node, k -> nowMs);
    boolean stalled = nowMs - lastAnyHeartbeatMs > leaderGraceMs;
    return !stalled && nowMs > Math.max(last + sessionTimeoutMs, graceFromMs + leaderGraceMs);
  }

  /**
   * How long {@code node} has been silent at {@code nowMs} by this voter's table (0 for a node never
   * heard from here: its session starts now).
   */
  public long silentMs(NodeRef node, long nowMs) {
    Long last = lastHeartbeatMs.get(node);
    return last == null ? 0 : nowMs - last;
  }

  /**
   * The leader found {@code node}'s process gone (silent, and its listener, which accepted a
   * connection at this epoch, now refuses them): its session counts as expired from now, without
   * waiting for the timeout. A process that refuses connections acknowledges nothing, so its lease
   * need not run out; a live but starved or paused process is never found gone (its listening socket
   * still accepts), so the session timeout alone decides for it.
   */
  public void gone(NodeRef node) {
    gone.add(node);
  }

  /** Whether the leader found {@code node} gone ({@link #gone}). */
  public boolean isGone(NodeRef node) {
    return gone.contains(node);
  }

  /** Unfenced brokers of {@code image} whose session has expired at {@code nowMs}. */
  public List<NodeRef> expired(MetadataImage image, long nowMs) {
    List<NodeRef> out = new ArrayList<>();
    for (BrokerEntry b : image.brokers().values()) {
      NodeRef ref = new NodeRef(b.nodeId(), b.nodeEpoch());
      if (!b.fenced() && expired(ref, nowMs)) {
        out.add(ref);
      }
    }
    lastHeartbeatMs.keySet().removeIf(ref -> {
      BrokerEntry b = image.broker(ref.nodeId());
      return b == null || b.nodeEpoch() != ref.nodeEpoch();
    });
    gone.removeIf(ref -> {
      BrokerEntry b = image.broker(ref.nodeId());
      return b == null || b.nodeEpoch() != ref.nodeEpoch() || b.fenced();
    });
    return out;
  }
}
