package io.tidemark.metadata.controller;

import io.tidemark.metadata.image.BrokerEntry;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.FieldReader;
import io.tidemark.metadata.record.FieldWriter;
import io.tidemark.stream.metadata.NodeRef;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The leader's table of the load each node last reported ({@link ControllerRequest.ReportLoad}),
 * answered to {@link ControllerRequest.DescribeLoads}: how a console on any node shows every node's
 * bytes, requests and CPU without reaching the other nodes' admin ports (which listen on loopback by
 * default). Soft state like {@link BrokerSessions}: never replicated, forgotten on a leadership
 * change, refilled by the next reports (every few seconds).
 *
 * <p>Bounded: a report is kept only from a node registered at the epoch it names (at most one entry
 * per registered broker); a report older than {@code maxAgeMs} is not answered and is dropped.
 *
 * <p>Threading: reports and descriptions arrive on Ratis RPC threads; a concurrent map keeps them
 * apart. Time is passed in.
 */
public final class NodeLoads {

  /** One node's last report and how old it is. */
  public record Reported(int nodeId, long ageMs, NodeLoad load) {}

  private record Entry(NodeRef node, long atMs, NodeLoad load) {}

  private final long maxAgeMs;
  private final ConcurrentHashMap<Integer, Entry> last = new ConcurrentHashMap<>();

  public NodeLoads(long maxAgeMs) {
    this.maxAgeMs = maxAgeMs;
  }

  /** Keeps {@code load} of {@code node}; false (nothing kept) when that epoch is not the registered one. */
  public boolean report(MetadataImage image, NodeRef node, NodeLoad load, long nowMs) {
    BrokerEntry b = image.broker(node.nodeId());
    if (b == null || b.nodeEpoch() != node.nodeEpoch()) {
      return false;
    }
    last.put(node.nodeId(), new Entry(node, nowMs, load));
    return true;
  }

  /** The fresh reports of the nodes registered now, by node id. */
  public List<Reported> describe(MetadataImage image, long nowMs) {
    last.values().removeIf(e -> {
      BrokerEntry b = image.broker(e.node().nodeId());
      return b == null || b.nodeEpoch() != e.node().nodeEpoch() || nowMs - e.atMs() > maxAgeMs;
    });
    List<Reported> out = new ArrayList<>();
    last.values().forEach(e -> out.add(new Reported(e.node().nodeId(), Math.max(0, nowMs - e.atMs()), e.load())));
    out.sort(java.util.Comparator.comparingInt(Reported::nodeId));
    return out;
  }

  /** Forgets everything (on losing or gaining leadership). */
  public void clear() {
    last.clear();
  }

  /** The reply body of {@link ControllerRequest.DescribeLoads}. */
  public static byte[] encode(List<Reported> reports) {
    FieldWriter w = new FieldWriter().writeInt(reports.size());
    for (Reported r : reports) {
      w.writeInt(r.nodeId()).writeLong(r.ageMs());
      r.load().write(w);
    }
    return w.toByteArray();
  }

  public static List<Reported> decode(FieldReader r) {
    int n = r.readCount(60);
    List<Reported> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(new Reported(r.readInt(), r.readLong(), NodeLoad.read(r)));
    }
    return out;
  }
}
