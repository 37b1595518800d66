package io.tidemark.metadata.raft;

import io.tidemark.metadata.controller.ControllerLimits;
import io.tidemark.stream.config.ConfigException;
import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Settings of a controller node and of the clients that talk to the controller quorum, declared
 * once in {@link #KEYS}. Immutable; read through {@link Settings}.
 */
public final class ControllerConfig {

  public static final ConfigKey<Integer> NODE_ID = ConfigKey.integer("controller.node.id", 1,
      "This node's id among the controller voters.").validate(ConfigKey.between(0, Integer.MAX_VALUE));
  public static final ConfigKey<String> VOTERS = ConfigKey.string("controller.voters", "1@127.0.0.1:9093",
      "The controller voters as id@host:port, comma separated (one voter: the embedded default; three: HA).")
      .validate(v -> {
        try {
          parseVoters(v);
          return null;
        } catch (IllegalArgumentException e) {
          return e.getMessage();
        }
      });
  public static final ConfigKey<String> DIR = ConfigKey.string("controller.dir", "./data/controller",
      "Directory of the Raft log and metadata snapshots.");
  public static final ConfigKey<Long> SESSION_TIMEOUT_MS = ConfigKey.longKey("controller.session.timeout.ms", 3000,
      "A broker that sends no heartbeat for this long is fenced and fails over: a live broker recovers its WAL and "
          + "its partitions move to live brokers. A broker stops acknowledging writes once no heartbeat succeeded "
          + "for this timeout minus controller.heartbeat.interval.ms (its lease), so a paused broker cannot "
          + "acknowledge after its partitions moved. See docs/operations.md (Failover) for the choice.")
      .validate(ConfigKey.between(100L, 3_600_000L));
  public static final ConfigKey<Long> HEARTBEAT_INTERVAL_MS = ConfigKey.longKey("controller.heartbeat.interval.ms",
      500, "How often a broker heartbeats to the controller (at most a third of controller.session.timeout.ms is used).")
      .validate(ConfigKey.between(10L, 600_000L));
  public static final ConfigKey<Long> SNAPSHOT_INTERVAL_ENTRIES = ConfigKey.longKey(
      "controller.snapshot.interval.entries", 20_000,
      "A metadata snapshot is written after this many log entries; the log before it is purged.")
      .validate(ConfigKey.between(1L, Long.MAX_VALUE));
  public static final ConfigKey<Long> OBJECT_DELETE_DELAY_MS = ConfigKey.longKey("controller.object.delete.delay.ms",
      60_000, "An object marked for deletion is physically deleted after this delay (readers may still use it).")
      .validate(ConfigKey.between(0L, Long.MAX_VALUE));
  public static final ConfigKey<Integer> OBJECT_DELETE_BATCH_SIZE = ConfigKey.integer(
      "controller.object.delete.batch.size", 1000, "Objects deleted by the leader in one storage request.")
      .validate(ConfigKey.between(1, 100_000));
  public static final ConfigKey<Long> HOUSEKEEPING_INTERVAL_MS = ConfigKey.longKey(
      "controller.housekeeping.interval.ms", 250,
      "How often the leader expires prepared objects, fences silent brokers and deletes marked objects.")
      .validate(ConfigKey.between(10L, 600_000L));
  public static final ConfigKey<Boolean> SESSION_PROBE = ConfigKey.bool("controller.session.probe", true,
      "Fast detection of a broker whose process is gone: when no heartbeat of a broker arrived for two "
          + "controller.heartbeat.interval.ms, the leader connects to the broker's first listener, and if that is refused "
          + "(and it accepted a connection earlier at the same broker epoch) fences it at once instead of after "
          + "controller.session.timeout.ms. A live broker's listening socket accepts connections even when the process is "
          + "starved or paused, so only a process that is gone (crashed, killed) is fenced early; a hung or unreachable "
          + "one still waits for the session timeout. Off: only the session timeout fences.");
  public static final ConfigKey<Integer> PREPARE_MAX_COUNT = ConfigKey.integer("controller.prepare.max.count",
      10_000, "Most object ids one prepare request may reserve.").validate(ConfigKey.between(1, 1_000_000));
  public static final ConfigKey<Long> PREPARE_MAX_TTL_MS = ConfigKey.longKey("controller.prepare.max.ttl.ms",
      86_400_000L, "Longest time-to-live of a prepared object id.").validate(ConfigKey.between(1L, Long.MAX_VALUE));
  public static final ConfigKey<Integer> PRODUCER_ID_BLOCK_SIZE = ConfigKey.integer(
      "controller.producer.id.block.size", 1000, "Producer ids handed to a broker at a time.")
      .validate(ConfigKey.between(1, 1_000_000));
  public static final ConfigKey<Integer> COMMIT_MAX_OBJECTS = ConfigKey.integer("controller.commit.max.objects",
      10_000, "Most objects one commit may write or replace.").validate(ConfigKey.between(1, 1_000_000));
  public static final ConfigKey<Integer> COMMIT_MAX_RANGES = ConfigKey.integer("controller.commit.max.ranges", 20_000,
      "Most stream ranges one stream-set object may hold.").validate(ConfigKey.between(1, 1_000_000));
  public static final ConfigKey<Long> ELECTION_TIMEOUT_MS = ConfigKey.longKey("controller.election.timeout.ms", 1000,
      "Minimum Raft election timeout (the maximum is twice this).").validate(ConfigKey.between(50L, 60_000L));
  public static final ConfigKey<Long> REQUEST_TIMEOUT_MS = ConfigKey.longKey("controller.request.timeout.ms", 3000,
      "Timeout of one attempt of a client request to the controller.").validate(ConfigKey.between(10L, 600_000L));
  public static final ConfigKey<Integer> CLIENT_MAX_ATTEMPTS = ConfigKey.integer("controller.client.max.attempts", 20,
      "Attempts of a client request (leader changes, timeouts) before it fails as unavailable.")
      .validate(ConfigKey.between(1, 1000));
  public static final ConfigKey<Long> CLIENT_RETRY_BACKOFF_MS = ConfigKey.longKey("controller.client.retry.backoff.ms",
      100, "Wait between attempts of a client request.").validate(ConfigKey.between(0L, 60_000L));
  public static final ConfigKey<Integer> MAX_OFFSET_WAITERS = ConfigKey.integer("controller.max.offset.waiters",
      10_000, "Callers that may wait at once for the local image to reach an offset.")
      .validate(ConfigKey.between(1, 1_000_000));

  public static final ConfigKey<String> FOLLOWER_ADDRESS = ConfigKey.string("controller.follower.address", "",
      "host:port on which a node without the controller role receives the committed metadata log as a non-voting "
          + "Ratis listener (its broker's metadata image). Required on such nodes; keep it stable across restarts.");

  public static final ConfigKey<String> LISTENER_HOST = ConfigKey.string("controller.listener.host", "",
      "Address the Raft server of this node binds. Empty (the default) binds the host of this node's own entry in "
          + "controller.voters (or controller.follower.address), so the embedded default 127.0.0.1:9093 answers this "
          + "machine only; set 0.0.0.0 where that host name does not resolve to a local interface (containers, NAT).");

  /** Every key of this component, for validation and generated docs. */
  public static final List<ConfigKey<?>> KEYS = List.of(NODE_ID, VOTERS, DIR, SESSION_TIMEOUT_MS, HEARTBEAT_INTERVAL_MS,
      SESSION_PROBE, SNAPSHOT_INTERVAL_ENTRIES, OBJECT_DELETE_DELAY_MS, OBJECT_DELETE_BATCH_SIZE, HOUSEKEEPING_INTERVAL_MS,
      PREPARE_MAX_COUNT, PREPARE_MAX_TTL_MS, PRODUCER_ID_BLOCK_SIZE, COMMIT_MAX_OBJECTS, COMMIT_MAX_RANGES,
      ELECTION_TIMEOUT_MS, REQUEST_TIMEOUT_MS,
      CLIENT_MAX_ATTEMPTS, CLIENT_RETRY_BACKOFF_MS, MAX_OFFSET_WAITERS, FOLLOWER_ADDRESS, LISTENER_HOST);

  private final Settings settings;
  private final Map<Integer, String> voters;

  /** Reads and validates every key at once; throws {@link ConfigException} naming the first bad one. */
  public ControllerConfig(Settings settings) {
    for (ConfigKey<?> key : KEYS) {
      settings.get(key);
    }
    this.settings = settings;
    this.voters = parseVoters(settings.get(VOTERS));
  }

  /** The voters by node id, in the order given ({@code host:port}). */
  public Map<Integer, String> voters() {
    return voters;
  }

  /** This node's voter address; fails when this node is not a voter. */
  public String nodeAddress() {
    String address = voters.get(nodeId());
    if (address == null) {
      throw new ConfigException(NODE_ID.name(), "node " + nodeId() + " is not among " + VOTERS.name() + " "
          + settings.get(VOTERS));
    }
    return address;
  }

  public int nodeId() {
    return settings.get(NODE_ID);
  }

  public Path dir() {
    return Path.of(settings.get(DIR));
  }

  public <T> T get(ConfigKey<T> key) {
    return settings.get(key);
  }

  /** The heartbeat interval in use: the configured one, at most a third of the session timeout. */
  public long heartbeatIntervalMs() {
    return Math.min(get(HEARTBEAT_INTERVAL_MS), Math.max(1, get(SESSION_TIMEOUT_MS) / 3));
  }

  /**
   * How long one heartbeat attempt waits for the controller before it is sent to another voter: two
   * heartbeat intervals. A paused or dead leader costs a broker one such wait, never a whole session
   * timeout (the general {@code controller.request.timeout.ms} is for requests that may take long).
   */
  public long heartbeatAttemptTimeoutMs() {
    return 2 * heartbeatIntervalMs();
  }

  /**
   * The least time a newly elected leader gives each broker to reach it before fencing it: one
   * heartbeat attempt that timed out on the old leader plus one interval. At most a session timeout
   * (the interval is at most a third of it).
   */
  public long leaderGraceMs() {
    return heartbeatAttemptTimeoutMs() + heartbeatIntervalMs();
  }

  /**
   * How long after sending its last successful heartbeat a broker may still acknowledge writes: the
   * session timeout minus one heartbeat interval. The controller fences no earlier than a session
   * timeout after it received that heartbeat, so every write a broker acknowledges was durable in its
   * WAL before it could be fenced, hence before a failover reads that WAL.
   */
  public long leaseMs() {
    return get(SESSION_TIMEOUT_MS) - heartbeatIntervalMs();
  }

  public ControllerLimits limits() {
    return new ControllerLimits(get(PREPARE_MAX_COUNT), get(PREPARE_MAX_TTL_MS), get(PRODUCER_ID_BLOCK_SIZE),
        get(COMMIT_MAX_OBJECTS), get(COMMIT_MAX_RANGES));
  }

  public Settings settings() {
    return settings;
  }

  /** Parses {@code 1@host:port,2@host:port}; throws {@link IllegalArgumentException} naming the bad entry. */
  public static Map<Integer, String> parseVoters(String spec) {
    Map<Integer, String> out = new LinkedHashMap<>();
    List<String> bad = new ArrayList<>();
    for (String part : spec.split(",")) {
      String p = part.trim();
      int at = p.indexOf('@');
      int colon = p.lastIndexOf(':');
      try {
        if (at <= 0 || colon < at + 2) {
          throw new IllegalArgumentException();
        }
        int id = Integer.parseInt(p.substring(0, at));
        int port = Integer.parseInt(p.substring(colon + 1));
        if (id < 0 || port <= 0 || port > 65535 || out.put(id, p.substring(at + 1)) != null) {
          throw new IllegalArgumentException();
        }
      } catch (IllegalArgumentException e) {
        bad.add(p);
      }
    }
    if (!bad.isEmpty() || out.isEmpty()) {
      throw new IllegalArgumentException("voters must be id@host:port with distinct ids, comma separated; bad: " + bad);
    }
    return out;
  }
}
