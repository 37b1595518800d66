package io.tidemark.server.console;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Statistic;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.metadata.controller.FailoverControl;
import io.tidemark.metadata.image.BrokerEntry;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.raft.QuorumStatus;
import io.tidemark.metadata.record.MetadataRecord;
import io.tidemark.server.metrics.NodeMeters;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The cluster page: every node the metadata knows (registered brokers with their state, controller
 * voters), the controller quorum as this node's voter sees it, and this node's health and load.
 * Load of other nodes is not known here (each node measures its own; open its console).
 */
final class ClusterPage {

  /** Meters summed for this node's load; a missing meter shows as unknown. */
  static final String BYTES_IN = "tidemark.kafka.produced.bytes";
  static final String BYTES_OUT = "tidemark.kafka.fetched.bytes";
  static final String REQUESTS = "tidemark.kafka.requests";
  static final String WAL_BYTES = "tidemark.wal.appended.bytes";

  record Node(int id, List<String> roles, String host, int port, String rack, long epoch, String state, boolean self,
      int leaderPartitions) {}

  record Voter(int id, boolean leader, long logEndIndex, long behind, long lastContactAgoMs) {}

  record Quorum(int leaderId, long term, long commitIndex, List<Voter> voters, List<Voter> observers) {}

  record Load(Double processCpu, Double systemCpu, Double bytesInPerSec, Double bytesOutPerSec, Double requestsPerSec,
      Double walBytesPerSec) {}

  record ThisNode(int id, List<String> roles, boolean healthy, boolean ready, Map<String, Boolean> health,
      Map<String, Boolean> readiness, long uptimeMs, Load load) {}

  record View(String clusterId, long metadataOffset, List<Node> nodes, Quorum quorum, String quorumNote, ThisNode thisNode,
      long atMs) {}

  private final Sources s;

  ClusterPage(Sources sources) {
    this.s = sources;
  }

  View render() {
    MetadataImage image = s.image();
    Map<Integer, Integer> leaders = leaderCounts();
    Set<Integer> voters = s.controller() == null ? Set.of() : s.controller().config().voters().keySet();
    List<Node> nodes = new ArrayList<>();
    Set<Integer> seen = new TreeSet<>();
    if (image != null) {
      for (BrokerEntry b : image.brokers().values()) {
        seen.add(b.nodeId());
        MetadataRecord.Endpoint kafka = b.registration().endpoints().isEmpty() ? null : b.registration().endpoints().get(0);
        List<String> roles = new ArrayList<>();
        if (voters.contains(b.nodeId())) {
          roles.add("controller");
        }
        roles.add("broker");
        int port = kafka == null ? -1 : kafka.port();
        if (port == 0 && b.nodeId() == s.config().nodeId() && s.broker() != null) {
          port = s.broker().port(); // registered with port 0 (an ephemeral listener): show the bound one
        }
        nodes.add(new Node(b.nodeId(), roles, kafka == null ? null : kafka.host(), port,
            b.registration().rack(), b.nodeEpoch(), brokerState(image, b), b.nodeId() == s.config().nodeId(),
            leaders.getOrDefault(b.nodeId(), 0)));
      }
    }
    for (int voter : new TreeSet<>(voters)) {
      if (!seen.contains(voter)) {
        seen.add(voter);
        nodes.add(new Node(voter, List.of("controller"), null, -1, "", -1, "voter", voter == s.config().nodeId(), 0));
      }
    }
    if (!seen.contains(s.config().nodeId())) {
      nodes.add(new Node(s.config().nodeId(), roles(), null, s.broker() == null ? -1 : s.broker().port(), "", -1,
          "online", true, leaders.getOrDefault(s.config().nodeId(), 0)));
    }
    nodes.sort(java.util.Comparator.comparingInt(Node::id));
    Quorum quorum = null;
    String quorumNote = null;
    if (s.controller() == null) {
      quorumNote = "this node commits to no controller quorum (it runs alone)";
    } else {
      QuorumStatus q = s.controller().localNode().flatMap(n -> n.quorumStatus()).orElse(null);
      if (q == null) {
        quorumNote = "this node is not a voter of the controller quorum; open the console of a voter ("
            + voters + ") for the quorum's state";
      } else {
        quorum = quorum(q);
      }
    }
    return new View(s.broker() == null ? null : s.broker().clusterId(), image == null ? -1 : image.offset(), nodes, quorum,
        quorumNote, thisNode(), s.nowMs());
  }

  private List<String> roles() {
    return s.config().roles().stream().sorted().map(r -> r.name().toLowerCase(Locale.ROOT)).toList();
  }

  /** online, fenced, failing over (its WAL being recovered by another), failed over, or shutting down. */
  static String brokerState(MetadataImage image, BrokerEntry b) {
    FailoverControl.Failover f = FailoverControl.failoverOf(image, b.nodeId());
    if (f != null && f.recoveryEpoch() == b.nodeEpoch()) {
      return f.done() ? "failed over" : "failing over (recovered by node " + f.recovererId() + ")";
    }
    if (b.fenced()) {
      return "fenced";
    }
    return b.registration().endpoints().isEmpty() ? "shutting down" : "online";
  }

  private Map<Integer, Integer> leaderCounts() {
    Map<Integer, Integer> out = new HashMap<>();
    if (s.broker() == null) {
      return out;
    }
    for (TopicInfo t : s.broker().topics()) {
      for (TopicInfo.PartitionInfo p : t.partitions()) {
        if (p.leader() >= 0) {
          out.merge(p.leader(), 1, Integer::sum);
        }
      }
    }
    return out;
  }

  private Quorum quorum(QuorumStatus q) {
    return new Quorum(q.leaderId(), q.term(), q.commitIndex(), voters(q.voters(), q), voters(q.listeners(), q));
  }

  private List<Voter> voters(List<QuorumStatus.Peer> peers, QuorumStatus q) {
    return peers.stream().map(p -> new Voter(p.nodeId(), p.nodeId() == q.leaderId(), p.matchIndex(),
        p.matchIndex() < 0 ? -1 : Math.max(0, q.commitIndex() - p.matchIndex()),
        p.lastContactMs() < 0 ? -1 : Math.max(0, s.nowMs() - p.lastContactMs()))).toList();
  }

  private ThisNode thisNode() {
    Map<String, Boolean> health = new TreeMap<>(s.health().components());
    Map<String, Boolean> ready = new TreeMap<>(s.health().readiness());
    boolean healthy = s.health().live() && health.values().stream().allMatch(Boolean::booleanValue);
    boolean isReady = !ready.isEmpty() && ready.values().stream().allMatch(Boolean::booleanValue);
    Load load = new Load(gauge(NodeMeters.PREFIX + "process.cpu.usage"), gauge(NodeMeters.PREFIX + "system.cpu.usage"), rate(BYTES_IN), rate(BYTES_OUT),
        rate(REQUESTS), rate(WAL_BYTES));
    return new ThisNode(s.config().nodeId(), roles(), healthy, isReady, health, ready, s.nowMs() - s.startedAtMs(), load);
  }

  private Double gauge(String name) {
    Gauge g = s.meters().find(name).gauge();
    if (g == null) {
      return null;
    }
    double v = g.value();
    return Double.isNaN(v) ? null : v;
  }

  /** The per-second rate of the sum of every meter named {@code name} (all tags), or null while unknown. */
  private Double rate(String name) {
    Double total = total(s.meters().find(name).meters());
    return total == null ? null : s.rates().sample("node:" + name, total, s.nowMs());
  }

  static Double total(java.util.Collection<Meter> meters) {
    if (meters.isEmpty()) {
      return null;
    }
    double sum = 0;
    for (Meter m : meters) {
      for (Measurement measurement : m.measure()) {
        if (measurement.getStatistic() == Statistic.COUNT || measurement.getStatistic() == Statistic.TOTAL) {
          sum += measurement.getValue();
          break;
        }
      }
    }
    return sum;
  }
}
