package io.tidemark.server.console;

import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.metadata.controller.FailoverControl;
import io.tidemark.metadata.controller.NodeLoad;
import io.tidemark.metadata.controller.NodeLoads;
import io.tidemark.metadata.image.BrokerEntry;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.raft.QuorumStatus;
import io.tidemark.metadata.record.MetadataRecord;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The cluster page: every node the metadata knows (registered brokers with their state, controller
 * voters) with its load, the controller quorum as this node's voter sees it, and this node's health.
 * Load: this node's is measured now ({@link LocalLoad}); every other node's is the one it last reported
 * to the controller leader (every {@code ControllerLink.LOAD_REPORT_MS}, see {@code NodeLoads}),
 * asked for with one read of at most {@value #LOADS_TIMEOUT_MS} ms (the page is cached, so at most
 * one such read per refresh window). A node with no fresh report shows no load.
 */
final class ClusterPage {

  static final long LOADS_TIMEOUT_MS = 3_000;

  record Node(int id, List<String> roles, String host, int port, String rack, long epoch, String state, boolean self,
      int leaderPartitions, Load load, Long loadAgeMs) {}

  record Voter(int id, boolean leader, long logEndIndex, long behind, long lastContactAgoMs) {}

  record Quorum(int leaderId, long term, long commitIndex, List<Voter> voters, List<Voter> observers) {}

  record Load(Double processCpu, Double systemCpu, Double bytesInPerSec, Double bytesOutPerSec, Double requestsPerSec,
      Double walBytesPerSec) {
    static Load of(NodeLoad l) {
      return new Load(known(l.processCpu()), known(l.systemCpu()), known(l.bytesInPerSec()), known(l.bytesOutPerSec()),
          known(l.requestsPerSec()), known(l.walBytesPerSec()));
    }

    private static Double known(double v) {
      return Double.isNaN(v) || v < 0 ? null : v;
    }
  }

  record ThisNode(int id, List<String> roles, boolean healthy, boolean ready, Map<String, Boolean> health,
      Map<String, Boolean> readiness, long uptimeMs, Load load) {}

  record View(String clusterId, long metadataOffset, List<Node> nodes, Quorum quorum, String quorumNote, String loadNote,
      ThisNode thisNode, long atMs) {}

  private final Sources s;

  ClusterPage(Sources sources) {
    this.s = sources;
  }

  View render() {
    MetadataImage image = s.image();
    Load mine = Load.of(s.localLoad().measure());
    Map<Integer, NodeLoads.Reported> reported = new HashMap<>();
    String loadNote = reportedLoads(reported);
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
        boolean self = b.nodeId() == s.config().nodeId();
        NodeLoads.Reported r = reported.get(b.nodeId());
        nodes.add(new Node(b.nodeId(), roles, kafka == null ? null : kafka.host(), port,
            b.registration().rack(), b.nodeEpoch(), brokerState(image, b), self,
            leaders.getOrDefault(b.nodeId(), 0), self ? mine : r == null ? null : Load.of(r.load()),
            self ? Long.valueOf(0) : r == null ? null : r.ageMs()));
      }
    }
    for (int voter : new TreeSet<>(voters)) {
      if (!seen.contains(voter)) {
        seen.add(voter);
        boolean self = voter == s.config().nodeId();
        nodes.add(new Node(voter, List.of("controller"), null, -1, "", -1, "voter", self, 0, self ? mine : null,
            self ? Long.valueOf(0) : null));
      }
    }
    if (!seen.contains(s.config().nodeId())) {
      nodes.add(new Node(s.config().nodeId(), roles(), null, s.broker() == null ? -1 : s.broker().port(), "", -1,
          "online", true, leaders.getOrDefault(s.config().nodeId(), 0), mine, 0L));
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
        quorumNote, loadNote, thisNode(mine), s.nowMs());
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

  private ThisNode thisNode(Load load) {
    Map<String, Boolean> health = new TreeMap<>(s.health().components());
    Map<String, Boolean> ready = new TreeMap<>(s.health().readiness());
    boolean healthy = s.health().live() && health.values().stream().allMatch(Boolean::booleanValue);
    boolean isReady = !ready.isEmpty() && ready.values().stream().allMatch(Boolean::booleanValue);
    return new ThisNode(s.config().nodeId(), roles(), healthy, isReady, health, ready, s.nowMs() - s.startedAtMs(), load);
  }

  /** Fills {@code out} with the loads the other nodes reported to the controller leader; answers why none, or null. */
  private String reportedLoads(Map<Integer, NodeLoads.Reported> out) {
    if (s.controller() == null) {
      return null; // a node alone: its own load is all there is
    }
    try {
      s.controller().describeLoads().get(LOADS_TIMEOUT_MS, TimeUnit.MILLISECONDS).forEach(r -> out.put(r.nodeId(), r));
      return null;
    } catch (ExecutionException e) {
      return "the other nodes' load is unknown now: the controller leader did not answer (" + e.getCause().getMessage() + ")";
    } catch (TimeoutException e) {
      return "the other nodes' load is unknown now: the controller leader did not answer within " + LOADS_TIMEOUT_MS + " ms";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted";
    }
  }
}
