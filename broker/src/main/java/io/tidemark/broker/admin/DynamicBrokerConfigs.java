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
 * <p>The other keys Kafka changes at run time that mean something here are applied by the
 * {@link BrokerReconfigurable} parts registered with {@link #register} ({@code num.network.threads},
 * {@code log.cleaner.threads}, a TLS listener's {@code listener.name.<l>.ssl.keystore.*} and
 * {@code ssl.truststore.*}). As in Kafka (its {@code ConfigAdminManager} and
 * {@code DynamicBrokerConfig.validate}), a change is checked on the broker it names before anything
 * is written: a per-broker key at the cluster default, a broker id other than this broker's, a value
 * the part cannot apply, each gets INVALID_REQUEST and changes nothing. Keys that mean nothing on
 * streams (request handler and background pools, replica fetchers, recovery threads, remote
 * storage), or that are not built here yet (connection limits, the log cleaner's own buffers), are
 * refused with INVALID_REQUEST naming them, as are Kafka's read-only keys. Keys with no effect on
 * streams that Kafka accepts for topics too ({@code log.segment.bytes}, {@code min.insync.replicas}...)
 * are stored and described, as their topic configs are. Secret values (key store passwords) are
 * kept in the controller's metadata as Kafka's KRaft mode keeps them, and described as null.
 *
 * <p>Threading: {@link #refresh} may run on any thread (store listeners, the constructor); it is
 * serialized by this object's monitor and publishes immutable snapshots through volatile fields, so
 * readers on request threads never lock. Parts are applied under the same monitor, one at a time.
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
  /** Registered parts and the values last applied to each; guarded by this. */
  private final Map<BrokerReconfigurable, Map<String, String>> parts = new java.util.IdentityHashMap<>();
  private volatile List<BrokerReconfigurable> partList = List.of();
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

  /** Registers a part that applies some dynamic keys itself, and applies its current values at once. */
  public synchronized void register(BrokerReconfigurable part) {
    List<BrokerReconfigurable> next = new ArrayList<>(partList);
    next.add(part);
    partList = List.copyOf(next);
    parts.put(part, Map.of());
    applyPart(part, valuesOf(part, effective));
  }

  /** The values of {@code part}'s keys among {@code values}. Pure. */
  private static Map<String, String> valuesOf(BrokerReconfigurable part, Map<String, Value> values) {
    Map<String, String> out = new java.util.TreeMap<>();
    values.forEach((k, v) -> {
      if (part.owns(k)) {
        out.put(k, v.value());
      }
    });
    return out;
  }

  private void applyPart(BrokerReconfigurable part, Map<String, String> values) {
    if (values.equals(parts.get(part))) {
      return;
    }
    try {
      part.apply(values);
    } catch (RuntimeException e) {
      // as Kafka: a value the cluster holds that this broker cannot apply is logged, the previous state kept
      org.slf4j.LoggerFactory.getLogger(DynamicBrokerConfigs.class).warn("dynamic broker configs {} could not be applied on broker "
          + "{}: {}", values.keySet(), nodeName, e.getMessage());
    }
    parts.put(part, values);
  }

  /** The part owning {@code key}, or null. */
  private BrokerReconfigurable partOf(String key) {
    for (BrokerReconfigurable p : partList) {
      if (p.owns(key)) {
        return p;
      }
    }
    return null;
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
      for (BrokerReconfigurable part : partList) {
        applyPart(part, valuesOf(part, next));
      }
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
  public boolean dynamic(String key) {
    return TOPIC_DEFAULTS.containsKey(key) || partOf(key) != null;
  }

  /** Whether {@code key}'s value is secret (described as null). */
  boolean sensitive(String key) {
    BrokerReconfigurable part = partOf(key);
    return part != null && part.sensitive(key);
  }

  /** The keys the registered parts describe on every broker, with their static (configured or default) values. */
  Map<String, String> staticValues() {
    Map<String, String> out = new java.util.TreeMap<>();
    partList.forEach(p -> out.putAll(p.staticValues()));
    return out;
  }

  /** The Tidemark setting giving a part's key its static value, or null. */
  String staticKey(String key) {
    BrokerReconfigurable part = partOf(key);
    return part == null ? null : part.staticKey(key);
  }

  /** The keys of registered parts that have a dynamic value on this broker, sorted. */
  List<String> setKeys() {
    return effective.keySet().stream().filter(k -> partOf(k) != null).sorted().toList();
  }

  /** The declared type of a dynamic key ("long", "int", "list", ...), as its topic config or its part declares it. */
  String type(String kafkaName) {
    BrokerReconfigurable part = partOf(kafkaName);
    if (part != null) {
      return part.type(kafkaName);
    }
    TopicConfigs.Definition d = topics.definition(TOPIC_DEFAULTS.get(kafkaName));
    return d == null ? "string" : d.type();
  }

  /** The declared (non-dynamic) default of a dynamic key. */
  String declaredDefault(String kafkaName) {
    if (!TOPIC_DEFAULTS.containsKey(kafkaName)) {
      return null;
    }
    TopicConfigs.Definition d = topics.definition(TOPIC_DEFAULTS.get(kafkaName));
    return d == null ? null : d.defaultValue();
  }

  /**
   * Replaces the stored values of one broker resource ({@code ""} or a broker id) by
   * {@code next}: validates every key and value first (INVALID_REQUEST for a key that cannot change
   * at run time here, a per-broker key at the cluster default, another broker's id or a bad value, as
   * Kafka answers each; nothing is written then), and with {@code validateOnly} stops there.
   */
  public CompletableFuture<Void> replace(String resourceName, Map<String, String> next, boolean validateOnly) {
    if (!resourceName.isEmpty() && !resourceName.matches("\\d{1,9}")) {
      return CompletableFuture.failedFuture(new InvalidRequestException("Invalid broker name " + resourceName));
    }
    if (!resourceName.isEmpty() && !resourceName.equals(nodeName)) {
      // as Kafka's ConfigAdminManager: a broker's own configs are altered through that broker, which validates them
      return CompletableFuture.failedFuture(new InvalidRequestException("Unexpected broker id, expected " + nodeName
          + ", but received " + resourceName));
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
          + " (Tidemark changes at run time only the broker keys listed in docs/operations.md, \"Dynamic broker configs\"; the "
          + "rest is set in the configuration file)"));
    }
    if (resourceName.isEmpty()) {
      Set<String> perBroker = new TreeSet<>();
      next.forEach((k, v) -> {
        BrokerReconfigurable part = partOf(k);
        if (part != null && part.perBrokerOnly(k) && !v.equals(current.get(k))) {
          perBroker.add(k);
        }
      });
      if (!perBroker.isEmpty()) {
        return CompletableFuture.failedFuture(new InvalidRequestException(
            "Cannot update these configs at default cluster level, broker id must be specified: " + String.join(",", perBroker)));
      }
    }
    String partReason = checkParts(resourceName, next);
    if (partReason != null) {
      return CompletableFuture.failedFuture(new InvalidRequestException(partReason));
    }
    for (Map.Entry<String, String> e : next.entrySet()) {
      if (!TOPIC_DEFAULTS.containsKey(e.getKey())) {
        continue;
      }
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

  /**
   * Why some part cannot apply the values this broker would have once {@code resourceName} holds
   * {@code next} (its per-broker values over the cluster defaults), or null. Parts whose values do
   * not change are not asked.
   */
  private String checkParts(String resourceName, Map<String, String> next) {
    Map<String, Map<String, String>> all = store.configs(ConfigResource.Type.BROKER.id());
    Map<String, String> after = new HashMap<>(resourceName.isEmpty() ? next : all.getOrDefault("", Map.of()));
    after.putAll(resourceName.isEmpty() ? all.getOrDefault(nodeName, Map.of()) : next);
    Map<String, Value> asValues = new HashMap<>();
    after.forEach((k, v) -> asValues.put(k, new Value(v, ConfigSource.DYNAMIC_BROKER_CONFIG)));
    for (BrokerReconfigurable part : partList) {
      Map<String, String> values = valuesOf(part, asValues);
      if (!values.equals(valuesOf(part, effective))) {
        String reason = part.check(values);
        if (reason != null) {
          return reason;
        }
      }
    }
    return null;
  }
}
