package io.tidemark.metadata.controller;

import io.tidemark.metadata.image.BrokerEntry;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.stream.metadata.NodeRef;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The leader's table of broker heartbeats. Soft state, never replicated (as in Kafka): a new leader
 * starts every registered broker's session at its own "now", which gives brokers one full timeout
 * to reach it. Fencing and unfencing themselves go through the log as records.
 *
 * <p>Threading: heartbeats arrive on RPC threads, {@link #expired} runs on the housekeeping thread;
 * a concurrent map keeps them apart. Time is passed in.
 */
public final class BrokerSessions {
  private final long sessionTimeoutMs;
  private final ConcurrentHashMap<NodeRef, Long> lastHeartbeatMs = new ConcurrentHashMap<>();

  public BrokerSessions(long sessionTimeoutMs) {
    this.sessionTimeoutMs = sessionTimeoutMs;
  }

  public void heartbeat(NodeRef node, long nowMs) {
    lastHeartbeatMs.put(node, nowMs);
  }

  /** Forgets everything (on losing or gaining leadership). */
  public void clear() {
    lastHeartbeatMs.clear();
  }

  /** Unfenced brokers of {@code image} whose session has expired at {@code nowMs}. */
  public List<NodeRef> expired(MetadataImage image, long nowMs) {
    List<NodeRef> out = new ArrayList<>();
    for (BrokerEntry b : image.brokers().values()) {
      NodeRef ref = new NodeRef(b.nodeId(), b.nodeEpoch());
      long last = lastHeartbeatMs.computeIfAbsent(ref, k -> nowMs);
      if (!b.fenced() && nowMs - last > sessionTimeoutMs) {
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
