package io.tidemark.broker.admin;

import io.tidemark.broker.BrokerConfig;
import io.tidemark.broker.topic.TopicConfigs;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigSource;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigType;

/**
 * A broker's configuration as DescribeConfigs reports it: under Kafka's names for every Kafka
 * broker config that means something here (with the Tidemark key it comes from as a synonym, and
 * STATIC_BROKER_CONFIG when that key was set, DEFAULT_CONFIG otherwise), the broker-level topic
 * defaults Kafka lists ({@code log.retention.ms}, {@code compression.type}, ...) with Tidemark's
 * values, then Tidemark's own keys that have no Kafka counterpart. Every entry is read-only:
 * broker settings change with the configuration file and a restart. Immutable.
 */
final class BrokerConfigView {

  /** One described broker config; {@code synonym} is the Tidemark key it is read from (null for a topic default). */
  record Entry(String name, String value, ConfigSource source, ConfigType type, String synonym) {}

  /** Kafka broker config → the Tidemark key that sets it, with Kafka's type. */
  private record Mapped(String kafkaName, String tidemarkKey, ConfigType type) {}

  private static final List<Mapped> MAPPED = List.of(
      new Mapped("node.id", BrokerConfig.NODE_ID.name(), ConfigType.INT),
      new Mapped("broker.id", BrokerConfig.NODE_ID.name(), ConfigType.INT),
      new Mapped("message.max.bytes", BrokerConfig.MAX_MESSAGE_BYTES.name(), ConfigType.INT),
      new Mapped("auto.create.topics.enable", BrokerConfig.AUTO_CREATE_TOPICS.name(), ConfigType.BOOLEAN),
      new Mapped("num.partitions", BrokerConfig.DEFAULT_PARTITIONS.name(), ConfigType.INT),
      new Mapped("offsets.topic.num.partitions", BrokerConfig.OFFSETS_TOPIC_PARTITIONS.name(), ConfigType.INT),
      new Mapped("socket.request.max.bytes", BrokerConfig.MAX_REQUEST_BYTES.name(), ConfigType.INT),
      new Mapped("log.retention.check.interval.ms", BrokerConfig.RETENTION_CHECK_INTERVAL_MS.name(), ConfigType.LONG),
      new Mapped("log.dirs", BrokerConfig.DATA_DIR.name(), ConfigType.STRING),
      new Mapped("group.initial.rebalance.delay.ms", BrokerConfig.GROUP_INITIAL_REBALANCE_DELAY_MS.name(), ConfigType.INT),
      new Mapped("group.min.session.timeout.ms", BrokerConfig.GROUP_MIN_SESSION_TIMEOUT_MS.name(), ConfigType.INT),
      new Mapped("group.max.session.timeout.ms", BrokerConfig.GROUP_MAX_SESSION_TIMEOUT_MS.name(), ConfigType.INT),
      new Mapped("group.max.size", BrokerConfig.GROUP_MAX_SIZE.name(), ConfigType.INT),
      new Mapped("group.consumer.session.timeout.ms", BrokerConfig.GROUP_CONSUMER_SESSION_TIMEOUT_MS.name(), ConfigType.INT),
      new Mapped("group.consumer.heartbeat.interval.ms", BrokerConfig.GROUP_CONSUMER_HEARTBEAT_INTERVAL_MS.name(), ConfigType.INT),
      new Mapped("group.share.record.lock.duration.ms", BrokerConfig.SHARE_RECORD_LOCK_DURATION_MS.name(), ConfigType.INT),
      new Mapped("group.share.min.record.lock.duration.ms", BrokerConfig.SHARE_MIN_RECORD_LOCK_DURATION_MS.name(), ConfigType.INT),
      new Mapped("group.share.max.record.lock.duration.ms", BrokerConfig.SHARE_MAX_RECORD_LOCK_DURATION_MS.name(), ConfigType.INT),
      new Mapped("group.share.delivery.count.limit", BrokerConfig.SHARE_DELIVERY_COUNT_LIMIT.name(), ConfigType.INT),
      new Mapped("group.share.partition.max.record.locks", BrokerConfig.SHARE_PARTITION_MAX_RECORD_LOCKS.name(), ConfigType.INT),
      new Mapped("group.share.session.timeout.ms", BrokerConfig.SHARE_SESSION_TIMEOUT_MS.name(), ConfigType.INT),
      new Mapped("group.share.heartbeat.interval.ms", BrokerConfig.SHARE_HEARTBEAT_INTERVAL_MS.name(), ConfigType.INT),
      new Mapped("group.share.max.size", BrokerConfig.SHARE_MAX_SIZE.name(), ConfigType.INT),
      new Mapped("group.share.max.share.sessions", BrokerConfig.SHARE_MAX_SESSIONS.name(), ConfigType.INT),
      new Mapped("share.coordinator.state.topic.num.partitions", BrokerConfig.SHARE_STATE_TOPIC_PARTITIONS.name(), ConfigType.INT));

  /** Kafka's broker-level default of a topic config → the topic config it defaults. */
  private static final Map<String, String> TOPIC_DEFAULTS = Map.of("log.retention.ms", TopicConfigs.RETENTION_MS,
      "log.retention.bytes", TopicConfigs.RETENTION_BYTES, "compression.type", TopicConfigs.COMPRESSION_TYPE,
      "log.message.timestamp.type", TopicConfigs.TIMESTAMP_TYPE, "log.cleanup.policy", TopicConfigs.CLEANUP_POLICY,
      "compression.gzip.level", "compression.gzip.level", "compression.lz4.level", "compression.lz4.level",
      "compression.zstd.level", "compression.zstd.level");

  private static final long HOUR_MS = 3_600_000;

  private final List<Entry> entries = new ArrayList<>();
  private final Set<String> explicitKeys;

  BrokerConfigView(Map<String, String> values, Set<String> explicitKeys, TopicConfigs topics) {
    this.explicitKeys = Set.copyOf(explicitKeys);
    Set<String> covered = new HashSet<>();
    for (Mapped m : MAPPED) {
      covered.add(m.tidemarkKey());
      entries.add(new Entry(m.kafkaName(), values.get(m.tidemarkKey()), source(explicitKeys, m.tidemarkKey()), m.type(), m.tidemarkKey()));
    }
    TOPIC_DEFAULTS.entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> {
      TopicConfigs.Definition d = topics.definition(e.getValue());
      if (e.getKey().equals("log.retention.ms")) {
        // As Kafka: log.retention.ms has no default of its own; the week comes from its synonym log.retention.hours.
        entries.add(new Entry(e.getKey(), null, ConfigSource.DEFAULT_CONFIG, ConfigType.LONG, null));
        entries.add(new Entry("log.retention.hours", Long.toString(Long.parseLong(d.defaultValue()) / HOUR_MS), ConfigSource.DEFAULT_CONFIG,
            ConfigType.INT, null));
      } else {
        entries.add(new Entry(e.getKey(), d.defaultValue(), ConfigSource.DEFAULT_CONFIG, type(d.type()), null));
      }
    });
    values.forEach((key, value) -> {
      if (!covered.contains(key)) {
        entries.add(new Entry(key, value, source(explicitKeys, key), ConfigType.STRING, key));
      }
    });
  }

  private static ConfigSource source(Set<String> explicitKeys, String key) {
    return explicitKeys.contains(key) ? ConfigSource.STATIC_BROKER_CONFIG : ConfigSource.DEFAULT_CONFIG;
  }

  /** STATIC_BROKER_CONFIG when Tidemark setting {@code key} was set, DEFAULT_CONFIG otherwise (or for null). */
  ConfigSource source(String key) {
    return key != null && explicitKeys.contains(key) ? ConfigSource.STATIC_BROKER_CONFIG : ConfigSource.DEFAULT_CONFIG;
  }

  static ConfigType type(String topicConfigType) {
    return switch (topicConfigType) {
      case "long" -> ConfigType.LONG;
      case "int" -> ConfigType.INT;
      case "list" -> ConfigType.LIST;
      case "boolean" -> ConfigType.BOOLEAN;
      case "double" -> ConfigType.DOUBLE;
      case "password" -> ConfigType.PASSWORD;
      default -> ConfigType.STRING;
    };
  }

  List<Entry> entries() {
    return entries;
  }
}
