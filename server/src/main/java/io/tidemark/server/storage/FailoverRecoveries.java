package io.tidemark.server.storage;

import io.tidemark.metadata.client.ControllerClient;
import io.tidemark.metadata.controller.FailoverControl;
import io.tidemark.metadata.controller.MetadataReplica;
import io.tidemark.metadata.image.BrokerEntry;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.MetadataRecord;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.engine.StreamEngine;
import io.tidemark.stream.engine.StreamEngineConfig;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.ObjectStorage;
import io.tidemark.stream.wal.WalConfig;
import io.tidemark.stream.wal.WriteAheadLog;
import io.tidemark.stream.wal.WriteAheadLogs;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This broker's part in the failover of dead brokers ({@link FailoverControl}). When the metadata
 * names this node, at its epoch, as the recoverer of a dead node's recovery incarnation
 * {@code D@r}, it heartbeats for {@code D@r}, opens {@code D}'s WAL with epoch {@code r} (from
 * object storage with {@code wal.type=object}; the block WAL file {@code D} recorded under
 * {@link FailoverControl#WAL_NAMESPACE} otherwise) and runs the storage engine's own start-up
 * recovery ({@link StreamEngine#start}) as {@code D@r}: what the WAL holds above the committed ends
 * is uploaded and committed, every stream still open on {@code D} is closed. Then it reports the
 * failover done and stops heartbeating for {@code D@r}. Partitions {@code D} led already have new
 * leaders, which open them as soon as the streams are closed.
 *
 * <p>Per recovery: RUNNING → DONE, or ABANDONED once {@code D@r} is no longer current ({@code D}
 * registered again and recovers its own WAL, or this recovery was fenced and failed over to another
 * broker). A failed attempt (object storage or controller unreachable, the WAL file not there) is
 * logged and retried every {@link #RETRY_MS} while {@code D@r} is current; heartbeats continue, so
 * the recovery stays here.
 *
 * <p>Threading: the image listener only hands work over; recoveries run one at a time on one
 * thread (a recovery holds up to {@code stream.cache.size.bytes}); heartbeats on the controller
 * link's heartbeat thread (never behind storage work).
 */
final class FailoverRecoveries implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FailoverRecoveries.class);
  static final long RETRY_MS = 1000;
  /** Longest wait for one recovery attempt; the WAL holds at most the unuploaded cache of the dead node. */
  static final long ATTEMPT_TIMEOUT_MINUTES = 10;

  private final NodeRef self;
  private final ControllerClient client;
  private final MetadataReplica replica;
  private final Settings settings;
  private final ObjectStorage objects;
  private final ObjectKeys keys;
  private final ScheduledExecutorService scheduler;
  /** The incarnation's heartbeats: the controller link's own thread, never the busy storage timer. */
  private final ScheduledExecutorService heartbeatTimer;
  private final long heartbeatIntervalMs;
  private final Set<NodeRef> started = ConcurrentHashMap.newKeySet();
  private final ExecutorService worker = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "tidemark-failover-recovery");
    t.setDaemon(true);
    return t;
  });
  private final io.tidemark.metadata.image.MetadataListener listener = this::onImage;
  private volatile boolean closed;

  FailoverRecoveries(NodeRef self, ControllerClient client, MetadataReplica replica, Settings settings,
      ObjectStorage objects, ObjectKeys keys, ScheduledExecutorService scheduler, ScheduledExecutorService heartbeatTimer,
      long heartbeatIntervalMs) {
    this.self = self;
    this.client = client;
    this.replica = replica;
    this.settings = settings;
    this.objects = objects;
    this.keys = keys;
    this.scheduler = scheduler;
    this.heartbeatTimer = heartbeatTimer;
    this.heartbeatIntervalMs = heartbeatIntervalMs;
  }

  void start() {
    replica.addListener(listener);
    MetadataImage image = replica.image();
    for (BrokerEntry b : image.brokers().values()) {
      consider(image, b.nodeId());
    }
  }

  private void onImage(MetadataImage image, List<MetadataRecord> records) {
    for (MetadataRecord r : records) {
      if (r instanceof MetadataRecord.KeyValue kv && kv.namespace().equals(FailoverControl.NAMESPACE)) {
        consider(image, Integer.parseInt(kv.key()));
      }
    }
  }

  private void consider(MetadataImage image, int deadNode) {
    FailoverControl.Failover f = FailoverControl.failoverOf(image, deadNode);
    if (closed || f == null || f.done() || f.recovererId() != self.nodeId() || f.recovererEpoch() != self.nodeEpoch()) {
      return;
    }
    NodeRef incarnation = new NodeRef(deadNode, f.recoveryEpoch());
    if (current(image, incarnation) && started.add(incarnation)) {
      LOG.info("node {} recovers the WAL of failed node {} as its recovery incarnation (epoch {})", self.nodeId(),
          deadNode, incarnation.nodeEpoch());
      worker.execute(() -> run(incarnation));
    }
  }

  private static boolean current(MetadataImage image, NodeRef node) {
    BrokerEntry b = image.broker(node.nodeId());
    return b != null && b.nodeEpoch() == node.nodeEpoch() && !b.fenced();
  }

  private void run(NodeRef incarnation) {
    long began = System.nanoTime();
    ScheduledFuture<?> beat = heartbeatTimer.scheduleWithFixedDelay(() -> client.heartbeat(incarnation)
        .exceptionally(e -> null), 0, heartbeatIntervalMs, TimeUnit.MILLISECONDS);
    try {
      while (!closed) {
        if (!current(replica.image(), incarnation)) {
          LOG.warn("recovery of node {} epoch {} abandoned: that epoch is no longer current (the node registered "
              + "again, or the recovery failed over)", incarnation.nodeId(), incarnation.nodeEpoch());
          return;
        }
        try {
          recoverOnce(incarnation);
          client.completeFailover(incarnation).get(ATTEMPT_TIMEOUT_MINUTES, TimeUnit.MINUTES);
          LOG.info("failover of node {} done in {} ms: its WAL is committed and its streams closed",
              incarnation.nodeId(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began));
          return;
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        } catch (Exception e) {
          if (closed) {
            return;
          }
          LOG.warn("recovery of node {} epoch {} failed; retrying in {} ms: {}", incarnation.nodeId(),
              incarnation.nodeEpoch(), RETRY_MS, e.toString());
          Thread.sleep(RETRY_MS);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      beat.cancel(false);
    }
  }

  /** One attempt: the storage engine's start-up recovery of the dead node's WAL, as its recovery incarnation. */
  private void recoverOnce(NodeRef incarnation) throws Exception {
    Settings walSettings = walSettings(incarnation.nodeId());
    WriteAheadLog wal = WriteAheadLogs.create(walSettings, objects, incarnation.nodeId(), incarnation.nodeEpoch(),
        Clock.systemUTC(), scheduler);
    StreamEngine engine = StreamEngine.builder().node(incarnation).wal(wal).objectStorage(objects)
        .streamManager(client).objectManager(client).objectKeys(keys).config(StreamEngineConfig.from(settings))
        .scheduler(scheduler).clock(System::currentTimeMillis).build();
    try {
      engine.start().get(ATTEMPT_TIMEOUT_MINUTES, TimeUnit.MINUTES);
    } finally {
      engine.close(); // nothing is open on it: closes the WAL
    }
  }

  /**
   * The settings that open node {@code deadNode}'s WAL: its recorded location; with none recorded,
   * the object WAL when this node uses one (every node's object WAL lives in the shared store).
   */
  private Settings walSettings(int deadNode) {
    byte[] recorded = replica.image().keyValue(FailoverControl.WAL_NAMESPACE, Integer.toString(deadNode));
    String location = recorded != null ? new String(recorded, StandardCharsets.UTF_8)
        : settings.get(WalConfig.TYPE).equals("object") ? "object" : null;
    if (location == null) {
      throw new IllegalStateException("node " + deadNode + " recorded no WAL location (it ran a version without "
          + "failover); its partitions wait until it restarts");
    }
    if (location.equals("object")) {
      return settings.with(WalConfig.TYPE.name(), "object");
    }
    Path path = Path.of(location.substring("block:".length()));
    if (!Files.exists(path)) {
      // never create it: an empty WAL would "recover" nothing while the acknowledged records sit elsewhere
      throw new IllegalStateException("the block WAL " + path + " of node " + deadNode + " is not reachable from node "
          + self.nodeId() + "; attach its volume at that path (docs/operations.md, Failover)");
    }
    return settings.with(WalConfig.TYPE.name(), "block").with(WalConfig.PATH.name(), path.toString());
  }

  @Override
  public void close() {
    closed = true;
    replica.removeListener(listener);
    worker.shutdownNow();
  }
}
