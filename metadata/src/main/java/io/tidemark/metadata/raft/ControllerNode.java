package io.tidemark.metadata.raft;

import io.tidemark.metadata.controller.BrokerSessions;
import io.tidemark.metadata.controller.Controller;
import io.tidemark.metadata.controller.ControllerReply;
import io.tidemark.metadata.controller.ControllerRequest;
import io.tidemark.metadata.controller.MetadataReplica;
import io.tidemark.metadata.controller.FailoverControl;
import io.tidemark.metadata.controller.PartitionControl;
import io.tidemark.metadata.image.BrokerEntry;
import io.tidemark.metadata.controller.RequestCodec;
import io.tidemark.metadata.image.LongPair;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.MetadataRecord;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongFunction;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One controller voter: a Ratis server holding the metadata log and {@link MetadataStateMachine},
 * plus the leader's housekeeping. The brokers' view is {@link #replica()}: its image and listeners
 * (a broker in the same process uses it directly).
 *
 * <p>Housekeeping (leader only, one round at a time on one scheduler thread, every
 * {@code controller.housekeeping.interval.ms}): marks expired prepared objects, fences brokers
 * whose session expired ({@link BrokerSessions}: every voter records heartbeats as it applies
 * them, so a new leader keeps the sessions and gives brokers only a short grace to find it; the
 * leader that appends a fence checks it against its own table, so a deposed leader that wakes up
 * from a pause with a stale table and forwards its fences to the new leader fences nobody alive) and
 * starts their failover ({@link FailoverControl}), unfences fenced
 * brokers that heartbeat again while nothing failed them over, and deletes objects
 * marked for deletion longer than {@code controller.object.delete.delay.ms} from object storage
 * in batches of {@code controller.object.delete.batch.size}, removing them from the metadata only
 * after storage confirmed the delete, and completes reassignments whose new leader serves the
 * partition ({@link PartitionControl#completable}). All changes go through the log.
 *
 * <p>States: NEW → RUNNING ({@link #start}) → CLOSED ({@link #close}); a halted state machine
 * (corrupt snapshot or entry) closes the node.
 */
public final class ControllerNode implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ControllerNode.class);
  /** How long {@link #start} waits for a taken voter port before it fails. */
  static final long PORT_WAIT_MS = 10_000;

  private final ControllerConfig config;
  private final Clock clock;
  private final ObjectStorage objectStorage;
  private final LongFunction<String> objectKeys;
  private final MetadataReplica replica;
  private final BrokerSessions sessions;
  private final MetadataStateMachine stateMachine;
  private final ScheduledExecutorService housekeeping;
  /** The leader's probes of silent brokers' listeners ({@code controller.session.probe}); null when off. */
  private final BrokerProbes probes;
  private RaftServer server;
  /** Replaced when Ratis closed it after a failure ({@link #renewSelfClient}); written under this object's lock. */
  private volatile RaftClient selfClient;
  private volatile boolean wasLeader;
  private volatile CompletableFuture<?> roundInFlight = CompletableFuture.completedFuture(null);
  private volatile boolean closed;
  private Consumer<RaftProperties> raftTweaks = p -> {};

  /**
   * @param objectStorage where committed objects live; the leader deletes marked objects there
   * @param objectKeys the storage key of an object id (the storage engine's naming)
   */
  public ControllerNode(ControllerConfig config, Clock clock, ObjectStorage objectStorage,
      LongFunction<String> objectKeys) {
    this.config = config;
    this.clock = clock;
    this.objectStorage = objectStorage;
    this.objectKeys = objectKeys;
    Controller controller = new Controller(config.limits());
    this.replica = new MetadataReplica(controller, config.get(ControllerConfig.MAX_OFFSET_WAITERS));
    this.sessions = new BrokerSessions(config.get(ControllerConfig.SESSION_TIMEOUT_MS), config.leaderGraceMs());
    this.stateMachine = new MetadataStateMachine(replica, controller, sessions, clock, this::halt);
    stateMachine.describeQuorumFrom(this::quorumStatus);
    this.housekeeping = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "controller-" + config.nodeId() + "-housekeeping");
      t.setDaemon(true);
      return t;
    });
    // a broker found gone is fenced by a round started at once, not at the next interval
    this.probes = config.get(ControllerConfig.SESSION_PROBE)
        ? new BrokerProbes(sessions, 2 * config.heartbeatIntervalMs(), clock::millis, node -> roundSoon()) : null;
  }

  private void roundSoon() {
    try {
      housekeeping.execute(this::housekeepingRound);
    } catch (java.util.concurrent.RejectedExecutionException stopped) {
      // closed meanwhile
    }
  }

  public synchronized ControllerNode start() throws IOException {
    Files.createDirectories(config.dir());
    awaitFreePort(RaftGroups.bindAddress(config, config.nodeAddress()));
    RaftProperties p = RaftGroups.serverProperties(config, config.nodeAddress());
    raftTweaks.accept(p);
    server = RaftServer.newBuilder()
        .setServerId(RaftGroups.peerId(config.nodeId()))
        .setGroup(RaftGroups.group(config.voters()))
        .setStateMachine(stateMachine)
        .setProperties(p)
        .setOption(RaftStorage.StartupOption.RECOVER)
        .build();
    try {
      server.start();
    } catch (IOException | RuntimeException e) {
      close(); // release the storage lock and ports of the half-started server
      throw new IOException("controller node " + config.nodeId() + " cannot start from " + config.dir()
          + " and stops rather than serve metadata it cannot trust: " + causes(e), e);
    }
    selfClient = newSelfClient();
    long interval = config.get(ControllerConfig.HOUSEKEEPING_INTERVAL_MS);
    housekeeping.scheduleWithFixedDelay(this::housekeepingRound, interval, interval, TimeUnit.MILLISECONDS);
    return this;
  }

  /**
   * Waits up to {@value #PORT_WAIT_MS} ms for the voter's port to be free. Ratis ends the whole process
   * ({@code System.exit}) when its server cannot bind; checking first turns a taken port into a start
   * failure the caller sees, naming the port, and rides out a port held briefly (a restart right after a
   * stop, an outgoing connection that happened to be given the port).
   */
  private void awaitFreePort(InetSocketAddress address) throws IOException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PORT_WAIT_MS);
    while (true) {
      try (ServerSocket probe = new ServerSocket()) {
        probe.setReuseAddress(true);
        probe.bind(new InetSocketAddress(address.getHostString(), address.getPort()));
        return;
      } catch (IOException e) {
        if (System.nanoTime() > deadline) {
          throw new IOException("controller node " + config.nodeId() + " cannot bind its voter port "
              + address.getHostString() + ":" + address.getPort() + " (held for " + PORT_WAIT_MS + " ms): " + e.getMessage(), e);
        }
        LOG.warn("controller node {}: voter port {}:{} is taken ({}); trying again", config.nodeId(),
            address.getHostString(), address.getPort(), e.getMessage());
        try {
          Thread.sleep(250);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw new IOException("interrupted while waiting for the voter port", interrupted);
        }
      }
    }
  }

  /** The messages of a cause chain, outermost first (the root cause is what an operator needs). */
  static String causes(Throwable e) {
    StringBuilder sb = new StringBuilder();
    for (Throwable t = e; t != null && sb.length() < 2000; t = t.getCause() == t ? null : t.getCause()) {
      sb.append(sb.length() == 0 ? "" : " <- ").append(t.getClass().getSimpleName()).append(": ").append(t.getMessage());
    }
    return sb.toString();
  }

  public int nodeId() {
    return config.nodeId();
  }

  /** Test hook: adjusts the Raft server properties before {@link #start} (e.g. small log segments). */
  ControllerNode raftTweaks(Consumer<RaftProperties> tweaks) {
    this.raftTweaks = tweaks;
    return this;
  }

  /** The first index still in this node's Raft log (entries before it were purged after a snapshot). */
  long logStartIndex() throws IOException {
    return server.getDivision(RaftGroups.GROUP_ID).getRaftLog().getStartIndex();
  }

  /** The peer ids of the image followers (Ratis listeners) in this node's current configuration. */
  List<String> listenerIds() throws IOException {
    return server.getDivision(RaftGroups.GROUP_ID).getRaftConf()
        .getCurrentPeers(org.apache.ratis.proto.RaftProtos.RaftPeerRole.LISTENER).stream()
        .map(peer -> peer.getId().toString()).toList();
  }

  /** The metadata as this node has applied it: image, listeners, waiting for an offset. */
  public MetadataReplica replica() {
    return replica;
  }

  public MetadataImage image() {
    return replica.image();
  }

  public boolean isLeader() {
    DivisionInfo info = info();
    return info != null && info.isLeader() && info.isLeaderReady();
  }

  /**
   * The quorum as this voter sees it now: leader, term, commit index and, on the leader, each
   * follower's match index and last contact (from Ratis' leader state); empty when stopped.
   */
  public java.util.Optional<QuorumStatus> quorumStatus() {
    try {
      if (server == null || closed) {
        return java.util.Optional.empty();
      }
      var division = server.getDivision(RaftGroups.GROUP_ID);
      DivisionInfo info = division.getInfo();
      long now = clock.millis();
      long commit = division.getRaftLog().getLastCommittedIndex();
      java.util.Map<String, QuorumStatus.Peer> known = new java.util.HashMap<>();
      known.put(RaftGroups.peerId(config.nodeId()).toString(), new QuorumStatus.Peer(config.nodeId(),
          division.getRaftLog().getLastEntryTermIndex() == null ? -1 : division.getRaftLog().getLastEntryTermIndex().getIndex(), now,
          null));
      if (info.isLeader()) {
        var followers = info.getRoleInfoProto().getLeaderInfo().getFollowerInfoList();
        long[] match = info.getFollowerMatchIndices();
        for (int i = 0; i < followers.size() && i < match.length; i++) {
          String id = followers.get(i).getId().getId().toStringUtf8();
          known.put(id, new QuorumStatus.Peer(nodeIdOf(id), match[i], now - followers.get(i).getLastRpcElapsedTimeMs(), null));
        }
      }
      java.util.List<QuorumStatus.Peer> voters = new java.util.ArrayList<>();
      java.util.List<QuorumStatus.Peer> listeners = new java.util.ArrayList<>();
      var conf = division.getRaftConf();
      for (var peer : conf.getCurrentPeers()) {
        String id = peer.getId().toString();
        QuorumStatus.Peer p = known.getOrDefault(id, new QuorumStatus.Peer(nodeIdOf(id), -1, -1, null));
        voters.add(new QuorumStatus.Peer(p.nodeId(), p.matchIndex(), p.lastContactMs(), peer.getAddress()));
      }
      for (var peer : conf.getCurrentPeers(org.apache.ratis.proto.RaftProtos.RaftPeerRole.LISTENER)) {
        String id = peer.getId().toString();
        listeners.add(known.getOrDefault(id, new QuorumStatus.Peer(nodeIdOf(id), -1, -1, null)));
      }
      voters.sort(java.util.Comparator.comparingInt(QuorumStatus.Peer::nodeId));
      listeners.sort(java.util.Comparator.comparingInt(QuorumStatus.Peer::nodeId));
      int leader = info.getLeaderId() == null ? -1 : nodeIdOf(info.getLeaderId().toString());
      return java.util.Optional.of(new QuorumStatus(leader, info.getCurrentTerm(), commit, voters, listeners));
    } catch (IOException e) {
      return java.util.Optional.empty();
    }
  }

  /** The node id in a Raft peer id ({@code n7} for voters, {@code listener7} for image followers). */
  private static int nodeIdOf(String peerId) {
    return Integer.parseInt(peerId.replaceFirst("^(n|listener)", ""));
  }

  private DivisionInfo info() {
    try {
      return server == null || closed ? null : server.getDivision(RaftGroups.GROUP_ID).getInfo();
    } catch (IOException e) {
      return null;
    }
  }

  /**
   * Asks Ratis to snapshot this node now (snapshots are also taken every
   * {@code controller.snapshot.interval.entries}).
   */
  public void takeSnapshot(long timeoutMs) throws IOException {
    RaftClientReply reply = selfClient.getSnapshotManagementApi(RaftGroups.peerId(config.nodeId())).create(true, timeoutMs);
    if (!reply.isSuccess()) {
      throw new IOException("snapshot of controller node " + config.nodeId() + " failed: " + reply.getException());
    }
  }

  /** One housekeeping round; skipped when this node is not the leader or the previous round is still running. */
  void housekeepingRound() {
    try {
      long now = clock.millis();
      if (!isLeader()) {
        wasLeader = false;
        stateMachine.unfenceRequests().clear(); // the leader drains them; a follower's queue only grows
        if (probes != null) {
          probes.learn(replica.image(), now); // which brokers listen, for when this voter leads
        }
        return;
      }
      if (!wasLeader) {
        sessions.leaderSince(now); // the sessions applied from the log are kept
        wasLeader = true;
      }
      if (!roundInFlight.isDone()) {
        return;
      }
      roundInFlight = runRound(replica.image(), clock.millis());
    } catch (RuntimeException e) {
      LOG.warn("controller housekeeping round failed; retrying next interval", e);
    }
  }

  /**
   * Runs one housekeeping round now and completes when its changes are applied (at once when this
   * node is not the leader). For tests and tools; the scheduler calls the same code.
   */
  public CompletableFuture<Void> runHousekeeping() {
    if (!isLeader()) {
      return CompletableFuture.completedFuture(null);
    }
    CompletableFuture<Void> done = new CompletableFuture<>();
    housekeeping.execute(() -> {
      try {
        if (!wasLeader) {
          sessions.leaderSince(clock.millis());
          wasLeader = true;
        }
        roundInFlight.handle((v, e) -> null).thenCompose(v -> runRound(replica.image(), clock.millis()))
            .whenComplete((v, e) -> {
              if (e != null) {
                done.completeExceptionally(e);
              } else {
                done.complete(null);
              }
            });
      } catch (RuntimeException e) {
        done.completeExceptionally(e);
      }
    });
    return done;
  }

  private CompletableFuture<?> runRound(MetadataImage image, long nowMs) {
    List<CompletableFuture<?>> steps = new ArrayList<>();
    Map.Entry<LongPair, Long> firstPrepared = image.preparedByExpiry().first();
    if (firstPrepared != null && firstPrepared.getKey().first() <= nowMs) {
      steps.add(submit(new ControllerRequest.ExpireObjects(config.get(ControllerConfig.OBJECT_DELETE_BATCH_SIZE))));
    }
    for (NodeRef node : sessions.expired(image, nowMs)) {
      LOG.info("fencing node {} epoch {}: no heartbeat for {} ms ({})", node.nodeId(), node.nodeEpoch(),
          sessions.silentMs(node, nowMs), sessions.isGone(node) ? "its process is gone" : "the session timeout");
      // the failover is computed on the image after the fence, in the same round: detection costs one round less
      steps.add(submit(new ControllerRequest.FenceBroker(node.nodeId(), node.nodeEpoch()))
          .thenCompose(r -> failover(node.nodeId(), node.nodeEpoch())));
    }
    if (probes != null) {
      probes.check(image, nowMs);
    }
    NodeRef unfence;
    while ((unfence = stateMachine.unfenceRequests().poll()) != null) {
      steps.add(submit(new ControllerRequest.UnfenceBroker(unfence.nodeId(), unfence.nodeEpoch())));
    }
    for (BrokerEntry b : image.brokers().values()) {
      if (FailoverControl.needed(image, b)) {
        steps.add(failover(b.nodeId(), b.nodeEpoch())); // a recovery whose recoverer died, a leader change, no live broker before
      }
    }
    for (MetadataRecord.Partition p : image.partitions().values()) {
      if (PartitionControl.completable(image, p)) {
        LOG.info("reassignment of partition {} of topic {} to {} completed (node {} serves it at epoch {})",
            p.partition(), p.topicId(), p.replicas(), p.leaderNodeId(), p.leaderEpoch());
        steps.add(submit(new ControllerRequest.CompleteReassignment(p.topicId(), p.partition(), p.leaderEpoch())));
      }
    }
    steps.add(deleteMarked(image, nowMs));
    return CompletableFuture.allOf(steps.toArray(CompletableFuture[]::new));
  }

  private CompletableFuture<ControllerReply> failover(int nodeId, long nodeEpoch) {
    return submit(new ControllerRequest.FailoverBroker(nodeId, nodeEpoch)).whenComplete((reply, e) -> {
      if (e == null && reply.ok()) {
        long recoverer = reply.bodyOrThrow().readLong();
        if (recoverer >= 0) {
          LOG.info("failover of node {} epoch {}: node {} recovers its WAL; its partitions moved to live brokers",
              nodeId, nodeEpoch, recoverer);
        }
      }
    });
  }

  private CompletableFuture<?> deleteMarked(MetadataImage image, long nowMs) {
    long cutoff = nowMs - config.get(ControllerConfig.OBJECT_DELETE_DELAY_MS);
    int batch = config.get(ControllerConfig.OBJECT_DELETE_BATCH_SIZE);
    List<Long> ids = new ArrayList<>();
    List<String> keys = new ArrayList<>();
    Iterator<Map.Entry<LongPair, Long>> it = image.markedForDeletion().iterator();
    while (it.hasNext() && ids.size() < batch) {
      Map.Entry<LongPair, Long> e = it.next();
      if (e.getKey().first() > cutoff) {
        break;
      }
      ids.add(e.getValue());
      keys.add(objectKeys.apply(e.getValue()));
    }
    if (ids.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    return objectStorage.delete(keys)
        .thenCompose(v -> submit(new ControllerRequest.RemoveDeletedObjects(ids)))
        .exceptionally(e -> {
          // unknown outcome or failure: the objects stay marked and the next round deletes them again
          LOG.warn("deleting {} marked objects failed; retrying next round: {}", ids.size(), e.toString());
          return null;
        });
  }

  private RaftClient newSelfClient() {
    return RaftClient.newBuilder()
        .setProperties(RaftGroups.baseProperties())
        .setRaftGroup(RaftGroups.group(config.voters()))
        .setLeaderId(RaftGroups.peerId(config.nodeId()))
        .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(3,
            TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)))
        .build();
  }

  private CompletableFuture<ControllerReply> submit(ControllerRequest.Write request) {
    Message m = Message.valueOf(ByteString.copyFrom(RequestCodec.encode(request)));
    RaftClient client = selfClient;
    return client.async().send(m).whenComplete((reply, e) -> {
      if (e != null && closedByRatis(e)) {
        renewSelfClient(client);
      }
    }).thenApply(ControllerNode::decode);
  }

  private static boolean closedByRatis(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof org.apache.ratis.protocol.exceptions.AlreadyClosedException) {
        return true;
      }
    }
    return false;
  }

  /**
   * Ratis closes a client for good after some failures (an async stream closed with requests
   * unanswered, seen on a machine at load 50); every later housekeeping write of a leader that
   * stays leader would fail with it, so reassignments never completed and silent brokers were never
   * fenced. The closed client is replaced by a new one (once: a stale caller finds it replaced).
   */
  private void renewSelfClient(RaftClient broken) {
    if (closed) {
      return; // closing: close() holds the lock while the client it closes fails its requests (which land here)
    }
    synchronized (this) {
      renewSelfClientLocked(broken);
    }
  }

  private void renewSelfClientLocked(RaftClient broken) {
    if (closed || selfClient != broken) {
      return;
    }
    LOG.warn("controller node {}: its Raft client was closed after a failure; housekeeping continues with a new one",
        config.nodeId());
    selfClient = newSelfClient();
    try {
      broken.close();
    } catch (java.io.IOException | RuntimeException e) {
      LOG.debug("closing the replaced Raft client failed", e);
    }
  }

  static ControllerReply decode(RaftClientReply reply) {
    if (!reply.isSuccess()) {
      throw new IllegalStateException("controller request failed: " + reply.getException());
    }
    return ControllerReply.decode(reply.getMessage().getContent().asReadOnlyByteBuffer());
  }

  private void halt(String reason) {
    LOG.error("controller node {} stops: {}", config.nodeId(), reason);
    RaftGroups.closeInBackground("controller-" + config.nodeId() + "-halt", this::close);
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    housekeeping.shutdownNow();
    if (probes != null) {
      probes.close();
    }
    RaftGroups.closeQuietly(selfClient, server, "controller node " + config.nodeId(), LOG);
  }
}
