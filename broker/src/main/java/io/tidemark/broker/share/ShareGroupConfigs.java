package io.tidemark.broker.share;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.protocol.Errors;

/**
 * The group configs (config resource type GROUP, KIP-848/KIP-932) Tidemark applies, all for share
 * groups, with Kafka's names, bounds and meaning: {@code share.auto.offset.reset},
 * {@code share.record.lock.duration.ms} (within the broker's min/max),
 * {@code share.delivery.count.limit}, {@code share.partition.max.record.locks},
 * {@code share.session.timeout.ms}, {@code share.heartbeat.interval.ms},
 * {@code share.isolation.level}. Unset keys take the broker's value. Any other key is INVALID_CONFIG
 * (Kafka's consumer and streams group configs have no meaning for groups here). Immutable.
 */
public final class ShareGroupConfigs {

  public static final String AUTO_OFFSET_RESET = "share.auto.offset.reset";
  public static final String RECORD_LOCK_DURATION_MS = "share.record.lock.duration.ms";
  public static final String DELIVERY_COUNT_LIMIT = "share.delivery.count.limit";
  public static final String PARTITION_MAX_RECORD_LOCKS = "share.partition.max.record.locks";
  public static final String SESSION_TIMEOUT_MS = "share.session.timeout.ms";
  public static final String HEARTBEAT_INTERVAL_MS = "share.heartbeat.interval.ms";
  public static final String ISOLATION_LEVEL = "share.isolation.level";

  /** One group config: its default (the broker's value) and documentation. */
  public record Definition(String name, String type, String defaultValue, String doc) {}

  /** The broker-wide values and bounds (from the {@code kafka.group.share.*} settings). */
  public record BrokerDefaults(int recordLockDurationMs, int minRecordLockDurationMs, int maxRecordLockDurationMs,
      int deliveryCountLimit, int partitionMaxRecordLocks, int sessionTimeoutMs, int heartbeatIntervalMs) {}

  private final BrokerDefaults broker;
  private final List<Definition> definitions;

  public ShareGroupConfigs(BrokerDefaults broker) {
    this.broker = broker;
    this.definitions = List.of(
        new Definition(AUTO_OFFSET_RESET, "string", "latest", "Where a share partition starts when the group has no state for it: "
            + "latest, earliest, or by_duration:<ISO-8601 duration> (the first record not older than that)."),
        new Definition(RECORD_LOCK_DURATION_MS, "int", Integer.toString(broker.recordLockDurationMs()),
            "How long a delivered record stays locked to its consumer before it is delivered again."),
        new Definition(DELIVERY_COUNT_LIMIT, "int", Integer.toString(broker.deliveryCountLimit()),
            "Deliveries of a record after which it is archived instead of delivered again."),
        new Definition(PARTITION_MAX_RECORD_LOCKS, "int", Integer.toString(broker.partitionMaxRecordLocks()),
            "Records of one share partition in flight at once."),
        new Definition(SESSION_TIMEOUT_MS, "int", Integer.toString(broker.sessionTimeoutMs()),
            "A member silent for this long leaves the group."),
        new Definition(HEARTBEAT_INTERVAL_MS, "int", Integer.toString(broker.heartbeatIntervalMs()),
            "How often members heartbeat."),
        new Definition(ISOLATION_LEVEL, "string", "read_uncommitted",
            "read_uncommitted or read_committed (the same here: Tidemark has no transactions)."));
  }

  public List<Definition> definitions() {
    return definitions;
  }

  /** The value in force for {@code name} given the group's set configs. */
  public String effective(Map<String, String> set, String name) {
    String v = set.get(name);
    if (v != null) {
      return v;
    }
    return definitions.stream().filter(d -> d.name().equals(name)).findFirst().map(Definition::defaultValue).orElse(null);
  }

  int intValue(Map<String, String> set, String name) {
    return Integer.parseInt(effective(set, name).trim());
  }

  /** Checks a whole set of group configs; throws INVALID_CONFIG naming the first bad one. */
  public void validate(Map<String, String> set) {
    for (Map.Entry<String, String> e : new LinkedHashMap<>(set).entrySet()) {
      String v = e.getValue() == null ? "" : e.getValue().trim();
      switch (e.getKey()) {
        case AUTO_OFFSET_RESET -> resetDuration(v);
        case RECORD_LOCK_DURATION_MS -> bounded(e.getKey(), v, broker.minRecordLockDurationMs(), broker.maxRecordLockDurationMs());
        case DELIVERY_COUNT_LIMIT -> bounded(e.getKey(), v, 2, 10);
        case PARTITION_MAX_RECORD_LOCKS -> bounded(e.getKey(), v, 100, 10_000);
        case SESSION_TIMEOUT_MS -> bounded(e.getKey(), v, 1000, 3_600_000);
        case HEARTBEAT_INTERVAL_MS -> bounded(e.getKey(), v, 100, 3_600_000);
        case ISOLATION_LEVEL -> {
          if (!v.equals("read_uncommitted") && !v.equals("read_committed")) {
            throw Errors.INVALID_CONFIG.exception("Invalid value " + v + " for configuration " + ISOLATION_LEVEL
                + ": String must be one of: read_committed, read_uncommitted");
          }
        }
        default -> throw Errors.INVALID_CONFIG.exception("Unknown group config name: " + e.getKey()
            + " (Tidemark applies only the share.* group configs)");
      }
    }
  }

  /**
   * The look-back of a {@code by_duration:} reset, null for latest/earliest; throws INVALID_CONFIG
   * for anything else.
   */
  static Duration resetDuration(String v) {
    if (v.equals("latest") || v.equals("earliest")) {
      return null;
    }
    if (v.startsWith("by_duration:")) {
      try {
        Duration d = Duration.parse(v.substring("by_duration:".length()));
        if (!d.isNegative()) {
          return d;
        }
      } catch (RuntimeException e) {
        // refused below
      }
    }
    throw Errors.INVALID_CONFIG.exception("Invalid value " + v + " for configuration " + AUTO_OFFSET_RESET
        + ": latest, earliest, or by_duration:<non-negative ISO-8601 duration>");
  }

  private static void bounded(String name, String v, int min, int max) {
    int n;
    try {
      n = Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw Errors.INVALID_CONFIG.exception("Invalid value " + v + " for configuration " + name + ": Not a number of type INT");
    }
    if (n < min || n > max) {
      throw Errors.INVALID_CONFIG.exception("Invalid value " + v + " for configuration " + name + ": must be between " + min
          + " and " + max);
    }
  }
}
