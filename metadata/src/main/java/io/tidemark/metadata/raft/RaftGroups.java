package io.tidemark.metadata.raft;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.NetUtils;
import org.apache.ratis.util.TimeDuration;
import java.util.concurrent.TimeUnit;

/** The Raft group of the metadata quorum, built from {@code controller.voters}. Stateless. */
public final class RaftGroups {
  /** One metadata group per cluster; the id is fixed so every node and client agrees on it. */
  public static final RaftGroupId GROUP_ID =
      RaftGroupId.valueOf(UUID.nameUUIDFromBytes("tidemark-metadata".getBytes(StandardCharsets.UTF_8)));

  private RaftGroups() {}

  public static RaftPeerId peerId(int nodeId) {
    return RaftPeerId.valueOf("n" + nodeId);
  }

  /** The peer id of an image follower (a Ratis listener); distinct from every voter's id. */
  public static RaftPeerId listenerPeerId(int nodeId) {
    return RaftPeerId.valueOf("listener" + nodeId);
  }

  public static RaftGroup group(Map<Integer, String> voters) {
    List<RaftPeer> peers = new ArrayList<>();
    voters.forEach((id, address) -> peers.add(RaftPeer.newBuilder().setId(peerId(id)).setAddress(address).build()));
    return RaftGroup.valueOf(GROUP_ID, peers);
  }

  /**
   * Properties of a Raft server of the metadata group (a voter or an image follower) listening on
   * {@code address} ({@code host:port}: the server binds that host, or {@code controller.listener.host}
   * when set, so the embedded default {@code 127.0.0.1:9093} is reachable from this machine alone): storage under
   * {@code controller.dir}, election timeouts, snapshots every
   * {@code controller.snapshot.interval.entries} with the log purged up to the snapshot. A lone
   * voter uses an election timeout of {@value #LONE_VOTER_ELECTION_TIMEOUT_MS} ms.
   */
  /** Where a voter with this address binds: {@code controller.listener.host} when set, else the address's host. */
  static InetSocketAddress bindAddress(ControllerConfig config, String address) {
    InetSocketAddress voter = NetUtils.createSocketAddr(address);
    String host = config.get(ControllerConfig.LISTENER_HOST);
    return InetSocketAddress.createUnresolved(host.isBlank() ? voter.getHostString() : host, voter.getPort());
  }

  static RaftProperties serverProperties(ControllerConfig config, String address) {
    RaftProperties p = baseProperties();
    RaftServerConfigKeys.setStorageDir(p, List.of(config.dir().toFile()));
    InetSocketAddress bind = bindAddress(config, address);
    GrpcConfigKeys.Server.setHost(p, bind.getHostString());
    GrpcConfigKeys.Server.setPort(p, bind.getPort());
    // A lone voter has nobody to compete with: it elects itself at once instead of waiting a whole election
    // timeout on every start (a single node's restart waits for it before it can register and serve).
    long election = config.voters().size() == 1 && config.voters().containsKey(config.nodeId())
        ? Math.min(LONE_VOTER_ELECTION_TIMEOUT_MS, config.get(ControllerConfig.ELECTION_TIMEOUT_MS))
        : config.get(ControllerConfig.ELECTION_TIMEOUT_MS);
    RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(election, TimeUnit.MILLISECONDS));
    RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(election * 2, TimeUnit.MILLISECONDS));
    RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
    RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, config.get(ControllerConfig.SNAPSHOT_INTERVAL_ENTRIES));
    RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, 2);
    RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
    return p;
  }

  /**
   * A client of the voters with the configured request timeout and retry policy
   * ({@code controller.request.timeout.ms}, {@code controller.client.max.attempts},
   * {@code controller.client.retry.backoff.ms}). The caller owns and closes it.
   */
  public static RaftClient newClient(ControllerConfig config) {
    RaftProperties p = baseProperties();
    RaftClientConfigKeys.Rpc.setRequestTimeout(p,
        TimeDuration.valueOf(config.get(ControllerConfig.REQUEST_TIMEOUT_MS), TimeUnit.MILLISECONDS));
    return RaftClient.newBuilder()
        .setProperties(p)
        .setRaftGroup(group(config.voters()))
        .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(
            config.get(ControllerConfig.CLIENT_MAX_ATTEMPTS),
            TimeDuration.valueOf(config.get(ControllerConfig.CLIENT_RETRY_BACKOFF_MS), TimeUnit.MILLISECONDS)))
        .build();
  }

  /** The election timeout of a single-voter group (its only voter needs nobody's vote). */
  static final long LONE_VOTER_ELECTION_TIMEOUT_MS = 100;

  /** Wait between heartbeat attempts (after a timeout, a refused connection or a "not leader" answer). */
  static final long HEARTBEAT_RETRY_SLEEP_MS = 50;

  /**
   * A client for heartbeats alone: each attempt waits at most
   * {@link ControllerConfig#heartbeatAttemptTimeoutMs} (two heartbeat intervals), after which Ratis
   * sends the next attempt to another voter (a refused connection or a "not leader" answer moves on
   * at once); attempts go on, {@value #HEARTBEAT_RETRY_SLEEP_MS} ms apart, until one is committed
   * or {@link #heartbeatAttempts} were made (about a session timeout while no voter answers at all:
   * the heartbeat then fails as unavailable and the next one starts over).
   * The caller sends with the blocking API (unordered: no heartbeat waits behind another) and keeps
   * at most one heartbeat per node outstanding. A paused leader thus costs a broker
   * one attempt, never the session timeout. The caller owns and closes it.
   */
  public static RaftClient newHeartbeatClient(ControllerConfig config) {
    RaftProperties p = baseProperties();
    RaftClientConfigKeys.Rpc.setRequestTimeout(p,
        TimeDuration.valueOf(config.heartbeatAttemptTimeoutMs(), TimeUnit.MILLISECONDS));
    return RaftClient.newBuilder()
        .setProperties(p)
        .setRaftGroup(group(config.voters()))
        .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(heartbeatAttempts(config),
            TimeDuration.valueOf(HEARTBEAT_RETRY_SLEEP_MS, TimeUnit.MILLISECONDS)))
        .build();
  }

  /** Attempts of one heartbeat: one session timeout's worth of immediately refused attempts, at least 3. */
  static int heartbeatAttempts(ControllerConfig config) {
    return (int) Math.max(3, config.get(ControllerConfig.SESSION_TIMEOUT_MS) / HEARTBEAT_RETRY_SLEEP_MS);
  }

  /** Runs {@code close} on a daemon thread (a halting node must not close itself on the Raft thread that halted it). */
  static void closeInBackground(String threadName, Runnable close) {
    Thread t = new Thread(close, threadName);
    t.setDaemon(true);
    t.start();
  }

  /** Closes a client and then a server (either may be null), logging rather than throwing failures. */
  static void closeQuietly(RaftClient client, RaftServer server, String what, org.slf4j.Logger log) {
    try {
      if (client != null) {
        client.close();
      }
    } catch (IOException e) {
      log.warn("closing the Raft client of {}", what, e);
    }
    try {
      if (server != null) {
        server.close();
      }
    } catch (IOException e) {
      log.warn("closing the Raft server of {}", what, e);
    }
  }

  /** Properties shared by servers and clients: the gRPC transport (Ratis shades its own gRPC and Netty). */
  static RaftProperties baseProperties() {
    RaftProperties p = new RaftProperties();
    RaftConfigKeys.Rpc.setType(p, SupportedRpcType.GRPC);
    return p;
  }
}
