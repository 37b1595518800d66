package io.tidemark.server.cluster;

import io.tidemark.broker.BrokerConfig;
import io.tidemark.broker.security.Listener;
import io.tidemark.broker.security.SecurityConfig;
import io.tidemark.metadata.client.ControllerClient;
import io.tidemark.metadata.controller.NodeLoad;
import io.tidemark.metadata.controller.NodeLoads;
import io.tidemark.metadata.controller.ErrorCode;
import io.tidemark.metadata.raft.ControllerConfig;
import io.tidemark.metadata.controller.MetadataReplica;
import io.tidemark.metadata.raft.ControllerNode;
import io.tidemark.metadata.raft.ImageFollower;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.server.config.ServerConfig;
import io.tidemark.stream.config.ConfigException;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.io.IOException;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This process's link to the controller quorum: the local {@link ControllerNode} when the process
 * has the {@code controller} role (one voter of {@code controller.voters}), the
 * {@link ControllerClient} every node uses (the storage engine's stream and object manager), the
 * node's registration (a new, higher node epoch on every start) and its periodic heartbeat.
 *
 * <p>Replacement: once the controller answers a heartbeat that this node's epoch is no longer the
 * registered one (it was fenced for missing heartbeats and failed over: a survivor recovered its WAL
 * as a recovery incarnation, its partitions have new leaders with bumped epochs), or the local image
 * shows a newer epoch of this node, the link is <em>replaced</em> for good: {@link #leaseLost} refuses
 * every acknowledgement and {@link #onReplaced} completes, once. This link never registers again; the
 * process supervisor ({@code NodeSupervisor}) closes the node without uploading and starts it again
 * in-process, which registers a new epoch with a fresh WAL epoch, exactly as a restart does.
 *
 * <p>Heartbeats go through the metadata log (every voter records them, so a new leader keeps the
 * sessions), one at a time: an attempt that gets no answer within two heartbeat intervals is sent to
 * another voter, so a paused or killed controller leader costs one attempt, not the session.
 *
 * <p>Heartbeats run on the link's own timer thread, never on the storage timer: compaction,
 * upload timers or a recovery on a shared thread must not delay them past the session timeout
 * (that fenced live brokers under load).
 *
 * <p>Owned by the storage assembly, which closes it after the engine. Thread-safe after
 * {@link #open}: the client is thread-safe, the heartbeat runs on the link's timer.
 */
public final class ControllerLink implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ControllerLink.class);
  /** The endpoint name brokers register their Kafka listener under. */
  public static final String KAFKA_ENDPOINT = "kafka";
  /** Wait between registration attempts while the quorum does not answer. */
  private static final long REGISTER_RETRY_MS = 500;
  /** Longest wait for the quorum to register this node (a quorum of voters must be up). */
  public static final long REGISTER_TIMEOUT_MINUTES = 5;

  private final ControllerConfig config;
  private final ControllerNode node;
  private final ImageFollower follower;
  private final ControllerClient client;
  private volatile NodeRef self;
  /** Start-up phase clocks ({@link System#nanoTime}) for the registration's log line. */
  private long startedNanos;
  private long quorumStartedNanos;
  private long leaderNanos;
  private ScheduledFuture<?> heartbeat;
  private ScheduledFuture<?> loadReport;
  /** How often this node reports its load to the controller leader (what the console shows for it). */
  public static final long LOAD_REPORT_MS = 2_000;
  /** Only heartbeats run here (this node's, and a recovery incarnation's through {@link #heartbeatTimer}). */
  private final ScheduledExecutorService heartbeatTimer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
      r -> {
        Thread t = new Thread(r, "tidemark-controller-heartbeat");
        t.setDaemon(true);
        return t;
      });
  /** Completed once, with the reason, when this node's epoch is replaced (see the class comment). */
  private final java.util.concurrent.CompletableFuture<String> replacedReason = new java.util.concurrent.CompletableFuture<>();
  /** {@link System#nanoTime} at which the last heartbeat that succeeded unfenced (or the registration) was sent. */
  private volatile long leaseFromNanos;
  /** Set once the controller answered that this node's epoch is no longer current (it failed over). */
  private volatile boolean replaced;
  /** The latest heartbeat sent (only the heartbeat thread writes it); the next is sent once it completed. */
  private volatile java.util.concurrent.CompletableFuture<Boolean> lastBeat =
      java.util.concurrent.CompletableFuture.completedFuture(false);

  private ControllerLink(ControllerConfig config, ControllerNode node, ImageFollower follower, ControllerClient client) {
    this.follower = follower;
    this.config = config;
    this.node = node;
    this.client = client;
  }

  /**
   * Starts the local voter (controller role), connects the client, registers this node with the
   * Kafka endpoint it advertises and starts heartbeats every {@code controller.heartbeat.interval.ms}
   * on the link's own heartbeat thread.
   * Throws {@link ConfigException} for unusable settings, {@link IllegalStateException} when the
   * quorum does not answer in time.
   */
  public static ControllerLink open(ServerConfig server, Settings settings, ObjectStorage objects, ObjectKeys keys)
      throws IOException {
    long startedNanos = System.nanoTime();
    ControllerConfig config = new ControllerConfig(withDefaults(server, settings));
    ControllerNode node = null;
    ImageFollower follower = null;
    if (server.has(ServerConfig.Role.CONTROLLER)) {
      config.nodeAddress(); // fails naming the key when this node is not a voter
      node = new ControllerNode(config, Clock.systemUTC(), objects, keys::key).start();
    } else {
      if (!settings.contains(ControllerConfig.VOTERS)) {
        throw new ConfigException(ControllerConfig.VOTERS.name(), "a node without the controller role must name the "
            + "controller quorum it follows (id@host:port,...)");
      }
      String address = config.get(ControllerConfig.FOLLOWER_ADDRESS);
      if (address.isBlank()) {
        throw new ConfigException(ControllerConfig.FOLLOWER_ADDRESS.name(), "a node without the controller role "
            + "receives the metadata log on this host:port; set it");
      }
      follower = new ImageFollower(config, address, Clock.systemUTC()).start();
    }
    ControllerLink link = new ControllerLink(config, node, follower, new ControllerClient(config));
    link.startedNanos = startedNanos;
    link.quorumStartedNanos = System.nanoTime();
    try {
      link.register(server.nodeId(), settings);
      long interval = config.heartbeatIntervalMs();
      link.heartbeat = link.heartbeatTimer.scheduleWithFixedDelay(link::beat, interval, interval, TimeUnit.MILLISECONDS);
      return link;
    } catch (RuntimeException e) {
      link.close();
      throw e;
    }
  }

  /**
   * The controller settings with this node's defaults: {@code controller.node.id} is
   * {@code node.id}, {@code controller.voters} is this node alone on 127.0.0.1:9093 and
   * {@code controller.dir} is {@code data.dir/controller}, each unless set.
   */
  static Settings withDefaults(ServerConfig server, Settings settings) {
    Settings result = settings;
    if (!settings.contains(ControllerConfig.NODE_ID)) {
      result = result.with(ControllerConfig.NODE_ID.name(), Integer.toString(server.nodeId()));
    }
    if (!settings.contains(ControllerConfig.VOTERS)) {
      result = result.with(ControllerConfig.VOTERS.name(), result.get(ControllerConfig.NODE_ID) + "@127.0.0.1:9093");
    }
    if (!settings.contains(ControllerConfig.DIR)) {
      result = result.with(ControllerConfig.DIR.name(), server.dataDir().resolve("controller").toString());
    }
    return result;
  }

  private void register(int nodeId, Settings settings) {
    String host = BrokerConfig.advertisedHost(settings);
    int port = settings.contains(BrokerConfig.ADVERTISED_PORT) && settings.get(BrokerConfig.ADVERTISED_PORT) != 0
        ? settings.get(BrokerConfig.ADVERTISED_PORT) : settings.get(BrokerConfig.LISTENER_PORT);
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(REGISTER_TIMEOUT_MINUTES);
    awaitLocalLeadership(deadline);
    leaderNanos = System.nanoTime();
    // The quorum may still be electing a leader (voters starting together, a loaded machine): the client gives up
    // after controller.client.max.attempts, so registration tries again until its own deadline. A retry after a
    // lost answer registers again, which only bumps the node epoch once more.
    while (true) {
      try {
        long sent = System.nanoTime();
        self = client.registerBroker(nodeId, endpoints(settings, host, port), "")
            .get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        leaseFromNanos = sent; // a new epoch's session starts at the leader no earlier than this send
        long now = System.nanoTime();
        LOG.info("node {} registered with the controller quorum {} at epoch {} in {} ms (local quorum member started "
            + "{} ms, leader known {} ms, registration {} ms)", nodeId, config.voters(), self.nodeEpoch(),
            ms(now - startedNanos), ms(quorumStartedNanos - startedNanos), ms(leaderNanos - quorumStartedNanos),
            ms(now - leaderNanos));
        return;
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof ErrorCode.ControllerUnavailableException) || System.nanoTime() > deadline) {
          throw new IllegalStateException("node " + nodeId + " cannot register with the controller quorum "
              + config.voters() + ": " + e.getCause().getMessage(), e.getCause());
        }
        LOG.info("the controller quorum {} is not answering yet; node {} retries registering ({})", config.voters(),
            nodeId, e.getCause().getMessage());
        sleep(REGISTER_RETRY_MS, nodeId);
      } catch (TimeoutException e) {
        throw new IllegalStateException("the controller quorum " + config.voters() + " did not register node " + nodeId
            + " within " + REGISTER_TIMEOUT_MINUTES + " min (are a majority of the voters running?)", e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while registering node " + nodeId, e);
      }
    }
  }

  /**
   * The endpoints this node registers: {@code kafka} (what other brokers and Tidemark's own clients
   * use: the inter-broker listener) and, with named {@code listeners}, each listener's advertised
   * endpoint under its name, which Metadata answers to that listener's clients.
   */
  static List<Endpoint> endpoints(Settings settings, String host, int port) {
    if (!settings.contains(SecurityConfig.LISTENERS)) {
      return List.of(new Endpoint(KAFKA_ENDPOINT, host, port));
    }
    SecurityConfig security = new SecurityConfig(settings, settings.get(BrokerConfig.LISTENER_HOST),
        settings.get(BrokerConfig.LISTENER_PORT), host, settings.get(BrokerConfig.ADVERTISED_PORT));
    List<Endpoint> out = new java.util.ArrayList<>();
    Listener inter = security.interBrokerListener();
    out.add(new Endpoint(KAFKA_ENDPOINT, inter.advertisedHost(), advertisedPort(inter)));
    for (Listener l : security.listeners()) {
      out.add(new Endpoint(l.name(), l.advertisedHost(), advertisedPort(l)));
    }
    return out;
  }

  private static int advertisedPort(Listener l) {
    return l.advertisedPort() != 0 ? l.advertisedPort() : l.port();
  }

  /** A single local voter elects itself; registering before that only burns the client's attempts. */
  private void awaitLocalLeadership(long deadline) {
    if (node == null || config.voters().size() != 1) {
      return;
    }
    while (!node.isLeader() && System.nanoTime() < deadline) {
      sleep(20, node.nodeId());
    }
  }

  private static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }

  private static void sleep(long ms, int nodeId) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while registering node " + nodeId, e);
    }
  }

  private void beat() {
    if (replaced || !lastBeat.isDone()) {
      return; // one heartbeat at a time: the outstanding one is being retried on another voter
    }
    long sent = System.nanoTime();
    io.tidemark.metadata.image.BrokerEntry registered = replica().image().broker(self.nodeId());
    if (registered != null && registered.nodeEpoch() > self.nodeEpoch()) {
      replace("the metadata image holds node " + self.nodeId() + " at epoch " + registered.nodeEpoch());
      return;
    }
    lastBeat = client.heartbeat(self);
    lastBeat.whenComplete((fenced, error) -> {
      Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null
          ? error.getCause() : error;
      if (cause instanceof io.tidemark.stream.metadata.NodeFencedException) {
        replace(cause.getMessage());
      } else if (error != null) {
        LOG.warn("heartbeat of node {} failed; retrying next interval: {}", self.nodeId(), error.toString());
      } else if (fenced) {
        LOG.warn("node {} epoch {} is fenced by the controller; it is unfenced after this heartbeat unless it "
            + "failed over meanwhile", self.nodeId(), self.nodeEpoch());
      } else if (sent - leaseFromNanos > 0) {
        leaseFromNanos = sent;
      }
    });
  }

  private synchronized void replace(String why) {
    if (replaced) {
      return;
    }
    replaced = true;
    LOG.error("node {} epoch {} was fenced and failed over to other brokers; it acknowledges no write again under "
        + "this epoch and rejoins with a new epoch: {}", self.nodeId(), self.nodeEpoch(), why);
    replacedReason.complete("node " + self.nodeId() + " epoch " + self.nodeEpoch() + " failed over: " + why);
  }

  /**
   * Completes, once, when this node's epoch is replaced (fenced and failed over): the node must stop,
   * without uploading, and start again with a new epoch. Callbacks run on the heartbeat thread or
   * the controller client's: hand long work elsewhere.
   */
  public java.util.concurrent.CompletionStage<String> onReplaced() {
    return replacedReason.minimalCompletionStage();
  }

  /**
   * Reports {@code measure}'s answer (this node's load) to the controller leader every
   * {@value #LOAD_REPORT_MS} ms from now on, on the heartbeat thread (a report is one small read-only
   * request; it never waits for the answer). A report that fails is skipped: the next one replaces it.
   */
  public synchronized void reportLoadFrom(java.util.function.Supplier<NodeLoad> measure) {
    if (loadReport != null) {
      loadReport.cancel(false);
    }
    loadReport = heartbeatTimer.scheduleWithFixedDelay(() -> reportLoad(measure), 0, LOAD_REPORT_MS,
        TimeUnit.MILLISECONDS);
  }

  private void reportLoad(java.util.function.Supplier<NodeLoad> measure) {
    if (replaced) {
      return;
    }
    try {
      client.reportLoad(self, measure.get()).whenComplete((v, error) -> {
        if (error != null) {
          LOG.debug("load report of node {} failed; the next one replaces it: {}", self.nodeId(), error.toString());
        }
      });
    } catch (RuntimeException e) {
      LOG.debug("measuring the load of node {} failed: {}", self.nodeId(), e.toString());
    }
  }

  /** The load every registered node last reported to the controller leader (see {@code NodeLoads}). */
  public java.util.concurrent.CompletableFuture<java.util.List<NodeLoads.Reported>> describeLoads() {
    return client.describeLoads();
  }

  /** The heartbeat thread (for the heartbeats of a recovery incarnation this node runs; nothing slow). */
  public ScheduledExecutorService heartbeatTimer() {
    return heartbeatTimer;
  }

  /**
   * Why this node must not acknowledge a write now, or null when it may: its epoch failed over, or
   * no heartbeat sent within the lease ({@link ControllerConfig#leaseMs}) succeeded. The controller
   * fences no earlier than a session timeout after receiving a heartbeat, so a write acknowledged
   * while the lease holds was durable in the WAL before any failover could read it; a paused node
   * resumed after its partitions moved finds its lease expired.
   */
  public String leaseLost() {
    if (replaced) {
      return "node " + self.nodeId() + " epoch " + self.nodeEpoch() + " failed over to other brokers; it rejoins with a "
          + "new epoch";
    }
    long sinceMs = (System.nanoTime() - leaseFromNanos) / 1_000_000;
    if (sinceMs >= config.leaseMs()) {
      return "node " + self.nodeId() + " has had no successful controller heartbeat for " + sinceMs
          + " ms (lease " + config.leaseMs() + " ms); its partitions may be failing over";
    }
    return null;
  }

  /** Whether the controller answered that this node's epoch is no longer current (it failed over). */
  public boolean replaced() {
    return replaced;
  }

  /** This node as registered (id and the epoch of this start). */
  public NodeRef self() {
    return self;
  }

  public ControllerClient client() {
    return client;
  }

  /**
   * This node's copy of the metadata: the local voter's replica with the controller role, the
   * non-voting listener's otherwise. Both replay exactly the committed log.
   */
  public MetadataReplica replica() {
    return node != null ? node.replica() : follower.replica();
  }

  /** The local voter, when this process has the controller role. */
  public Optional<ControllerNode> localNode() {
    return Optional.ofNullable(node);
  }

  public ControllerConfig config() {
    return config;
  }

  @Override
  public void close() {
    if (heartbeat != null) {
      heartbeat.cancel(false);
    }
    synchronized (this) {
      if (loadReport != null) {
        loadReport.cancel(false);
      }
    }
    heartbeatTimer.shutdownNow();
    try {
      client.close();
    } catch (RuntimeException e) {
      LOG.warn("closing the controller client: {}", e.toString());
    }
    if (node != null) {
      node.close();
    }
    if (follower != null) {
      follower.close(); // stays a listener of the group: a restart resumes from its own log
    }
  }
}
