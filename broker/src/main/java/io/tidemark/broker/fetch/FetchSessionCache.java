package io.tidemark.broker.fetch;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.IntSupplier;
import org.apache.kafka.common.TopicIdPartition;

/**
 * Incremental fetch sessions (KIP-227): per session, the partitions the client fetches with
 * their positions, and what was last sent for each so that incremental responses carry only
 * changes. Bounded to {@code maxSessions}; when full, the least recently used session is evicted
 * (its client gets FETCH_SESSION_ID_NOT_FOUND and starts a new full session).
 *
 * <p>Thread-safe: the cache is guarded by its monitor, each session by its own.
 */
final class FetchSessionCache {

  /** One partition of a session: where the client reads, and what it was last told. */
  static final class Entry {
    long fetchOffset;
    int maxBytes;
    int currentLeaderEpoch = -1;
    long sentHighWatermark = -1;
    long sentLogStartOffset = -1;

    Entry(long fetchOffset, int maxBytes, int currentLeaderEpoch) {
      this.fetchOffset = fetchOffset;
      this.maxBytes = maxBytes;
      this.currentLeaderEpoch = currentLeaderEpoch;
    }
  }

  /** A client's session: partitions in the client's order, and the epoch expected next. */
  static final class Session {
    final int id;
    int nextEpoch = 1;
    final LinkedHashMap<TopicIdPartition, Entry> partitions = new LinkedHashMap<>();

    Session(int id) {
      this.id = id;
    }
  }

  private final int maxSessions;
  private final IntSupplier ids;
  private final LinkedHashMap<Integer, Session> sessions = new LinkedHashMap<>(16, 0.75f, true);

  FetchSessionCache(int maxSessions, IntSupplier ids) {
    this.maxSessions = maxSessions;
    this.ids = ids;
  }

  /** A new session, or null when sessions are disabled. */
  synchronized Session create() {
    if (maxSessions == 0) {
      return null;
    }
    while (sessions.size() >= maxSessions) {
      Integer eldest = sessions.keySet().iterator().next();
      sessions.remove(eldest);
    }
    int id;
    do {
      id = ids.getAsInt();
    } while (id == 0 || sessions.containsKey(id));
    Session s = new Session(id);
    sessions.put(id, s);
    return s;
  }

  synchronized Session get(int id) {
    return sessions.get(id);
  }

  synchronized void remove(int id) {
    sessions.remove(id);
  }

  synchronized int size() {
    return sessions.size();
  }

  static Map<TopicIdPartition, Entry> copy(Session s) {
    return new LinkedHashMap<>(s.partitions);
  }
}
