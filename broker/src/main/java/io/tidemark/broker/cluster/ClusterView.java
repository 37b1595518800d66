package io.tidemark.broker.cluster;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * What this broker tells clients about the cluster: its node id and advertised endpoint (known
 * once the listener is bound), the cluster id, the live brokers of the cluster (this one always
 * among them, as bound) and the controller. Any broker takes controller work (topic and config
 * changes go through the replicated controller from whichever broker receives them), so each
 * broker names itself as the controller. The endpoint is published once through a volatile
 * field; the other brokers are read from {@link ClusterMetadata} on every call.
 */
public final class ClusterView {

  /** A broker's advertised address. */
  public record Node(int id, String host, int port) {}

  private final Supplier<String> clusterId;
  private final int nodeId;
  private final String advertisedHost;
  private final ClusterMetadata metadata;
  private volatile Node self;

  public ClusterView(Supplier<String> clusterId, int nodeId, String advertisedHost, ClusterMetadata metadata) {
    this.clusterId = clusterId;
    this.nodeId = nodeId;
    this.advertisedHost = advertisedHost;
    this.metadata = metadata;
    this.self = new Node(nodeId, advertisedHost, -1);
  }

  public void bound(int advertisedPort) {
    self = new Node(nodeId, advertisedHost, advertisedPort);
  }

  public String clusterId() {
    return clusterId.get();
  }

  public int nodeId() {
    return nodeId;
  }

  public Node self() {
    return self;
  }

  public int controllerId() {
    return nodeId;
  }

  /** Every live broker by id, this one first as bound. */
  public List<Node> brokers() {
    List<Node> out = new ArrayList<>();
    out.add(self);
    metadata.liveBrokers().stream().filter(n -> n.id() != nodeId).sorted(Comparator.comparingInt(Node::id))
        .forEach(out::add);
    return out;
  }

  /** A live broker by id. */
  public Optional<Node> broker(int id) {
    if (id == nodeId) {
      return Optional.of(self);
    }
    return metadata.liveBrokers().stream().filter(n -> n.id() == id).findFirst();
  }

  /** The ids of the live brokers, ascending: where new partitions may be placed. */
  public List<Integer> liveBrokerIds() {
    return brokers().stream().map(Node::id).sorted().toList();
  }
}
