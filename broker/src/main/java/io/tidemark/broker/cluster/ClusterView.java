package io.tidemark.broker.cluster;

/**
 * What this broker tells clients about the cluster: its node id and advertised endpoint (known
 * once the listener is bound), the cluster id and the controller. Single-node for now: this node
 * is the only broker and the controller. The endpoint is published once through a volatile field.
 */
public final class ClusterView {

  /** A broker's advertised address. */
  public record Node(int id, String host, int port) {}

  private final String clusterId;
  private final int nodeId;
  private final String advertisedHost;
  private volatile Node self;

  public ClusterView(String clusterId, int nodeId, String advertisedHost) {
    this.clusterId = clusterId;
    this.nodeId = nodeId;
    this.advertisedHost = advertisedHost;
    this.self = new Node(nodeId, advertisedHost, -1);
  }

  public void bound(int advertisedPort) {
    self = new Node(nodeId, advertisedHost, advertisedPort);
  }

  public String clusterId() {
    return clusterId;
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
}
