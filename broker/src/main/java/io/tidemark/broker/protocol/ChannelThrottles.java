package io.tidemark.broker.protocol;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Throttle times that quotas put on connections (Kafka's channel muting, KIP-219): a quota check
 * names the connection and how long it must not be read; the connection takes the time once it
 * wrote the throttled request's response and stops reading for that long. At most one pending
 * time per connection (the longest wins); taken entries are removed, and a closing connection
 * removes its own. Thread-safe.
 */
public final class ChannelThrottles {
  private final ConcurrentHashMap<String, Long> pending = new ConcurrentHashMap<>();

  public void mute(String connectionId, long ms) {
    if (ms > 0) {
      pending.merge(connectionId, ms, Math::max);
    }
  }

  /** The pending throttle of the connection, in ms (0 for none), removed. */
  public long take(String connectionId) {
    Long ms = pending.remove(connectionId);
    return ms == null ? 0 : ms;
  }
}
