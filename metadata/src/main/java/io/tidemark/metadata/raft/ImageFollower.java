package io.tidemark.metadata.raft;

import io.tidemark.metadata.controller.BrokerSessions;
import io.tidemark.metadata.controller.Controller;
import io.tidemark.metadata.controller.MetadataReplica;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.image.MetadataListener;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The brokers' view of the metadata on a node that is not a voter: a Ratis <em>listener</em> of the
 * metadata group. It receives the committed log from the leader like a follower, but never votes
 * and never counts towards a commit, and it runs the same {@link MetadataStateMachine}, so its
 * {@link #image()} is built by replaying exactly what the voters replay. Ratis brings it up to date
 * after a leader change, after its own restart (from its local log and snapshots) and, when the
 * leader has purged the entries it is missing, by installing the leader's snapshot.
 *
 * <p>{@link #start} starts the listener's Raft server on {@code listenAddress} and asks the quorum
 * to add it as a listener (idempotent: a restart finds itself already in the configuration). The
 * listener stays in the configuration after {@link #close}, so a restart resumes where it stopped;
 * {@link #leave} removes it for good. Its peer id is {@link RaftGroups#listenerPeerId}, distinct
 * from voter ids, so a broker may use its own node id.
 *
 * <p>Voters and followers must run with the same controller limits ({@code controller.prepare.*},
 * {@code controller.commit.*}, {@code controller.producer.id.block.size}): entries are computed at
 * apply time on every replica. States: NEW → RUNNING ({@link #start}) → CLOSED ({@link #close});
 * a corrupt snapshot or entry closes the follower. Thread-safe; {@link #image()} and
 * {@link #awaitOffset} may be called from any thread.
 */
public final class ImageFollower implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ImageFollower.class);

  private final ControllerConfig config;
  private final String listenAddress;
  private final MetadataReplica replica;
  private final MetadataStateMachine stateMachine;
  private Consumer<RaftProperties> raftTweaks = p -> {};
  private RaftServer server;
  private RaftClient client;
  private volatile boolean closed;

  /**
   * @param config {@code controller.node.id} (this node's id), {@code controller.voters},
   *     {@code controller.dir} (this follower's own log and snapshots) and the client timeouts
   * @param listenAddress {@code host:port} the leader sends the log to; keep it stable across
   *     restarts (the configuration remembers it)
   */
  public ImageFollower(ControllerConfig config, String listenAddress, Clock clock) {
    this.config = config;
    this.listenAddress = listenAddress;
    Controller controller = new Controller(config.limits());
    this.replica = new MetadataReplica(controller, config.get(ControllerConfig.MAX_OFFSET_WAITERS));
    this.stateMachine = new MetadataStateMachine(replica, controller,
        new BrokerSessions(config.get(ControllerConfig.SESSION_TIMEOUT_MS), config.leaderGraceMs()), clock, this::halt);
  }

  /** Test hook: adjusts the Raft server properties before {@link #start}. */
  ImageFollower raftTweaks(Consumer<RaftProperties> tweaks) {
    this.raftTweaks = tweaks;
    return this;
  }

  /**
   * Starts the listener and joins the metadata group; returns once the quorum committed the
   * configuration that includes it (the image then catches up in the background).
   */
  public synchronized ImageFollower start() throws IOException {
    Files.createDirectories(config.dir());
    RaftProperties p = RaftGroups.serverProperties(config, listenAddress);
    raftTweaks.accept(p);
    server = RaftServer.newBuilder()
        .setServerId(RaftGroups.listenerPeerId(config.nodeId()))
        .setGroup(RaftGroup.valueOf(RaftGroups.GROUP_ID, withSelf(RaftGroups.group(config.voters()).getPeers())))
        .setStateMachine(stateMachine)
        .setProperties(p)
        .setOption(RaftStorage.StartupOption.RECOVER)
        .build();
    try {
      server.start();
    } catch (IOException | RuntimeException e) {
      close();
      throw new IOException("image follower " + config.nodeId() + " cannot start from " + config.dir()
          + " and stops rather than serve metadata it cannot trust: " + ControllerNode.causes(e), e);
    }
    client = RaftGroups.newClient(config);
    try {
      RaftClientReply reply = client.admin().setConfiguration(SetConfigurationRequest.Arguments.newBuilder()
          .setServersInNewConf(List.of())
          .setListenersInNewConf(List.of(self()))
          .setMode(SetConfigurationRequest.Mode.ADD)
          .build());
      if (!reply.isSuccess()) {
        throw new IOException("the controller quorum did not add image follower " + config.nodeId()
            + " as a listener: " + reply.getException());
      }
    } catch (IOException | RuntimeException e) {
      close();
      throw e instanceof IOException io ? io : new IOException(e);
    }
    LOG.info("image follower {} listening on {} joined the metadata group", config.nodeId(), listenAddress);
    return this;
  }

  /**
   * Removes this follower from the group's configuration (a broker leaving the cluster for good),
   * then closes it. The change is compared against the configuration this follower last applied,
   * so it never drops a voter or listener that joined in between; it fails if that view is stale.
   */
  public void leave() throws IOException {
    try {
      org.apache.ratis.server.RaftConfiguration conf = server.getDivision(RaftGroups.GROUP_ID).getRaftConf();
      List<RaftPeer> voters = new ArrayList<>(conf.getCurrentPeers(RaftPeerRole.FOLLOWER));
      List<RaftPeer> listeners = new ArrayList<>(conf.getCurrentPeers(RaftPeerRole.LISTENER));
      List<RaftPeer> remaining = listeners.stream().filter(l -> !l.getId().equals(self().getId())).toList();
      RaftClientReply reply = client.admin().setConfiguration(SetConfigurationRequest.Arguments.newBuilder()
          .setServersInCurrentConf(voters)
          .setListenersInCurrentConf(listeners)
          .setServersInNewConf(voters)
          .setListenersInNewConf(remaining)
          .setMode(SetConfigurationRequest.Mode.COMPARE_AND_SET)
          .build());
      if (!reply.isSuccess()) {
        throw new IOException("image follower " + config.nodeId() + " could not leave the metadata group: "
            + reply.getException());
      }
    } finally {
      close();
    }
  }

  private RaftPeer self() {
    return RaftPeer.newBuilder().setId(RaftGroups.listenerPeerId(config.nodeId())).setAddress(listenAddress)
        .setStartupRole(RaftPeerRole.LISTENER).build();
  }

  private List<RaftPeer> withSelf(java.util.Collection<RaftPeer> voters) {
    List<RaftPeer> peers = new ArrayList<>(voters);
    peers.add(self());
    return peers;
  }

  public int nodeId() {
    return config.nodeId();
  }

  /** The latest image this follower has applied; its {@link MetadataImage#offset()} is the visible offset. */
  /** The replica this follower replays into (image, listeners, offset waits). */
  public MetadataReplica replica() {
    return replica;
  }

  public MetadataImage image() {
    return replica.image();
  }

  /**
   * Completes once this follower's image has reached {@code offset}, e.g. the
   * {@code ControllerClient.lastWriteOffset()} of the broker's own write.
   */
  public CompletableFuture<MetadataImage> awaitOffset(long offset) {
    return replica.awaitOffset(offset);
  }

  /** Registers a listener called on the Raft apply thread with every new image and its records. */
  public void addListener(MetadataListener listener) {
    replica.addListener(listener);
  }

  public void removeListener(MetadataListener listener) {
    replica.removeListener(listener);
  }

  /** Null while healthy; why the follower stopped after a corrupt snapshot or entry. */
  public String haltedReason() {
    return replica.haltedReason();
  }

  private void halt(String reason) {
    LOG.error("image follower {} stops: {}", config.nodeId(), reason);
    RaftGroups.closeInBackground("image-follower-" + config.nodeId() + "-halt", this::close);
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    RaftGroups.closeQuietly(client, server, "image follower " + config.nodeId(), LOG);
  }
}
