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
 * <p>Threading: heartbeats are recorded on the Raft apply thread (and by the leader's read path for
 * clients of older builds), {@link #expired} runs on the housekeeping thread; a concurrent map
 * keeps them apart. Time is passed in.
 */
public final class BrokerSessions {
  private final long sessionTimeoutMs;
  private final long leaderGraceMs;
  private final ConcurrentHashMap<NodeRef, Long> lastHeartbeatMs = new ConcurrentHashMap<>();
  /** When this voter last became the leader (its clock); far in the past until then. */
  private volatile long leaderSinceMs = Long.MIN_VALUE / 4;

  /**
   * @param sessionTimeoutMs a broker silent for this long is expired
   * @param leaderGraceMs the least time a new leader gives each broker to reach it, at most the session timeout
   */
  public BrokerSessions(long sessionTimeoutMs, long leaderGraceMs) {
    this.sessionTimeoutMs = sessionTimeoutMs;
    this.leaderGraceMs = Math.min(leaderGraceMs, sessionTimeoutMs);
  }

  public void heartbeat(NodeRef node, long nowMs) {
    lastHeartbeatMs.merge(node, nowMs, Math::max);
  }

  /** This voter became the leader at {@code nowMs}: the sessions it knows are kept (see the class comment). */
  public void leaderSince(long nowMs) {
    leaderSinceMs = nowMs;
  }

  /**
   * Whether {@code node}'s session has expired at {@code nowMs} by this voter's table (a node never
   * heard from here starts its session now, so it has not). The leader checks every fence it
   * appends with this: a fence computed elsewhere (a deposed leader's stale table) is refused.
   */
  public boolean expired(NodeRef node, long nowMs) {
    long last = lastHeartbeatMs.computeIfAbsent(node, k -> nowMs);
    return nowMs > Math.max(last + sessionTimeoutMs, leaderSinceMs + leaderGraceMs);
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
    return out;
  }
}
