package io.tidemark.metadata.raft;

import io.tidemark.metadata.controller.BrokerSessions;
import io.tidemark.metadata.image.BrokerEntry;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.MetadataRecord;
import io.tidemark.stream.metadata.NodeRef;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader's fast detection of brokers whose process is gone ({@code controller.session.probe}).
 * A crashed or killed process's listening socket is closed by the kernel at once, so a connection
 * to it is refused; a live process's is not, even when the process is starved or paused (the
 * kernel completes the handshake). So when a broker has been silent for {@code lateMs} (two
 * heartbeat intervals: one heartbeat missed, not yet the session timeout), the leader connects to
 * its first listener: refused means gone, and its session ends now ({@link BrokerSessions#gone});
 * accepted, or any other outcome (a timeout, no route), decides nothing and the session timeout
 * applies as before. A refusal counts only for a broker whose listener accepted a probe earlier at
 * the same epoch: a broker that registered but has not bound its listener yet (starting), or whose
 * advertised address this node cannot reach, is never fenced by a probe.
 *
 * <p>Every voter learns which brokers listen ({@link #learn}), so a newly elected leader (the old one
 * may be the broker that died) tells a gone broker at once too.
 *
 * <p>Threading: {@link #check} and {@link #learn} run on the housekeeping thread; each probe runs on a virtual thread
 * (one connect, at most {@link #CONNECT_TIMEOUT_MS}), at most one per broker epoch at a time.
 */
final class BrokerProbes implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BrokerProbes.class);
  static final int CONNECT_TIMEOUT_MS = 1000;
  /** Least time between two probes of a broker that has not been seen listening yet. */
  static final long UNSEEN_PROBE_INTERVAL_MS = 1000;

  private final BrokerSessions sessions;
  private final long lateMs;
  private final Consumer<NodeRef> onGone;
  private final java.util.function.LongSupplier clock;
  private final ExecutorService probes = Executors.newThreadPerTaskExecutor(
      Thread.ofVirtual().name("controller-broker-probe-", 0).factory());
  /** Broker epochs whose listener accepted a probe. */
  private final Set<NodeRef> seenListening = ConcurrentHashMap.newKeySet();
  /** Broker epochs with a probe in flight, or last probed (when not seen listening yet), since when. */
  private final Map<NodeRef, Long> probing = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /**
   * @param lateMs silence after which a broker seen listening is probed
   * @param onGone told (on a probe's thread) when a broker was found gone, after {@link BrokerSessions#gone}
   */
  BrokerProbes(BrokerSessions sessions, long lateMs, java.util.function.LongSupplier clock, Consumer<NodeRef> onGone) {
    this.sessions = sessions;
    this.clock = clock;
    this.lateMs = lateMs;
    this.onGone = onGone;
  }

  /** One look at the unfenced brokers of {@code image} (housekeeping thread, leader only). */
  void check(MetadataImage image, long nowMs) {
    look(image, nowMs, true);
  }

  /**
   * A follower's look: it only learns which brokers listen, so that when it becomes the leader (the
   * old leader may be the broker that died) it can tell a gone one at once.
   */
  void learn(MetadataImage image, long nowMs) {
    look(image, nowMs, false);
  }

  private void look(MetadataImage image, long nowMs, boolean leader) {
    for (BrokerEntry b : image.brokers().values()) {
      if (b.fenced() || b.registration().endpoints().isEmpty()) {
        continue;
      }
      NodeRef ref = new NodeRef(b.nodeId(), b.nodeEpoch());
      boolean seen = seenListening.contains(ref);
      if (seen && (!leader || sessions.silentMs(ref, nowMs) < lateMs)) {
        continue;
      }
      Long last = probing.get(ref);
      if (last != null && (seen || nowMs - last < UNSEEN_PROBE_INTERVAL_MS)) {
        continue; // a probe in flight, or an unseen broker probed a moment ago
      }
      probing.put(ref, nowMs);
      MetadataRecord.Endpoint e = b.registration().endpoints().get(0);
      probes.execute(() -> probe(ref, e, seen && leader));
    }
    seenListening.removeIf(ref -> current(image, ref) == null);
    probing.keySet().removeIf(ref -> current(image, ref) == null);
  }

  private static BrokerEntry current(MetadataImage image, NodeRef ref) {
    BrokerEntry b = image.broker(ref.nodeId());
    return b != null && b.nodeEpoch() == ref.nodeEpoch() && !b.fenced() ? b : null;
  }

  private void probe(NodeRef ref, MetadataRecord.Endpoint e, boolean seen) {
    boolean refused = false;
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(e.host(), e.port()), CONNECT_TIMEOUT_MS);
      seenListening.add(ref);
    } catch (ConnectException refusedOrUnreachable) {
      String m = refusedOrUnreachable.getMessage();
      refused = m != null && m.startsWith("Connection refused");
    } catch (IOException | RuntimeException other) {
      // a timeout, no route, an unresolvable name: nothing is known; the session timeout decides
    } finally {
      if (seen || seenListening.contains(ref)) {
        probing.remove(ref); // a broker seen listening may be probed again at once; an unseen one waits
      }
    }
    if (refused && seen && !closed) {
      LOG.info("node {} epoch {} is gone: no heartbeat for {} ms and its listener {}:{} refuses connections; "
          + "fencing it now instead of after the session timeout", ref.nodeId(), ref.nodeEpoch(),
          sessions.silentMs(ref, clock.getAsLong()), e.host(), e.port());
      sessions.gone(ref);
      onGone.accept(ref);
    }
  }

  @Override
  public void close() {
    closed = true;
    probes.shutdownNow();
  }
}
