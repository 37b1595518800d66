package io.tidemark.broker.admin;

import io.tidemark.broker.cluster.ResourceConfigStore;
import io.tidemark.broker.topic.TopicConfigs;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigSource;

/**
 * Dynamic broker configs (Kafka's {@code kafka-configs --alter --entity-type brokers}, with
 * {@code --entity-name <id>} or {@code --entity-default}): the broker-level defaults of topic configs
 * that Kafka lets change at run time ({@code log.retention.ms}, {@code log.cleanup.policy},
 * {@code log.cleaner.*.ms}, {@code message.max.bytes}, {@code compression.type},
 * {@code max.decompressed.message.bytes}...), each mapped to the topic config it defaults. Values
 * live in the cluster's {@link ResourceConfigStore} (the controller's config records of resource
 * type BROKER, named by a broker id or {@code ""} for the cluster default), so they reach every
 * broker and survive restarts. Precedence, as in Kafka: a topic's own value, then this broker's
 * dynamic value, then the cluster-wide dynamic default, then the declared default.
 *
 * <p>Keys Kafka can change at run time that mean nothing on streams (thread pools, replica
 * fetchers, remote storage, SSL stores), or that are not built here yet (connection limits, the
 * log cleaner's own buffers), are refused with INVALID_REQUEST naming them, as are Kafka's
 * read-only keys. Keys with no effect on streams that Kafka accepts for topics too
 * ({@code log.segment.bytes}, {@code min.insync.replicas}...) are stored and described, as their
 * topic configs are.
 *
 * <p>Threading: {@link #refresh} may run on any thread (store listeners, the constructor); it is
 * serialized by this object's monitor and publishes immutable snapshots through volatile fields, so
 * readers on request threads never lock.
 */
public final class DynamicBrokerConfigs {

  /** Kafka broker config name → the topic config it is the default of. */
  static final Map<String, String> TOPIC_DEFAULTS = topicDefaults();

  /** Where a dynamic value comes from. */
  public record Value(String value, ConfigSource source) {}

  private final ResourceConfigStore store;
  private final TopicConfigs topics;
  private final String nodeName;
  private final List<Runnable> appliers = new ArrayList<>();
  /** Kafka name → this broker's value and its source (per-broker or cluster default); only keys that are set. */
  private volatile Map<String, Value> effective = Map.of();

  public DynamicBrokerConfigs(ResourceConfigStore store, TopicConfigs topics, int nodeId) {
    this.store = store;
    this.topics = topics;
    this.nodeName = Integer.toString(nodeId);
    store.onChange(this::refresh);
    refresh();
  }

  private static Map<String, String> topicDefaults() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("log.retention.ms", TopicConfigs.RETENTION_MS);
    m.put("log.retention.bytes", TopicConfigs.RETENTION_BYTES);
    m.put("message.max.bytes", TopicConfigs.MAX_MESSAGE_BYTES);
    m.put("log.message.timestamp.type", TopicConfigs.TIMESTAMP_TYPE);
    m.put("log.cleanup.policy", TopicConfigs.CLEANUP_POLICY);
    m.put("log.cleaner.delete.retention.ms", TopicConfigs.DELETE_RETENTION_MS);
    m.put("log.cleaner.min.compaction.lag.ms", TopicConfigs.MIN_COMPACTION_LAG_MS);
    m.put("log.cleaner.max.compaction.lag.ms", TopicConfigs.MAX_COMPACTION_LAG_MS);
    m.put("log.cleaner.min.cleanable.ratio", TopicConfigs.MIN_CLEANABLE_DIRTY_RATIO);
    m.put("compression.type", TopicConfigs.COMPRESSION_TYPE);
    m.put("compression.gzip.level", "compression.gzip.level");
    m.put("compression.lz4.level", "compression.lz4.level");
    m.put("compression.zstd.level", "compression.zstd.level");
    m.put("max.decompressed.message.bytes", TopicConfigs.MAX_DECOMPRESSED_MESSAGE_BYTES);
    // accepted for compatibility, as their topic configs are: stored and described, no effect on streams
    m.put("log.segment.bytes", "segment.bytes");
    m.put("log.roll.ms", "segment.ms");
    m.put("log.roll.jitter.ms", "segment.jitter.ms");
    m.put("log.index.size.max.bytes", "segment.index.bytes");
    m.put("log.index.interval.bytes", "index.interval.bytes");
    m.put("log.flush.interval.messages", "flush.messages");
    m.put("log.flush.interval.ms", "flush.ms");
    m.put("log.segment.delete.delay.ms", "file.delete.delay.ms");
    m.put("log.preallocate", "preallocate");
    m.put("min.insync.replicas", "min.insync.replicas");
    m.put("unclean.leader.election.enable", "unclean.leader.election.enable");
    m.put("log.message.timestamp.before.max.ms", "message.timestamp.before.max.ms");
    m.put("log.message.timestamp.after.max.ms", "message.timestamp.after.max.ms");
    m.put("log.local.retention.ms", "local.retention.ms");
    m.put("log.local.retention.bytes", "local.retention.bytes");
    return Collections.unmodifiableMap(m);
  }

  /** Runs {@code applier} after every change of the effective values (the broker re-applies open partitions' settings). */
  public synchronized void onApplied(Runnable applier) {
    appliers.add(applier);
  }

  /** Reads the store again and applies what changed for this broker. */
  public void refresh() {
    List<Runnable> run;
    synchronized (this) {
      Map<String, Map<String, String>> all = store.configs(ConfigResource.Type.BROKER.id());
      Map<String, Value> next = new LinkedHashMap<>();
      all.getOrDefault("", Map.of()).forEach((k, v) -> next.put(k, new Value(v, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)));
      all.getOrDefault(nodeName, Map.of()).forEach((k, v) -> next.put(k, new Value(v, ConfigSource.DYNAMIC_BROKER_CONFIG)));
      if (next.equals(effective)) {
        return;
      }
      Map<String, String> defaults = new HashMap<>();
      next.forEach((k, v) -> {
        String topicKey = TOPIC_DEFAULTS.get(k);
        if (topicKey != null && topics.check(topicKey, v.value()) == null) {
          defaults.put(topicKey, v.value().trim());
        }
      });
      topics.brokerDefaults(defaults);
      effective = Collections.unmodifiableMap(next);
      run = List.copyOf(appliers);
    }
    run.forEach(Runnable::run);
  }

  /** This broker's dynamic value of a Kafka broker config, or null when none is set. */
  public Value value(String kafkaName) {
    return effective.get(kafkaName);
  }

  /** The dynamic values of {@code resourceName} ("" or a broker id) as stored, whatever this broker applies. */
  public Map<String, String> stored(String resourceName) {
    return store.configs(ConfigResource.Type.BROKER.id()).getOrDefault(resourceName, Map.of());
  }

  /** The Kafka broker config whose dynamic value defaults topic config {@code topicKey}, or null. */
  public static String brokerNameOf(String topicKey) {
    for (Map.Entry<String, String> e : TOPIC_DEFAULTS.entrySet()) {
      if (e.getValue().equals(topicKey)) {
        return e.getKey();
      }
    }
    return null;
  }

  /** Whether Kafka name {@code key} can be changed here at run time. */
  public static boolean dynamic(String key) {
    return TOPIC_DEFAULTS.containsKey(key);
  }

  /** The declared type of a dynamic key ("long", "int", "list", ...), as its topic config declares it. */
  String type(String kafkaName) {
    TopicConfigs.Definition d = topics.definition(TOPIC_DEFAULTS.get(kafkaName));
    return d == null ? "string" : d.type();
  }

  /** The declared (non-dynamic) default of a dynamic key. */
  String declaredDefault(String kafkaName) {
    TopicConfigs.Definition d = topics.definition(TOPIC_DEFAULTS.get(kafkaName));
    return d == null ? null : d.defaultValue();
  }

  /**
   * Replaces the stored values of one broker resource ({@code ""} or a broker id) by
   * {@code next}: validates every key and value first (INVALID_REQUEST for a key that cannot change
   * at run time here or a bad value, as Kafka answers both; nothing is written then), and with
   * {@code validateOnly} stops there.
   */
  public CompletableFuture<Void> replace(String resourceName, Map<String, String> next, boolean validateOnly) {
    if (!resourceName.isEmpty() && !resourceName.matches("\\d{1,9}")) {
      return CompletableFuture.failedFuture(new InvalidRequestException("Invalid broker name " + resourceName));
    }
    Map<String, String> current = stored(resourceName);
    Set<String> refused = new TreeSet<>();
    for (Map.Entry<String, String> e : next.entrySet()) {
      if (!dynamic(e.getKey()) && !e.getValue().equals(current.get(e.getKey()))) {
        refused.add(e.getKey());
      }
    }
    if (!refused.isEmpty()) {
      return CompletableFuture.failedFuture(new InvalidRequestException("Cannot update these configs dynamically: " + refused
          + " (Tidemark changes at run time only the broker-level topic defaults listed in docs/operations.md; the rest is "
          + "set in the configuration file)"));
    }
    for (Map.Entry<String, String> e : next.entrySet()) {
      String reason = topics.check(TOPIC_DEFAULTS.get(e.getKey()), e.getValue());
      if (reason != null) {
        // INVALID_REQUEST, as Kafka answers a bad broker config value (a topic's gets INVALID_CONFIG)
        return CompletableFuture.failedFuture(new InvalidRequestException("Invalid value " + e.getValue() + " for configuration "
            + e.getKey() + ": " + reason));
      }
    }
    if (validateOnly) {
      return CompletableFuture.completedFuture(null);
    }
    List<ResourceConfigStore.Change> changes = new ArrayList<>();
    byte type = ConfigResource.Type.BROKER.id();
    next.forEach((k, v) -> {
      if (!v.equals(current.get(k))) {
        changes.add(new ResourceConfigStore.Change(type, resourceName, k, v));
      }
    });
    current.keySet().stream().filter(k -> !next.containsKey(k))
        .forEach(k -> changes.add(new ResourceConfigStore.Change(type, resourceName, k, null)));
    if (changes.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    return store.alter(changes).thenRun(this::refresh);
  }
}
