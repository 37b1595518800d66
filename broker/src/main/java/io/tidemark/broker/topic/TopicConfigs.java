package io.tidemark.broker.topic;

import io.tidemark.broker.partition.LogSettings;
import io.tidemark.broker.record.Recompression;
import io.tidemark.broker.record.TopicCompression;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * The topic-level configs Tidemark accepts, declared once: name, default, documentation and
 * validation. Three kinds: <em>applied</em> ({@code retention.ms}, {@code retention.bytes},
 * {@code max.message.bytes}, {@code message.timestamp.type}, {@code cleanup.policy} with the settings of
 * the log cleaner ({@code delete.retention.ms}, {@code min.compaction.lag.ms}, {@code max.compaction.lag.ms},
 * {@code min.cleanable.dirty.ratio}; see docs/compaction.md), {@code compression.type} and the levels of its codecs),
 * <em>accepted for compatibility</em> (Kafka names with no meaning on streams, such as
 * {@code segment.bytes}: stored and described, no effect), and <em>reserved</em> table-topic
 * names ({@code table.topic.*}, {@code automq.table.topic.*}). Anything else is refused.
 * Stateless apart from the broker default for {@code max.message.bytes}.
 */
public final class TopicConfigs {

  public static final String RETENTION_MS = "retention.ms";
  public static final String RETENTION_BYTES = "retention.bytes";
  public static final String MAX_MESSAGE_BYTES = "max.message.bytes";
  public static final String TIMESTAMP_TYPE = "message.timestamp.type";
  public static final String CLEANUP_POLICY = "cleanup.policy";
  public static final String COMPRESSION_TYPE = "compression.type";
  public static final String MAX_DECOMPRESSED_MESSAGE_BYTES = "max.decompressed.message.bytes";
  public static final String DELETE_RETENTION_MS = "delete.retention.ms";
  public static final String MIN_COMPACTION_LAG_MS = "min.compaction.lag.ms";
  public static final String MAX_COMPACTION_LAG_MS = "max.compaction.lag.ms";
  public static final String MIN_CLEANABLE_DIRTY_RATIO = "min.cleanable.dirty.ratio";
  /** The value that makes a topic compacted (alone or with 'delete'); internal topics use it. */
  public static final String COMPACT = "compact";

  private static String levelKey(String codec) {
    return "compression." + codec + ".level";
  }

  /** One declared topic config. */
  public record Definition(String name, String type, String defaultValue, String doc, boolean applied,
      Function<String, String> validator) {}

  /**
   * Checks the reserved table-topic entries of a topic's configs (all of them at once, since some
   * rules span keys); returns null when valid, or the reason. Supplied by the module that owns
   * those names, so that the broker does not depend on it.
   */
  @FunctionalInterface
  public interface ReservedValidator {
    String check(Map<String, String> reservedConfigs);
  }

  private final Map<String, Definition> definitions = new LinkedHashMap<>();
  private volatile ReservedValidator reservedValidator = reserved -> null;
  /** Dynamic broker-level defaults (topic config name → value), already validated; replaced whole. */
  private volatile Map<String, String> brokerDefaults = Map.of();

  public TopicConfigs(int brokerMaxMessageBytes) {
    add(RETENTION_MS, "long", "604800000", "Records older than this many ms may be deleted; -1 keeps them forever.", true,
        v -> longAtLeast(v, -1));
    add(RETENTION_BYTES, "long", "-1", "Oldest records are deleted once a partition holds more bytes than this; -1: no limit.",
        true, v -> longAtLeast(v, -1));
    add(MAX_MESSAGE_BYTES, "int", Integer.toString(brokerMaxMessageBytes), "Largest record batch accepted, in bytes.", true,
        v -> intAtLeast(v, 0));
    add(TIMESTAMP_TYPE, "string", "CreateTime", "CreateTime keeps the producer's timestamps; LogAppendTime stamps the broker's time.",
        true, v -> v.equals("CreateTime") || v.equals("LogAppendTime") ? null : "must be CreateTime or LogAppendTime");
    add(CLEANUP_POLICY, "list", "delete", "'delete' drops the oldest data by retention.ms and retention.bytes; 'compact' keeps "
        + "the latest record of every key (the log cleaner rewrites older data in object storage); 'compact,delete' does both.",
        true, TopicConfigs::checkCleanupPolicy);
    add(DELETE_RETENTION_MS, "long", "86400000", "How long a tombstone (a record with a null value) of a compacted topic stays "
        + "readable after the cleaner first reached it; then the cleaner drops it.", true, v -> longAtLeast(v, 0));
    add(MIN_COMPACTION_LAG_MS, "long", "0", "Data committed to object storage less than this many ms ago is not cleaned.", true,
        v -> longAtLeast(v, 0));
    add(MAX_COMPACTION_LAG_MS, "long", Long.toString(Long.MAX_VALUE), "Dirty data older than this is cleaned even when the "
        + "dirty ratio is below min.cleanable.dirty.ratio.", true, v -> longAtLeast(v, 1));
    add(MIN_CLEANABLE_DIRTY_RATIO, "double", "0.5", "A partition is cleaned once its dirty bytes (written since the last "
        + "cleaning) reach this share of its cleanable bytes.", true, TopicConfigs::ratio);
    add(COMPRESSION_TYPE, "string", "producer", "The codec batches are stored in: 'producer' keeps the producer's; 'uncompressed', "
        + "'gzip', 'snappy', 'lz4' or 'zstd' makes the broker recompress batches in another codec, as Kafka does.", true,
        v -> TopicCompression.TYPES.contains(v) ? null : "must be one of " + String.join(", ", TopicCompression.TYPES));
    add(MAX_DECOMPRESSED_MESSAGE_BYTES, "int", Integer.toString(LogSettings.NO_DECOMPRESSED_LIMIT), "Largest record, decompressed, "
        + "a produce may carry (INVALID_RECORD beyond it), checked from each record's length before its bytes are allocated; "
        + "max.message.bytes bounds the compressed batch. The default sets no bound below what the broker could allocate.", true,
        v -> intAtLeast(v, 0));
    for (String codec : List.of("gzip", "lz4", "zstd")) {
      add(levelKey(codec), "int", Integer.toString(Recompression.defaultLevel(codec)),
          "The level used when the broker recompresses to " + codec + " (compression.type=" + codec + ").", true,
          v -> Recompression.checkLevel(codec, v));
    }
    // Accepted for compatibility: Kafka's names, types, defaults and bounds (so tools and CreateTopics see Kafka's answer),
    // with no effect on stream storage (no segments, indexes, flushes, replicas or remote tier here).
    compat("segment.bytes", "int", "1073741824", v -> intAtLeast(v, 1024 * 1024));
    compat("segment.ms", "long", "604800000", v -> longAtLeast(v, 1));
    compat("segment.jitter.ms", "long", "0", v -> longAtLeast(v, 0));
    compat("segment.index.bytes", "int", "10485760", v -> intAtLeast(v, 4));
    compat("index.interval.bytes", "int", "4096", v -> intAtLeast(v, 0));
    compat("min.insync.replicas", "int", "1", v -> intAtLeast(v, 1));
    compat("unclean.leader.election.enable", "boolean", "false", TopicConfigs::bool);
    compat("flush.messages", "long", Long.toString(Long.MAX_VALUE), v -> longAtLeast(v, 1));
    compat("flush.ms", "long", Long.toString(Long.MAX_VALUE), v -> longAtLeast(v, 0));
    compat("file.delete.delay.ms", "long", "60000", v -> longAtLeast(v, 0));
    compat("preallocate", "boolean", "false", TopicConfigs::bool);
    compat("message.timestamp.before.max.ms", "long", Long.toString(Long.MAX_VALUE), v -> longAtLeast(v, 0));
    compat("message.timestamp.after.max.ms", "long", "3600000", v -> longAtLeast(v, 0));
    compat("local.retention.ms", "long", "-2", v -> longAtLeast(v, -2));
    compat("local.retention.bytes", "long", "-2", v -> longAtLeast(v, -2));
    compat("follower.replication.throttled.replicas", "list", "", v -> null);
    compat("leader.replication.throttled.replicas", "list", "", v -> null);
    compat("remote.storage.enable", "boolean", "false", TopicConfigs::bool);
    compat("remote.log.copy.disable", "boolean", "false", TopicConfigs::bool);
    compat("remote.log.delete.on.disable", "boolean", "false", TopicConfigs::bool);
    compat("remote.copy.lag.bytes", "long", "-1", v -> longAtLeast(v, -1));
    compat("remote.copy.lag.ms", "long", "0", v -> longAtLeast(v, -1));
    compat("errors.deadletterqueue.group.enable", "boolean", "false", TopicConfigs::bool);
  }

  private void compat(String name, String type, String def, Function<String, String> validator) {
    add(name, type, def, "Accepted for compatibility with Kafka tools; has no effect on stream storage.", false, validator);
  }

  private static String bool(String v) {
    return v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false") ? null : "must be true or false";
  }

  private void add(String name, String type, String def, String doc, boolean applied, Function<String, String> validator) {
    definitions.put(name, new Definition(name, type, def, doc, applied, validator));
  }

  public List<Definition> definitions() {
    return Collections.unmodifiableList(new ArrayList<>(definitions.values()));
  }

  public Definition definition(String name) {
    return definitions.get(name);
  }

  /** From now on, reserved table-topic entries are checked by {@code validator} (before: stored as given). */
  public void validateReservedWith(ReservedValidator validator) {
    this.reservedValidator = validator;
  }

  /** True for table-topic names reserved for their own feature (stored as given). */
  public static boolean reserved(String name) {
    return name.startsWith("table.topic.") || name.startsWith("automq.table.topic.");
  }

  /** Checks every entry; throws {@link InvalidTopicConfigException} naming the first bad one. */
  public void validate(Map<String, String> configs) {
    Map<String, String> reservedConfigs = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : configs.entrySet()) {
      String name = e.getKey();
      String value = e.getValue();
      if (reserved(name)) {
        reservedConfigs.put(name, value);
        continue;
      }
      Definition d = definitions.get(name);
      if (d == null) {
        throw new InvalidTopicConfigException("unknown topic config '" + name + "'");
      }
      if (value == null) {
        throw new InvalidTopicConfigException("topic config '" + name + "' needs a value");
      }
      String reason = d.validator().apply(value.trim());
      if (reason != null) {
        throw new InvalidTopicConfigException("invalid value '" + value + "' for topic config '" + name + "': " + reason);
      }
    }
    String reason = reservedValidator.check(reservedConfigs);
    if (reason != null) {
      throw new InvalidTopicConfigException(reason);
    }
  }

  /** The effective value of {@code name}: set value or default (null when it has none). */
  public String effective(Map<String, String> configs, String name) {
    String v = configs.get(name);
    return v != null ? v : defaultValue(name);
  }

  /**
   * What a topic without its own value of {@code name} gets: the dynamic broker default when one is set
   * ({@link #brokerDefaults(Map)}), else the declared default (null when it has none).
   */
  public String defaultValue(String name) {
    String dynamic = brokerDefaults.get(name);
    if (dynamic != null) {
      return dynamic;
    }
    Definition d = definitions.get(name);
    return d == null ? null : d.defaultValue();
  }

  /**
   * Replaces the dynamic broker-level defaults (topic config name → value, each valid for its
   * definition): from now on {@link #effective} and {@link #logSettings} use them for topics
   * without their own value. Open partitions take them when their settings are applied again.
   */
  public void brokerDefaults(Map<String, String> defaults) {
    this.brokerDefaults = Map.copyOf(defaults);
  }

  /** The reason {@code value} is not valid for topic config {@code name}, or null when it is. */
  public String check(String name, String value) {
    Definition d = definitions.get(name);
    if (d == null) {
      return "unknown topic config '" + name + "'";
    }
    return value == null ? "needs a value" : d.validator().apply(value.trim());
  }

  /** What a partition applies on append. */
  public LogSettings logSettings(Map<String, String> configs) {
    String codec = effective(configs, COMPRESSION_TYPE).trim();
    int level = definitions.containsKey(levelKey(codec)) ? Integer.parseInt(effective(configs, levelKey(codec)).trim()) : 0;
    return new LogSettings(Integer.parseInt(effective(configs, MAX_MESSAGE_BYTES).trim()),
        "LogAppendTime".equals(effective(configs, TIMESTAMP_TYPE).trim()), new TopicCompression(codec, level),
        compacted(effective(configs, CLEANUP_POLICY)), Integer.parseInt(effective(configs, MAX_DECOMPRESSED_MESSAGE_BYTES).trim()));
  }

  /** True when the policy list names 'compact' (alone or with 'delete'). */
  public static boolean compacted(String cleanupPolicy) {
    for (String p : cleanupPolicy.split(",")) {
      if (p.trim().toLowerCase(Locale.ROOT).equals(COMPACT)) {
        return true;
      }
    }
    return false;
  }

  /** True when the policy list names 'delete' (retention applies). */
  public static boolean deletes(String cleanupPolicy) {
    for (String p : cleanupPolicy.split(",")) {
      if (p.trim().toLowerCase(Locale.ROOT).equals("delete")) {
        return true;
      }
    }
    return false;
  }

  /** What the log cleaner applies to a partition of a topic with these configs. */
  public io.tidemark.broker.cleaner.CleanerPolicy cleanerPolicy(Map<String, String> configs) {
    return new io.tidemark.broker.cleaner.CleanerPolicy(compacted(effective(configs, CLEANUP_POLICY)),
        Long.parseLong(effective(configs, DELETE_RETENTION_MS).trim()),
        Long.parseLong(effective(configs, MIN_COMPACTION_LAG_MS).trim()),
        Long.parseLong(effective(configs, MAX_COMPACTION_LAG_MS).trim()),
        Double.parseDouble(effective(configs, MIN_CLEANABLE_DIRTY_RATIO).trim()));
  }

  private static String ratio(String v) {
    try {
      double d = Double.parseDouble(v);
      return d >= 0 && d <= 1 ? null : "must be between 0 and 1";
    } catch (NumberFormatException e) {
      return "is not a number";
    }
  }

  private static String longAtLeast(String v, long min) {
    try {
      return Long.parseLong(v) >= min ? null : "must be at least " + min;
    } catch (NumberFormatException e) {
      return "is not a whole number";
    }
  }

  private static String intAtLeast(String v, int min) {
    try {
      return Integer.parseInt(v) >= min ? null : "must be at least " + min;
    } catch (NumberFormatException e) {
      return "is not a whole number below 2^31";
    }
  }

  private static String checkCleanupPolicy(String v) {
    for (String p : v.split(",", -1)) {
      String policy = p.trim().toLowerCase(Locale.ROOT);
      if (!policy.equals(COMPACT) && !policy.equals("delete")) {
        return "unknown cleanup policy '" + p.trim() + "' (must be 'delete', 'compact' or both)";
      }
    }
    return null;
  }
}
