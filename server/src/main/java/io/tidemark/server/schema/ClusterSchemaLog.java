package io.tidemark.server.schema;

import io.tidemark.broker.KafkaBroker;
import io.tidemark.registry.RegistryError;
import io.tidemark.registry.SchemaRegistry;
import io.tidemark.registry.cluster.WriteLeader;
import io.tidemark.registry.store.ConsumerSchemaStore;
import io.tidemark.registry.store.PartitionSchemaStore;
import io.tidemark.registry.store.SchemaStore;
import io.tidemark.server.cluster.ControllerLink;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The schema registry's place in a cluster. The registry on the broker leading {@code _schemas}
 * partition 0 is the writer: it appends through that broker's partition log (fenced by the leader
 * epoch). Every other node's registry follows the log over the Kafka protocol, replays new records
 * every {@link #FOLLOW_INTERVAL_MS} and forwards writes to the writer, whose URL each registry
 * publishes in the controller's key-value space ({@link #NAMESPACE}, key = node id). The writer
 * role follows the partition's leadership (moves, controlled shutdown): each write and read asks
 * which broker leads {@code _schemas-0} now.
 *
 * <p>Created once at start by the server; {@link #close()} stops the follower's replay timer. The
 * {@link WriteLeader} it hands out is called on request threads and reads the local metadata image.
 */
public final class ClusterSchemaLog implements AutoCloseable {
  /** Controller key-value namespace holding each node's registry base URL. */
  public static final String NAMESPACE = "registry.endpoints";
  /** How often a follower replays what the writer appended. */
  static final long FOLLOW_INTERVAL_MS = 1_000;
  private static final Logger LOG = LoggerFactory.getLogger(ClusterSchemaLog.class);
  private static final long CONTROLLER_TIMEOUT_MS = 30_000;
  private static final int OPEN_ATTEMPTS = 60;
  private static final long OPEN_RETRY_MS = 500;

  private final KafkaBroker broker;
  private final ControllerLink controller;
  private final SchemaStore store;
  private final boolean writer;
  private ScheduledExecutorService follower;

  private ClusterSchemaLog(KafkaBroker broker, ControllerLink controller, SchemaStore store, boolean writer) {
    this.broker = broker;
    this.controller = controller;
    this.store = store;
    this.writer = writer;
  }

  /**
   * Opens the log: creates {@code _schemas} here when no broker has it yet (so this node becomes the
   * writer), uses the local partition when this broker leads it, and a Kafka consumer otherwise.
   */
  public static ClusterSchemaLog open(KafkaBroker broker, ControllerLink controller, long timeoutMs) {
    // A partition just created or assigned here opens once this broker applied the change, hence the retries.
    for (int attempt = 1; ; attempt++) {
      OptionalInt leader = broker.leaderOf(PartitionSchemaStore.TOPIC, 0);
      if (leader.isPresent() && leader.getAsInt() != broker.nodeId()) {
        LOG.info("{}-0 is led by node {}: this registry follows it and forwards writes there",
            PartitionSchemaStore.TOPIC, leader.getAsInt());
        return new ClusterSchemaLog(broker, controller, new FollowingStore(broker, timeoutMs), false);
      }
      try {
        broker.internalPartition(PartitionSchemaStore.TOPIC).get(1, TimeUnit.MINUTES);
        return new ClusterSchemaLog(broker, controller, new FollowingStore(broker, timeoutMs), true);
      } catch (ExecutionException e) {
        if (attempt >= OPEN_ATTEMPTS) {
          throw new IllegalStateException("cannot open the registry's topic " + PartitionSchemaStore.TOPIC + ": "
              + e.getCause().getMessage(), e.getCause());
        }
        LOG.info("{} not open yet ({}); retrying", PartitionSchemaStore.TOPIC, e.getCause().getMessage());
        try {
          Thread.sleep(OPEN_RETRY_MS);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while opening " + PartitionSchemaStore.TOPIC, ie);
        }
      } catch (TimeoutException e) {
        throw new IllegalStateException("opening the registry's topic " + PartitionSchemaStore.TOPIC + " timed out", e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while opening " + PartitionSchemaStore.TOPIC, e);
      }
    }
  }

  /**
   * The schema log as this node reaches it now: the local partition while this broker leads
   * {@code _schemas-0}, a Kafka consumer of it otherwise. Follows moves of the partition: the
   * registry replays from its applied offset before every write, so a new writer first applies what
   * the old one appended (ids stay dense). Thread-safe.
   */
  private static final class FollowingStore implements SchemaStore {
    private static final org.apache.kafka.common.TopicPartition PARTITION =
        new org.apache.kafka.common.TopicPartition(PartitionSchemaStore.TOPIC, 0);
    private final KafkaBroker broker;
    private final long timeoutMs;
    private final ConsumerSchemaStore remote;
    /** The store over the partition log open here, with that log (a reopened partition is a new log). */
    private record Local(io.tidemark.broker.partition.PartitionLog log, PartitionSchemaStore store) {}

    private volatile Local local;

    FollowingStore(KafkaBroker broker, long timeoutMs) {
      this.broker = broker;
      this.timeoutMs = timeoutMs;
      this.remote = new ConsumerSchemaStore(broker.bootstrapServers(), broker.internalClientConfigs(), Duration.ofMillis(timeoutMs));
    }

    private SchemaStore current() {
      Optional<io.tidemark.broker.partition.PartitionLog> log = broker.partitionLog(PARTITION);
      if (log.isEmpty()) {
        return remote;
      }
      Local l = local;
      if (l == null || l.log() != log.get()) {
        l = new Local(log.get(), new PartitionSchemaStore(log.get(), Time.SYSTEM, timeoutMs));
        local = l;
      }
      return l.store();
    }

    @Override
    public long append(byte[] key, byte[] value) {
      SchemaStore store = current();
      if (store == remote) {
        throw RegistryError.NOT_LEADER.exception("this node no longer leads the schema log; retry the request");
      }
      return store.append(key, value);
    }

    @Override
    public java.util.List<io.tidemark.registry.store.StoredRecord> read(long fromOffset, int maxRecords) {
      return current().read(fromOffset, maxRecords);
    }

    @Override
    public long endOffset() {
      return current().endOffset();
    }

    @Override
    public void close() {
      remote.close();
    }
  }

  /** The registry's log: the partition itself on the writer, a consumer of it elsewhere. */
  public SchemaStore store() {
    return store;
  }

  public boolean writer() {
    return writer;
  }

  /**
   * Where writes go from this node, as of each call: itself while this broker leads
   * {@code _schemas-0} (and has it open), the leading broker's registry otherwise.
   */
  public WriteLeader writeLeader() {
    return () -> {
      OptionalInt leader = broker.leaderOf(PartitionSchemaStore.TOPIC, 0);
      if (leader.isPresent() && leader.getAsInt() == broker.nodeId()
          && broker.partitionLog(new org.apache.kafka.common.TopicPartition(PartitionSchemaStore.TOPIC, 0)).isPresent()) {
        return Optional.empty();
      }
      if (leader.isEmpty()) {
        throw RegistryError.NOT_LEADER.exception("no broker leads " + PartitionSchemaStore.TOPIC + "-0 right now");
      }
      byte[] url = endpointOf(leader.getAsInt());
      if (url == null) {
        throw RegistryError.NOT_LEADER.exception("node " + leader.getAsInt() + " leads " + PartitionSchemaStore.TOPIC
            + "-0 but runs no schema registry that published its address");
      }
      return Optional.of(URI.create(new String(url, StandardCharsets.UTF_8)));
    };
  }

  private byte[] endpointOf(int nodeId) {
    return controller.replica().image().keyValue(NAMESPACE, Integer.toString(nodeId));
  }

  /**
   * Publishes this node's registry URL (so followers can forward to it) and, on a follower, starts
   * replaying the writer's records periodically.
   */
  public void serving(URI url, SchemaRegistry registry) {
    try {
      controller.client().putKeyValue(NAMESPACE, Integer.toString(broker.nodeId()),
          url.toString().getBytes(StandardCharsets.UTF_8), false).get(CONTROLLER_TIMEOUT_MS, TimeUnit.MILLISECONDS);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("cannot publish the schema registry address " + url + " to the controller: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted publishing the schema registry address", e);
    }
    {
      // every node replays: the writer's role moves with _schemas-0, and replaying on the writer reads nothing new
      follower = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "schema-registry-follower");
        t.setDaemon(true);
        return t;
      });
      follower.scheduleWithFixedDelay(() -> {
        try {
          registry.replayNewRecords();
        } catch (RuntimeException e) {
          LOG.debug("schema log replay failed; the next round retries: {}", e.toString());
        }
      }, FOLLOW_INTERVAL_MS, FOLLOW_INTERVAL_MS, TimeUnit.MILLISECONDS);
    }
  }

  @Override
  public void close() {
    if (follower != null) {
      follower.shutdownNow();
    }
    store.close();
  }
}
