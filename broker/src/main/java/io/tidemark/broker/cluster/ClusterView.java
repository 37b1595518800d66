package io.tidemark.broker.cluster;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
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

  /**
   * A broker's advertised address on the inter-broker listener ({@code host}, {@code port}) and
   * on each of its named listeners (empty for a broker that registered one endpoint only).
   */
  public record Node(int id, String host, int port, Map<String, Endpoint> listeners) {

    public Node(int id, String host, int port) {
      this(id, host, port, Map.of());
    }

    /** This broker as clients of {@code listener} must reach it; empty when it has no such listener. */
    public Optional<Node> on(String listener) {
      if (listeners.isEmpty()) {
        return Optional.of(this);
      }
      Endpoint e = listeners.get(listener);
      return e == null ? Optional.empty() : Optional.of(new Node(id, e.host(), e.port(), listeners));
    }
  }

  /** One advertised listener endpoint. */
  public record Endpoint(String host, int port) {}

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

  /** Publishes this broker's advertised endpoint per listener once bound; the first named is the inter-broker one. */
  public void bound(String interBrokerListener, Map<String, Endpoint> listeners) {
    Endpoint inter = listeners.get(interBrokerListener);
    self = new Node(nodeId, inter.host(), inter.port(), Map.copyOf(listeners));
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

  /** Every live broker with an endpoint on {@code listener}, as clients of that listener reach it; this one first. */
  public List<Node> brokers(String listener) {
    return brokers().stream().flatMap(n -> n.on(listener).stream()).toList();
  }

  /** A live broker by id as clients of {@code listener} reach it. */
  public Optional<Node> broker(int id, String listener) {
    return broker(id).flatMap(n -> n.on(listener));
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
