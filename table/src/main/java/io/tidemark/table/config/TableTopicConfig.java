package io.tidemark.table.config;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The table-topic settings of one topic, parsed and validated from the topic's configs. Each key
 * is declared once in {@link #KEYS} (name, default, doc) so the server can generate the reference
 * docs; the {@code automq.table.topic.*} names are accepted as aliases of the same settings.
 * Immutable; a config change produces a new instance.
 */
public record TableTopicConfig(
    boolean enabled,
    long commitIntervalMs,
    String namespace,
    Optional<String> tableName,
    ConvertType valueConvert,
    ConvertType keyConvert,
    TransformType valueTransform,
    Optional<String> partitionBy,
    ErrorTolerance errorTolerance,
    boolean dlqEnabled,
    Optional<String> valueSubject,
    Optional<String> valueMessageFullName,
    Optional<String> keySubject,
    Optional<String> keyMessageFullName,
    Upsert upsert,
    int formatVersion,
    Maintenance maintenance,
    Backfill backfill) {

  /** How the key or value bytes of a record become columns. */
  public enum ConvertType { RAW, STRING, JSON, BY_SCHEMA_ID, BY_LATEST_SCHEMA }

  /**
   * What is done with a converted value before it is written: kept, flattened, or a Debezium change
   * envelope unwrapped (its {@code after}, or {@code before} for a delete, becomes the row; the op
   * field {@code op} decides upsert or delete), kept as structs or flattened (AutoMQ's name).
   */
  public enum TransformType {
    NONE, FLATTEN, DEBEZIUM, FLATTEN_DEBEZIUM;

    public boolean flattens() {
      return this == FLATTEN || this == FLATTEN_DEBEZIUM;
    }

    public boolean debezium() {
      return this == DEBEZIUM || this == FLATTEN_DEBEZIUM;
    }
  }

  /**
   * How rows replace each other. Off: every record is appended. On (set explicitly, implied by a
   * {@code cdc.field}, a Debezium transform or {@code cleanup.policy=compact}): the table holds the
   * latest row per id; {@code idColumns} empty means the record key ({@code _kafka_key}). With a
   * {@code cdcField} (or a Debezium envelope) the field's value says whether the record upserts
   * ({@code upsertOps}) or deletes ({@code deleteOps}) its id; without, a null value (tombstone)
   * deletes and anything else upserts.
   */
  public record Upsert(boolean enabled, List<String> idColumns, Optional<String> cdcField, List<String> upsertOps,
      List<String> deleteOps) {

    public Upsert {
      idColumns = List.copyOf(idColumns);
      upsertOps = List.copyOf(upsertOps);
      deleteOps = List.copyOf(deleteOps);
    }

    /** Whether the row's identity is the Kafka key rather than value columns. */
    public boolean idIsKey() {
      return idColumns.isEmpty();
    }
  }

  /**
   * What built-in maintenance does to the topic's table (the node-level bounds per run are
   * {@code table.maintenance.*}): whether it runs at all, the size compaction packs data files to,
   * snapshot expiry (older than {@code snapshotMaxAgeMs}, always keeping the newest
   * {@code retainLastSnapshots}) and the age below which an unreferenced file is never taken for an orphan.
   */
  public record Maintenance(boolean enabled, long targetFileBytes, boolean expireSnapshots, long snapshotMaxAgeMs,
      int retainLastSnapshots, long orphanMinAgeMs) {}

  /** Which bad records are skipped instead of pausing the partition. */
  public enum ErrorTolerance {
    /** Any bad record pauses its partition until the config changes. */
    NONE,
    /** Records whose bytes do not convert (bad data) are counted and skipped. */
    INVALID_DATA,
    /** Every record that fails conversion, whatever the reason, is counted and skipped. */
    ALL
  }

  /** One declared setting. */
  public record Key(String name, String defaultValue, String doc) {}

  public static final String PREFIX = "table.topic.";
  public static final String ALIAS_PREFIX = "automq.table.topic.";

  public static final String ENABLE = "table.topic.enable";
  public static final String COMMIT_INTERVAL_MS = "table.topic.commit.interval.ms";
  public static final String NAMESPACE = "table.topic.namespace";
  public static final String TABLE_NAME = "table.topic.table.name";
  public static final String CONVERT_VALUE_TYPE = "table.topic.convert.value.type";
  public static final String CONVERT_KEY_TYPE = "table.topic.convert.key.type";
  public static final String TRANSFORM_VALUE_TYPE = "table.topic.transform.value.type";
  public static final String PARTITION_BY = "table.topic.partition.by";
  public static final String ERRORS_TOLERANCE = "table.topic.errors.tolerance";
  public static final String ERRORS_DLQ_ENABLE = "table.topic.errors.dlq.enable";
  public static final String CONVERT_VALUE_SUBJECT = "table.topic.convert.value.subject";
  public static final String CONVERT_VALUE_MESSAGE_FULL_NAME = "table.topic.convert.value.message.full.name";
  public static final String CONVERT_KEY_SUBJECT = "table.topic.convert.key.subject";
  public static final String CONVERT_KEY_MESSAGE_FULL_NAME = "table.topic.convert.key.message.full.name";
  public static final String UPSERT_ENABLE = "table.topic.upsert.enable";
  public static final String ID_COLUMNS = "table.topic.id.columns";
  public static final String CDC_FIELD = "table.topic.cdc.field";
  public static final String CDC_UPSERT_VALUES = "table.topic.cdc.upsert.values";
  public static final String CDC_DELETE_VALUES = "table.topic.cdc.delete.values";
  public static final String FORMAT_VERSION = "table.topic.format.version";
  public static final String MAINTENANCE_ENABLE = "table.topic.maintenance.enable";
  public static final String COMPACTION_TARGET_FILE_BYTES = "table.topic.compaction.target.file.bytes";
  public static final String EXPIRE_SNAPSHOT_ENABLED = "table.topic.expire.snapshot.enabled";
  public static final String EXPIRE_SNAPSHOT_OLDER_THAN_HOURS = "table.topic.expire.snapshot.older.than.hours";
  public static final String EXPIRE_SNAPSHOT_RETAIN_LAST = "table.topic.expire.snapshot.retain.last";
  public static final String ORPHAN_FILES_OLDER_THAN_HOURS = "table.topic.orphan.files.older.than.hours";
  /** Keys AutoMQ does not have: their {@code automq.table.topic.*} spelling is refused like any unknown key. */
  private static final java.util.Set<String> WITHOUT_ALIAS = java.util.Set.of(MAINTENANCE_ENABLE,
      COMPACTION_TARGET_FILE_BYTES, ORPHAN_FILES_OLDER_THAN_HOURS);
  public static final String BACKFILL_START = "table.topic.backfill.start";
  public static final String BACKFILL_MAX_BYTES_PER_SEC = "table.topic.backfill.max.bytes.per.sec";
  /** Kafka's topic config: a compacted topic lands as an upsert table keyed by the record key. */
  public static final String CLEANUP_POLICY = "cleanup.policy";

  public static final long MIN_COMMIT_INTERVAL_MS = 1000;
  public static final long MAX_COMMIT_INTERVAL_MS = 15 * 60 * 1000;

  /** Every table-topic setting with its default and documentation. */
  public static final List<Key> KEYS = List.of(
      new Key(ENABLE, "false", "Makes the topic also an Apache Iceberg table, kept in sync with the topic."),
      new Key(COMMIT_INTERVAL_MS, "60000",
          "Time between Iceberg commits, in milliseconds (" + MIN_COMMIT_INTERVAL_MS + " to " + MAX_COMMIT_INTERVAL_MS
              + "): the freshness of the table."),
      new Key(NAMESPACE, "default", "Iceberg namespace of the table."),
      new Key(TABLE_NAME, "", "Iceberg table name; empty means the topic name."),
      new Key(CONVERT_VALUE_TYPE, "raw",
          "How record values become columns: raw (bytes), string (UTF-8 text), json (schemaless JSON objects to columns,"
              + " types inferred), by_schema_id (schema-registry framed), by_latest_schema."),
      new Key(CONVERT_KEY_TYPE, "string", "How record keys become the _kafka_key column: raw (bytes), string (UTF-8 text),"
          + " by_schema_id (schema-registry framed) or by_latest_schema (the key subject's latest schema)."),
      new Key(TRANSFORM_VALUE_TYPE, "none", "none, flatten (struct fields become top-level columns), debezium (a Debezium"
          + " change envelope is unwrapped: after, or before for a delete, becomes the row; implies upsert) or"
          + " flatten_debezium (both)."),
      new Key(PARTITION_BY, "", "Iceberg partition transforms, e.g. [day(ts), bucket(user_id, 16)]; empty means unpartitioned."),
      new Key(ERRORS_TOLERANCE, "invalid_data",
          "none (a bad record pauses its partition), invalid_data (records that do not convert are skipped and counted),"
              + " all (every failing record is skipped and counted)."),
      new Key(ERRORS_DLQ_ENABLE, "false", "Writes skipped records with the error reason to the table <table>_dlq."),
      new Key(CONVERT_VALUE_SUBJECT, "",
          "Schema-registry subject whose latest version decodes values under by_latest_schema; empty means <topic>-value."),
      new Key(CONVERT_VALUE_MESSAGE_FULL_NAME, "",
          "Fully qualified Protobuf message that by_latest_schema decodes values as; empty means the schema's first message."),
      new Key(CONVERT_KEY_SUBJECT, "",
          "Schema-registry subject whose latest version decodes keys under by_latest_schema; empty means <topic>-key."),
      new Key(CONVERT_KEY_MESSAGE_FULL_NAME, "",
          "Fully qualified Protobuf message that by_latest_schema decodes keys as; empty means the schema's first message."),
      new Key(UPSERT_ENABLE, "false", "Keeps the latest row per id instead of appending every record (Iceberg equality"
          + " deletes); a null value (tombstone) deletes the id. Implied by cdc.field, a debezium transform and"
          + " cleanup.policy=compact."),
      new Key(ID_COLUMNS, "", "The columns identifying a row for upsert and CDC, e.g. [id] or [tenant, id]; empty means"
          + " the record key (_kafka_key)."),
      new Key(CDC_FIELD, "", "A value field holding the change operation (CDC): one of cdc.upsert.values upserts, one of"
          + " cdc.delete.values deletes the row's id. Implies upsert."),
      new Key(CDC_UPSERT_VALUES, "[c, u, r, I, U]", "Operation values (of cdc.field or a Debezium op) that insert or"
          + " replace the row."),
      new Key(CDC_DELETE_VALUES, "[d, D]", "Operation values (of cdc.field or a Debezium op) that delete the row."),
      new Key(FORMAT_VERSION, "2", "Iceberg format version of a table created for the topic: 2, or 3 (deletion"
          + " vectors instead of position delete files). An existing table keeps its version."),
      new Key(MAINTENANCE_ENABLE, "true", "Runs built-in maintenance on the table (compaction of small files, rewrite of"
          + " delete files into data, manifest rewrite, snapshot expiry, orphan file removal) from the topic's"
          + " coordinator, bounded per run by table.maintenance.*."),
      new Key(COMPACTION_TARGET_FILE_BYTES, Long.toString(128L << 20), "Size, in bytes, compaction packs the small data"
          + " files of one table partition into; files below three quarters of it count as small."),
      new Key(EXPIRE_SNAPSHOT_ENABLED, "true", "Expires old snapshots (and deletes the files only they reference)."),
      new Key(EXPIRE_SNAPSHOT_OLDER_THAN_HOURS, "1", "Snapshots older than this many hours are expired (time travel"
          + " reaches this far back); the snapshot holding the topic's committed offsets is always kept."),
      new Key(EXPIRE_SNAPSHOT_RETAIN_LAST, "1", "The newest snapshots always kept, whatever their age."),
      new Key(ORPHAN_FILES_OLDER_THAN_HOURS, "72", "Files in the table's location that no snapshot or metadata"
          + " references are deleted once older than this many hours (a safety age far above any commit round; at"
          + " least 1)."),
      new Key(BACKFILL_START, "earliest", "Where a partition's conversion starts when the table holds no offset of it"
          + " yet (the table is enabled on a topic that already has data): earliest (the log start: the existing data"
          + " is converted), latest (only records produced from then on), or a timestamp in epoch milliseconds (the"
          + " first record at or after it). The chosen offset is committed to the table at once; a table that holds"
          + " the partition's offset resumes there."),
      new Key(BACKFILL_MAX_BYTES_PER_SEC, "0", "Bound on the bytes per second read from each partition while it converts"
          + " records that were in the partition when its conversion started on this broker (backfill); 0 means no"
          + " bound. Producing is never slowed: new records wait in the log until the backfill reaches them."));

  public TableTopicConfig {
    if (commitIntervalMs < MIN_COMMIT_INTERVAL_MS || commitIntervalMs > MAX_COMMIT_INTERVAL_MS) {
      throw new IllegalArgumentException(COMMIT_INTERVAL_MS + " must be between " + MIN_COMMIT_INTERVAL_MS + " and "
          + MAX_COMMIT_INTERVAL_MS + ", got " + commitIntervalMs);
    }
    if (namespace == null || namespace.isBlank()) {
      throw new IllegalArgumentException(NAMESPACE + " must not be empty");
    }
    partitionBy.ifPresent(PartitionBy::parse);
    boolean valueColumns = valueConvert != ConvertType.RAW && valueConvert != ConvertType.STRING;
    if (!valueColumns && upsert.cdcField().isPresent()) {
      throw new IllegalArgumentException(CDC_FIELD + " needs value columns (" + CONVERT_VALUE_TYPE
          + "=json, by_schema_id or by_latest_schema), got " + valueConvert.name().toLowerCase(Locale.ROOT));
    }
    if (!valueColumns && valueTransform.debezium()) {
      throw new IllegalArgumentException(TRANSFORM_VALUE_TYPE + "=" + valueTransform.name().toLowerCase(Locale.ROOT)
          + " needs value columns (" + CONVERT_VALUE_TYPE + "=json, by_schema_id or by_latest_schema)");
    }
    if (!valueColumns && !upsert.idIsKey()) {
      throw new IllegalArgumentException(ID_COLUMNS + "=" + upsert.idColumns() + " names value columns, but "
          + CONVERT_VALUE_TYPE + "=" + valueConvert.name().toLowerCase(Locale.ROOT) + " makes none; use json or a schema");
    }
  }

  /** The parsed partition fields (empty when unpartitioned). */
  public PartitionBy partitionFields() {
    return partitionBy.map(PartitionBy::parse).orElse(new PartitionBy(List.of()));
  }

  /** The defaults: disabled, raw values, string keys, skip invalid data. */
  public static TableTopicConfig defaults() {
    return parse(Map.of());
  }

  /**
   * Parses the table-topic settings from a topic's configs. Keys outside the table-topic prefixes
   * are ignored; an unknown key inside them, or an invalid value, is rejected with a message naming
   * the key, so that nothing is applied.
   */
  public static TableTopicConfig parse(Map<String, String> topicConfigs) {
    Map<String, String> values = normalize(topicConfigs);
    return new TableTopicConfig(
        parseBoolean(values, ENABLE),
        parseLong(values, COMMIT_INTERVAL_MS),
        values.get(NAMESPACE).trim(),
        Optional.of(values.get(TABLE_NAME).trim()).filter(s -> !s.isEmpty()),
        parseEnum(values, CONVERT_VALUE_TYPE, ConvertType.class),
        parseEnum(values, CONVERT_KEY_TYPE, ConvertType.class),
        parseEnum(values, TRANSFORM_VALUE_TYPE, TransformType.class),
        Optional.of(values.get(PARTITION_BY).trim()).filter(s -> !s.isEmpty() && !s.equals("[]")),
        parseEnum(values, ERRORS_TOLERANCE, ErrorTolerance.class),
        parseBoolean(values, ERRORS_DLQ_ENABLE),
        Optional.of(values.get(CONVERT_VALUE_SUBJECT).trim()).filter(v -> !v.isEmpty()),
        Optional.of(values.get(CONVERT_VALUE_MESSAGE_FULL_NAME).trim()).filter(v -> !v.isEmpty()),
        Optional.of(values.get(CONVERT_KEY_SUBJECT).trim()).filter(v -> !v.isEmpty()),
        Optional.of(values.get(CONVERT_KEY_MESSAGE_FULL_NAME).trim()).filter(v -> !v.isEmpty()),
        upsert(values, topicConfigs.get(CLEANUP_POLICY)),
        formatVersion(values),
        maintenance(values),
        Backfill.parse(values.get(BACKFILL_START), parseLong(values, BACKFILL_MAX_BYTES_PER_SEC)));
  }

  private static Upsert upsert(Map<String, String> values, String cleanupPolicy) {
    Optional<String> cdcField = Optional.of(values.get(CDC_FIELD).trim()).filter(v -> !v.isEmpty());
    boolean compacted = cleanupPolicy != null && List.of(cleanupPolicy.toLowerCase(Locale.ROOT).split(","))
        .stream().anyMatch(p -> p.trim().equals("compact"));
    boolean debezium = parseEnum(values, TRANSFORM_VALUE_TYPE, TransformType.class).debezium();
    boolean enabled = parseBoolean(values, UPSERT_ENABLE) || cdcField.isPresent() || debezium || compacted;
    List<String> ids = parseList(values, ID_COLUMNS);
    for (String id : ids) {
      if (id.startsWith("_kafka_") && !id.equals("_kafka_key")) {
        throw new IllegalArgumentException(ID_COLUMNS + " may name value columns or _kafka_key, not " + id);
      }
    }
    if (ids.size() != new java.util.HashSet<>(ids).size()) {
      throw new IllegalArgumentException(ID_COLUMNS + " names a column twice: " + ids);
    }
    if (ids.equals(List.of("_kafka_key"))) {
      ids = List.of();
    } else if (ids.contains("_kafka_key")) {
      throw new IllegalArgumentException(ID_COLUMNS + ": _kafka_key cannot be combined with value columns: " + ids);
    }
    List<String> upsertOps = parseList(values, CDC_UPSERT_VALUES);
    List<String> deleteOps = parseList(values, CDC_DELETE_VALUES);
    for (String op : deleteOps) {
      if (upsertOps.contains(op)) {
        throw new IllegalArgumentException("operation value '" + op + "' is in both " + CDC_UPSERT_VALUES + " and "
            + CDC_DELETE_VALUES);
      }
    }
    if (upsertOps.isEmpty() || deleteOps.isEmpty()) {
      throw new IllegalArgumentException(CDC_UPSERT_VALUES + " and " + CDC_DELETE_VALUES + " must not be empty");
    }
    return new Upsert(enabled, ids, cdcField, upsertOps, deleteOps);
  }

  /** Where a partition new to the table starts: {@link BackfillStart}, its timestamp, and the backfill read rate. */
  public record Backfill(BackfillStart start, long timestampMs, long maxBytesPerSec) {

    static Backfill parse(String start, long maxBytesPerSec) {
      if (maxBytesPerSec < 0) {
        throw new IllegalArgumentException(BACKFILL_MAX_BYTES_PER_SEC + " must be 0 (no bound) or positive, got "
            + maxBytesPerSec);
      }
      String v = start.trim().toLowerCase(Locale.ROOT);
      if (v.equals("earliest") || v.equals("latest")) {
        return new Backfill(BackfillStart.valueOf(v.toUpperCase(Locale.ROOT)), -1, maxBytesPerSec);
      }
      try {
        long ts = Long.parseLong(v);
        if (ts < 0) {
          throw new NumberFormatException("negative");
        }
        return new Backfill(BackfillStart.TIMESTAMP, ts, maxBytesPerSec);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(BACKFILL_START + " must be earliest, latest or a timestamp in epoch"
            + " milliseconds, got " + start, e);
      }
    }
  }

  /** The start position of {@link Backfill}. */
  public enum BackfillStart { EARLIEST, LATEST, TIMESTAMP }

  private static int formatVersion(Map<String, String> values) {
    long v = parseLong(values, FORMAT_VERSION);
    if (v != 2 && v != 3) {
      throw new IllegalArgumentException(FORMAT_VERSION + " must be 2 or 3, got " + v);
    }
    return (int) v;
  }

  private static Maintenance maintenance(Map<String, String> values) {
    long target = parseLong(values, COMPACTION_TARGET_FILE_BYTES);
    if (target < (1L << 20) || target > (2L << 30)) {
      throw new IllegalArgumentException(COMPACTION_TARGET_FILE_BYTES + " must be between 1 MiB and 2 GiB, got " + target);
    }
    long ageHours = parseLong(values, EXPIRE_SNAPSHOT_OLDER_THAN_HOURS);
    long retain = parseLong(values, EXPIRE_SNAPSHOT_RETAIN_LAST);
    long orphanHours = parseLong(values, ORPHAN_FILES_OLDER_THAN_HOURS);
    long maxHours = 100L * 365 * 24;
    if (ageHours < 0 || ageHours > maxHours) {
      throw new IllegalArgumentException(EXPIRE_SNAPSHOT_OLDER_THAN_HOURS + " must be between 0 and " + maxHours + ", got "
          + ageHours);
    }
    if (retain < 1 || retain > 100_000) {
      throw new IllegalArgumentException(EXPIRE_SNAPSHOT_RETAIN_LAST + " must be between 1 and 100000, got " + retain);
    }
    if (orphanHours < 1 || orphanHours > maxHours) {
      throw new IllegalArgumentException(ORPHAN_FILES_OLDER_THAN_HOURS + " must be between 1 and " + maxHours + ", got "
          + orphanHours);
    }
    return new Maintenance(parseBoolean(values, MAINTENANCE_ENABLE), target, parseBoolean(values, EXPIRE_SNAPSHOT_ENABLED),
        ageHours * 3_600_000L, (int) retain, orphanHours * 3_600_000L);
  }

  /** {@code [a, b]} or {@code a,b}: the trimmed non-empty items. */
  private static List<String> parseList(Map<String, String> values, String key) {
    String v = values.get(key).trim();
    if (v.startsWith("[") && v.endsWith("]")) {
      v = v.substring(1, v.length() - 1);
    } else if (v.startsWith("[") || v.endsWith("]")) {
      throw new IllegalArgumentException(key + " must be a list like [a, b], got " + v);
    }
    List<String> out = new java.util.ArrayList<>();
    for (String item : v.split(",")) {
      if (!item.isBlank()) {
        out.add(item.trim());
      }
    }
    return List.copyOf(out);
  }

  /** The subject whose latest schema decodes values of {@code topic} under {@code by_latest_schema}. */
  public String valueSubjectFor(String topic) {
    return valueSubject.orElse(topic + "-value");
  }

  /** The subject whose latest schema decodes keys of {@code topic} under {@code by_latest_schema}. */
  public String keySubjectFor(String topic) {
    return keySubject.orElse(topic + "-key");
  }

  /** The Iceberg table name for {@code topic}. */
  public String tableNameFor(String topic) {
    return tableName.orElse(topic);
  }

  /**
   * Maps every table-topic key (canonical or alias) onto its canonical name and fills defaults.
   * The same setting given under both names must carry the same value.
   */
  static Map<String, String> normalize(Map<String, String> topicConfigs) {
    Map<String, String> out = new LinkedHashMap<>();
    for (Key key : KEYS) {
      out.put(key.name(), key.defaultValue());
    }
    Map<String, String> given = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : topicConfigs.entrySet()) {
      String name = e.getKey();
      String canonical;
      if (name.startsWith(ALIAS_PREFIX)) {
        canonical = PREFIX + name.substring(ALIAS_PREFIX.length());
        if (WITHOUT_ALIAS.contains(canonical)) {
          throw new IllegalArgumentException("unknown table topic config " + name + " (Tidemark's own setting: " + canonical
              + ")");
        }
      } else if (name.startsWith(PREFIX)) {
        canonical = name;
      } else {
        continue;
      }
      if (!out.containsKey(canonical)) {
        throw new IllegalArgumentException("unknown table topic config " + name);
      }
      String value = e.getValue() == null ? "" : e.getValue();
      String previous = given.putIfAbsent(canonical, value);
      if (previous != null && !previous.equals(value)) {
        throw new IllegalArgumentException(canonical + " is given twice (also as its automq alias) with different values: "
            + previous + " and " + value);
      }
    }
    out.putAll(given);
    return out;
  }

  private static boolean parseBoolean(Map<String, String> values, String key) {
    String v = values.get(key).trim().toLowerCase(Locale.ROOT);
    return switch (v) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new IllegalArgumentException(key + " must be true or false, got " + v);
    };
  }

  private static long parseLong(Map<String, String> values, String key) {
    String v = values.get(key).trim();
    try {
      return Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + " must be a whole number, got " + v, e);
    }
  }

  private static <E extends Enum<E>> E parseEnum(Map<String, String> values, String key, Class<E> type) {
    String v = values.get(key).trim();
    for (E constant : type.getEnumConstants()) {
      if (constant.name().equalsIgnoreCase(v)) {
        return constant;
      }
    }
    StringBuilder allowed = new StringBuilder();
    for (E constant : type.getEnumConstants()) {
      allowed.append(allowed.isEmpty() ? "" : ", ").append(constant.name().toLowerCase(Locale.ROOT));
    }
    throw new IllegalArgumentException(key + " must be one of " + allowed + ", got " + v);
  }
}
