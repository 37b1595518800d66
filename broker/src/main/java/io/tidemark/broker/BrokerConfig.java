package io.tidemark.broker;

import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;
import java.util.List;

/**
 * The broker's settings, declared once: name (units last), default, validation and doc. The
 * server gathers {@link #KEYS} to validate configuration and generate the reference page.
 * Immutable; safe to share across threads.
 */
public final class BrokerConfig {

  public static final ConfigKey<Integer> NODE_ID = ConfigKey.integer("kafka.node.id", 0,
      "This broker's node id, as reported in Metadata and DescribeCluster.").validate(ConfigKey.between(0, Integer.MAX_VALUE));
  public static final ConfigKey<String> CLUSTER_ID = ConfigKey.string("kafka.cluster.id", "",
      "Cluster id reported to clients (22-character base64 UUID). Empty: generated once and kept with the topic registry.");
  public static final ConfigKey<String> LISTENER_HOST = ConfigKey.string("kafka.listener.host", "0.0.0.0",
      "Address the Kafka listener binds to.");
  public static final ConfigKey<Integer> LISTENER_PORT = ConfigKey.integer("kafka.listener.port", 9092,
      "TCP port of the Kafka listener; 0 picks a free port (tests).").validate(ConfigKey.between(0, 65535));
  public static final ConfigKey<String> ADVERTISED_HOST = ConfigKey.string("kafka.advertised.host", "",
      "Host name clients are told to connect to (Metadata, FindCoordinator, DescribeCluster). Empty: kafka.listener.host when "
          + "it names one address, else (0.0.0.0 or ::) this machine's canonical host name, as Kafka advertises a listener "
          + "without a host.");
  public static final ConfigKey<Integer> ADVERTISED_PORT = ConfigKey.integer("kafka.advertised.port", 0,
      "Port clients are told to connect to; 0 means the bound listener port.").validate(ConfigKey.between(0, 65535));
  public static final ConfigKey<Integer> MAX_REQUEST_BYTES = ConfigKey.integer("kafka.max.request.bytes", 100 * 1024 * 1024,
      "Largest request frame accepted; a larger size prefix closes the connection before anything is allocated.")
      .validate(ConfigKey.between(1024, Integer.MAX_VALUE - 4));
  public static final ConfigKey<Integer> MAX_INFLIGHT_REQUESTS = ConfigKey.integer("kafka.max.inflight.requests.per.connection", 64,
      "Requests of one connection being processed or waiting for their response; when full the broker stops reading that socket.")
      .validate(ConfigKey.between(1, 10_000));
  public static final ConfigKey<Boolean> AUTO_CREATE_TOPICS = ConfigKey.bool("kafka.auto.create.topics", true,
      "Create a topic on first Metadata request that allows it (like auto.create.topics.enable).");
  public static final ConfigKey<Integer> DEFAULT_PARTITIONS = ConfigKey.integer("kafka.default.partitions", 1,
      "Partitions of a topic created without a partition count (auto-created or -1).").validate(ConfigKey.between(1, 10_000));
  public static final ConfigKey<Integer> MAX_PARTITIONS_PER_TOPIC = ConfigKey.integer("kafka.max.partitions.per.topic", 10_000,
      "Upper bound on a topic's partition count.").validate(ConfigKey.between(1, 100_000));
  public static final ConfigKey<Integer> MAX_MESSAGE_BYTES = ConfigKey.integer("kafka.message.max.bytes", 1024 * 1024 + 12,
      "Default max.message.bytes of topics: the largest record batch accepted. Changeable at run time, per broker or "
          + "cluster-wide, as Kafka's dynamic message.max.bytes (kafka-configs --alter --entity-type brokers; docs/operations.md, "
          + "\"Dynamic broker configs\"), which takes precedence over this value.").validate(ConfigKey.between(64, Integer.MAX_VALUE));
  public static final ConfigKey<Integer> FETCH_SESSION_CACHE_SLOTS = ConfigKey.integer("kafka.fetch.session.cache.slots", 1000,
      "Incremental fetch sessions kept; the least recently used is evicted when full.").validate(ConfigKey.between(0, 1_000_000));
  public static final ConfigKey<Integer> FETCH_MAX_WAIT_MS = ConfigKey.integer("kafka.fetch.max.wait.ms", 30_000,
      "Upper bound on a fetch's MaxWaitMs (long-poll).").validate(ConfigKey.between(0, 600_000));
  public static final ConfigKey<Integer> MAX_DELAYED_FETCHES = ConfigKey.integer("kafka.max.delayed.fetches", 10_000,
      "Parked (long-polling) fetches across all connections; beyond it fetches are answered at once.").validate(ConfigKey.between(0, 1_000_000));
  public static final ConfigKey<Integer> OFFSETS_TOPIC_PARTITIONS = ConfigKey.integer("kafka.offsets.topic.partitions", 4,
      "Partitions of the internal __consumer_offsets topic (set once, at its creation).").validate(ConfigKey.between(1, 1000));
  public static final ConfigKey<Integer> TRANSACTION_STATE_LOG_PARTITIONS = ConfigKey.integer(
      "kafka.transaction.state.log.partitions", 4,
      "Partitions of the internal __transaction_state topic (set once, at its creation).").validate(ConfigKey.between(1, 1000));
  public static final ConfigKey<Integer> TRANSACTION_MAX_TIMEOUT_MS = ConfigKey.integer("kafka.transaction.max.timeout.ms", 900_000,
      "Largest transaction.timeout.ms a transactional producer may ask for (InitProducerId answers "
          + "INVALID_TRANSACTION_TIMEOUT beyond it).").validate(ConfigKey.between(1, Integer.MAX_VALUE));
  public static final ConfigKey<Integer> TRANSACTION_ABORT_CHECK_INTERVAL_MS = ConfigKey.integer(
      "kafka.transaction.abort.timed.out.transaction.cleanup.interval.ms", 10_000,
      "How often the transaction coordinator aborts transactions open longer than their timeout.")
      .validate(ConfigKey.between(1, 3_600_000));
  public static final ConfigKey<Integer> TRANSACTION_MAX_IDS = ConfigKey.integer("kafka.transaction.max.ids", 100_000,
      "Transactional ids one broker's transaction coordinator keeps; beyond it a new id's InitProducerId is refused "
          + "(COORDINATOR_NOT_AVAILABLE).").validate(ConfigKey.between(1, 10_000_000));
  public static final ConfigKey<Integer> GROUP_INITIAL_REBALANCE_DELAY_MS = ConfigKey.integer("kafka.group.initial.rebalance.delay.ms", 3000,
      "Wait for more members before completing the first rebalance of an empty group.").validate(ConfigKey.between(0, 300_000));
  public static final ConfigKey<Integer> GROUP_MIN_SESSION_TIMEOUT_MS = ConfigKey.integer("kafka.group.min.session.timeout.ms", 6000,
      "Smallest session.timeout.ms a classic group member may ask for.").validate(ConfigKey.between(1, 3_600_000));
  public static final ConfigKey<Integer> GROUP_MAX_SESSION_TIMEOUT_MS = ConfigKey.integer("kafka.group.max.session.timeout.ms", 1_800_000,
      "Largest session.timeout.ms a classic group member may ask for.").validate(ConfigKey.between(1, 3_600_000));
  public static final ConfigKey<Integer> GROUP_CONSUMER_SESSION_TIMEOUT_MS = ConfigKey.integer("kafka.group.consumer.session.timeout.ms",
      45_000, "Consumer protocol (KIP-848, group.protocol=consumer): a member that sends no heartbeat for this long is removed.")
      .validate(ConfigKey.between(1, 3_600_000));
  public static final ConfigKey<Integer> GROUP_CONSUMER_HEARTBEAT_INTERVAL_MS = ConfigKey.integer(
      "kafka.group.consumer.heartbeat.interval.ms", 5000,
      "Consumer protocol (KIP-848): how often members are told to heartbeat; assignment changes reach them at this pace.")
      .validate(ConfigKey.between(1, 3_600_000));
  public static final ConfigKey<Integer> GROUP_MAX_SIZE = ConfigKey.integer("kafka.group.max.size", 1000,
      "Members one group may have.").validate(ConfigKey.between(1, 1_000_000));
  public static final ConfigKey<Integer> MAX_GROUPS = ConfigKey.integer("kafka.max.groups", 100_000,
      "Groups the coordinator keeps (with members or committed offsets); beyond it new groups are refused.").validate(ConfigKey.between(1, 10_000_000));
  public static final ConfigKey<Integer> RETENTION_CHECK_INTERVAL_MS = ConfigKey.integer("kafka.retention.check.interval.ms", 300_000,
      "How often each partition's retention.ms and retention.bytes are enforced.").validate(ConfigKey.between(10, 86_400_000));
  public static final ConfigKey<String> STORAGE = ConfigKey.choice("kafka.storage", "memory",
      "Where partitions live when the broker creates its own stream store: 'memory' (lost on exit; tests and demos). "
          + "The server passes the real engine's StreamStore instead.", "memory");
  public static final ConfigKey<Long> MEMORY_STORAGE_MAX_BYTES = ConfigKey.longKey("kafka.memory.storage.max.bytes", 1L << 30,
      "With kafka.storage=memory: bytes all partitions may hold; appends beyond it fail with KAFKA_STORAGE_ERROR.")
      .validate(ConfigKey.between(1L << 20, Long.MAX_VALUE));
  public static final ConfigKey<String> DATA_DIR = ConfigKey.string("kafka.data.dir", "",
      "Directory for the broker's local metadata (topic registry file). Empty: topics are kept in memory only.");

  public static final ConfigKey<Integer> PRODUCE_OPENING_WAIT_MS = ConfigKey.integer("kafka.produce.opening.wait.ms", 500,
      "While a partition opens on this broker (a restart, a move or failover to it, a topic just created), Metadata already "
          + "names this broker as its leader, and a request for it (Produce, Fetch, ListOffsets, OffsetForLeaderEpoch, "
          + "DeleteRecords, DescribeProducers, WriteTxnMarkers) waits up to this long for the open instead of answering "
          + "NOT_LEADER_OR_FOLLOWER, so clients do not spend a retry backoff and a metadata refresh on it (transactional "
          + "produce batches do not wait). 0: the partition is announced once open and nothing waits.").validate(ConfigKey.between(0, 30_000));
  public static final ConfigKey<Integer> CONTROLLED_SHUTDOWN_TIMEOUT_MS = ConfigKey.integer(
      "kafka.controlled.shutdown.timeout.ms", 30_000,
      "In a cluster, a stopping broker (SIGTERM) first moves the partitions it leads to other live brokers and "
          + "waits up to this long for them to leave; what has not left by then closes here. 0 disables it.")
      .validate(ConfigKey.between(0, 3_600_000));
  public static final ConfigKey<Boolean> SHARE_ENABLE = ConfigKey.bool("kafka.share.enable", true,
      "Serve share groups (KIP-932) and advertise their APIs, the share-state APIs brokers send each other included "
          + "(docs/share-groups.md). All brokers of a cluster should have the same value.");
  public static final ConfigKey<Integer> LOG_CLEANER_INTERVAL_MS = ConfigKey.integer("kafka.log.cleaner.interval.ms", 30_000,
      "How often the log cleaner looks for compacted partitions (cleanup.policy=compact) that are due; 0 disables it.")
      .validate(ConfigKey.between(0, 86_400_000));
  public static final ConfigKey<Integer> LOG_CLEANER_THREADS = ConfigKey.integer("kafka.log.cleaner.threads", 1,
      "Partitions the log cleaner cleans at once, each on its own thread with an equal share of the dedupe buffer; "
          + "Kafka's log.cleaner.threads, which changes it at run time (docs/operations.md, \"Dynamic broker configs\").")
      .validate(ConfigKey.between(1, 64));
  public static final ConfigKey<Integer> NETWORK_THREADS = ConfigKey.integer("kafka.network.threads", 0,
      "Event loop threads serving Kafka connections (reading, decoding and dispatching requests, writing responses); "
          + "0 means twice the available processors. Kafka's num.network.threads, which changes it at run time up to twice "
          + "this count (docs/operations.md, \"Dynamic broker configs\").").validate(ConfigKey.between(0, 1024));
  public static final ConfigKey<Long> LOG_CLEANER_DEDUPE_BUFFER_BYTES = ConfigKey.longKey(
      "kafka.log.cleaner.dedupe.buffer.bytes", 32L * 1024 * 1024,
      "Memory of the log cleaner's key map (24 bytes per key, filled to 90%), as Kafka's log.cleaner.dedupe.buffer.size: "
          + "a pass cleans as many keys as fit.").validate(ConfigKey.between(1024L, 1L << 34));
  public static final ConfigKey<Long> LOG_CLEANER_MAX_REWRITE_BYTES = ConfigKey.longKey(
      "kafka.log.cleaner.max.rewrite.bytes", 64L * 1024 * 1024,
      "Object bytes the log cleaner reads and rewrites as one object at a time (the memory it holds besides its key map).")
      .validate(ConfigKey.between(1L << 20, 1L << 34));
  public static final ConfigKey<Long> LOG_CLEANER_MAX_BYTES_PER_RUN = ConfigKey.longKey(
      "kafka.log.cleaner.max.bytes.per.run", 1L << 30,
      "After a run of the log cleaner has read this many object bytes it starts no further partition; the next run goes on.")
      .validate(ConfigKey.between(1L << 20, Long.MAX_VALUE));
  public static final ConfigKey<Integer> SHARE_RECORD_LOCK_DURATION_MS = ConfigKey.integer("kafka.group.share.record.lock.duration.ms",
      30_000, "Share groups: how long a delivered record stays locked to its consumer (group.share.record.lock.duration.ms); "
          + "a group may set share.record.lock.duration.ms within the min/max below.").validate(ConfigKey.between(1000, 3_600_000));
  public static final ConfigKey<Integer> SHARE_MIN_RECORD_LOCK_DURATION_MS = ConfigKey.integer(
      "kafka.group.share.min.record.lock.duration.ms", 15_000, "Share groups: smallest share.record.lock.duration.ms a group may set.")
      .validate(ConfigKey.between(1000, 3_600_000));
  public static final ConfigKey<Integer> SHARE_MAX_RECORD_LOCK_DURATION_MS = ConfigKey.integer(
      "kafka.group.share.max.record.lock.duration.ms", 60_000, "Share groups: largest share.record.lock.duration.ms a group may set.")
      .validate(ConfigKey.between(1000, 3_600_000));
  public static final ConfigKey<Integer> SHARE_DELIVERY_COUNT_LIMIT = ConfigKey.integer("kafka.group.share.delivery.count.limit", 5,
      "Share groups: deliveries of a record after which it is archived instead of delivered again (a poison record stops there).")
      .validate(ConfigKey.between(2, 10));
  public static final ConfigKey<Integer> SHARE_PARTITION_MAX_RECORD_LOCKS = ConfigKey.integer(
      "kafka.group.share.partition.max.record.locks", 2000, "Share groups: records of one share partition in flight (delivered, "
          + "not yet acknowledged) at once.").validate(ConfigKey.between(100, 10_000));
  public static final ConfigKey<Integer> SHARE_SESSION_TIMEOUT_MS = ConfigKey.integer("kafka.group.share.session.timeout.ms", 45_000,
      "Share groups: a member that sends no heartbeat for this long is removed and its records released.")
      .validate(ConfigKey.between(1000, 3_600_000));
  public static final ConfigKey<Integer> SHARE_HEARTBEAT_INTERVAL_MS = ConfigKey.integer("kafka.group.share.heartbeat.interval.ms", 5000,
      "Share groups: how often members are told to heartbeat.").validate(ConfigKey.between(100, 3_600_000));
  public static final ConfigKey<Integer> SHARE_MAX_SIZE = ConfigKey.integer("kafka.group.share.max.size", 200,
      "Share groups: members of one share group.").validate(ConfigKey.between(1, 1000));
  public static final ConfigKey<Integer> SHARE_MAX_SESSIONS = ConfigKey.integer("kafka.group.share.max.share.sessions", 2000,
      "Share groups: share sessions (one per member and broker) this broker holds.").validate(ConfigKey.between(1, 1_000_000));
  public static final ConfigKey<Integer> SHARE_STATE_TOPIC_PARTITIONS = ConfigKey.integer("kafka.share.state.topic.partitions", 4,
      "Partitions of the internal __share_group_state topic (set once, at its creation).").validate(ConfigKey.between(1, 1000));
  public static final ConfigKey<Integer> METRICS_TOPICS_MAX = ConfigKey.integer("kafka.metrics.topics.max", 2000,
      "Topics that get their own produced/fetched meters (label topic); the bytes and records of further topics are "
      + "counted under topic=\"_other\", so a broker with many topics keeps a bounded number of series.")
      .validate(ConfigKey.between(0, 1_000_000));
  public static final ConfigKey<Integer> METRICS_LAG_INTERVAL_MS = ConfigKey.integer("kafka.metrics.consumer.lag.interval.ms",
      10_000, "How often the consumer-group lag meters are recomputed from the committed offsets of the groups "
      + "coordinated here and the log end offsets of their partitions; 0 turns the lag meters off.")
      .validate(ConfigKey.between(0, 3_600_000));
  public static final ConfigKey<Integer> METRICS_LAG_MAX_GROUPS = ConfigKey.integer("kafka.metrics.consumer.lag.max.groups",
      500, "Consumer groups whose lag is exported (those with the largest total lag first); the count left out is "
      + "tidemark_kafka_consumer_groups_unexported.").validate(ConfigKey.between(0, 1_000_000));
  public static final ConfigKey<Integer> METRICS_LAG_MAX_PARTITIONS = ConfigKey.integer(
      "kafka.metrics.consumer.lag.max.partitions", 10_000, "Series of the per-partition lag meter "
      + "(tidemark_kafka_consumer_group_lag{group,topic,partition}) across all groups; a group's partitions beyond it "
      + "still count in its total lag.").validate(ConfigKey.between(0, 1_000_000));
  public static final List<ConfigKey<?>> KEYS = List.of(NODE_ID, CLUSTER_ID, LISTENER_HOST, LISTENER_PORT, ADVERTISED_HOST,
      ADVERTISED_PORT, MAX_REQUEST_BYTES, MAX_INFLIGHT_REQUESTS, AUTO_CREATE_TOPICS, DEFAULT_PARTITIONS,
      MAX_PARTITIONS_PER_TOPIC, MAX_MESSAGE_BYTES, FETCH_SESSION_CACHE_SLOTS, FETCH_MAX_WAIT_MS, MAX_DELAYED_FETCHES,
      OFFSETS_TOPIC_PARTITIONS, GROUP_INITIAL_REBALANCE_DELAY_MS, GROUP_MIN_SESSION_TIMEOUT_MS, GROUP_MAX_SESSION_TIMEOUT_MS,
      GROUP_CONSUMER_SESSION_TIMEOUT_MS, GROUP_CONSUMER_HEARTBEAT_INTERVAL_MS, GROUP_MAX_SIZE, MAX_GROUPS, RETENTION_CHECK_INTERVAL_MS, STORAGE, MEMORY_STORAGE_MAX_BYTES, DATA_DIR,
      CONTROLLED_SHUTDOWN_TIMEOUT_MS, PRODUCE_OPENING_WAIT_MS, LOG_CLEANER_INTERVAL_MS, LOG_CLEANER_THREADS, NETWORK_THREADS, LOG_CLEANER_DEDUPE_BUFFER_BYTES, LOG_CLEANER_MAX_REWRITE_BYTES,
      LOG_CLEANER_MAX_BYTES_PER_RUN, SHARE_ENABLE, SHARE_RECORD_LOCK_DURATION_MS, SHARE_MIN_RECORD_LOCK_DURATION_MS, SHARE_MAX_RECORD_LOCK_DURATION_MS,
      SHARE_DELIVERY_COUNT_LIMIT, SHARE_PARTITION_MAX_RECORD_LOCKS, SHARE_SESSION_TIMEOUT_MS, SHARE_HEARTBEAT_INTERVAL_MS, SHARE_MAX_SIZE,
      SHARE_MAX_SESSIONS, SHARE_STATE_TOPIC_PARTITIONS, TRANSACTION_STATE_LOG_PARTITIONS,
      TRANSACTION_MAX_TIMEOUT_MS, TRANSACTION_ABORT_CHECK_INTERVAL_MS, TRANSACTION_MAX_IDS,
      METRICS_TOPICS_MAX, METRICS_LAG_INTERVAL_MS, METRICS_LAG_MAX_GROUPS, METRICS_LAG_MAX_PARTITIONS);

  public final int nodeId;
  public final String clusterId;
  public final String listenerHost;
  public final int listenerPort;
  public final String advertisedHost;
  public final int advertisedPort;
  public final int maxRequestBytes;
  public final int maxInflightRequests;
  public final boolean autoCreateTopics;
  public final int defaultPartitions;
  public final int maxPartitionsPerTopic;
  public final int maxMessageBytes;
  public final int fetchSessionCacheSlots;
  public final int fetchMaxWaitMs;
  public final int maxDelayedFetches;
  public final int metricsTopicsMax;
  public final int metricsLagIntervalMs;
  public final int metricsLagMaxGroups;
  public final int metricsLagMaxPartitions;
  public final int offsetsTopicPartitions;
  public final int transactionStateLogPartitions;
  public final int transactionMaxTimeoutMs;
  public final int transactionAbortCheckIntervalMs;
  public final int transactionMaxIds;
  public final int groupInitialRebalanceDelayMs;
  public final int groupMinSessionTimeoutMs;
  public final int groupMaxSessionTimeoutMs;
  public final int groupConsumerSessionTimeoutMs;
  public final int groupConsumerHeartbeatIntervalMs;
  public final int groupMaxSize;
  public final int maxGroups;
  public final String dataDir;
  public final int retentionCheckIntervalMs;
  public final int controlledShutdownTimeoutMs;
  public final int produceOpeningWaitMs;
  public final long memoryStorageMaxBytes;
  public final boolean shareEnable;
  public final int logCleanerIntervalMs;
  public final long logCleanerDedupeBufferBytes;
  public final int logCleanerThreads;
  /** Network event loop threads at start (the configured count, or twice the processors). */
  public final int networkThreads;
  public final long logCleanerMaxRewriteBytes;
  public final long logCleanerMaxBytesPerRun;
  public final int shareRecordLockDurationMs;
  public final int shareMinRecordLockDurationMs;
  public final int shareMaxRecordLockDurationMs;
  public final int shareDeliveryCountLimit;
  public final int sharePartitionMaxRecordLocks;
  public final int shareSessionTimeoutMs;
  public final int shareHeartbeatIntervalMs;
  public final int shareMaxSize;
  public final int shareMaxSessions;
  public final int shareStateTopicPartitions;
  /** Listeners, TLS and SASL ({@link io.tidemark.broker.security.SecurityConfig}, declared in its own section). */
  public final io.tidemark.broker.security.SecurityConfig security;
  /** Authorization settings (declared in {@link io.tidemark.broker.acl.AuthorizerConfig#KEYS}). */
  public final io.tidemark.broker.acl.AuthorizerConfig authorization;
  /** Client quota settings (declared in {@link io.tidemark.broker.quota.QuotaConfig#KEYS}). */
  public final io.tidemark.broker.quota.QuotaConfig quotas;
  /** Every declared key with its effective value as text (secrets masked), for DescribeConfigs. */
  public final java.util.Map<String, String> effectiveValues;
  /** The declared keys the settings name explicitly (the rest are at their defaults). */
  public final java.util.Set<String> explicitKeys;

  public BrokerConfig(Settings s) {
    nodeId = s.get(NODE_ID);
    clusterId = s.get(CLUSTER_ID);
    listenerHost = s.get(LISTENER_HOST);
    listenerPort = s.get(LISTENER_PORT);
    advertisedHost = advertisedHost(s);
    advertisedPort = s.get(ADVERTISED_PORT);
    maxRequestBytes = s.get(MAX_REQUEST_BYTES);
    maxInflightRequests = s.get(MAX_INFLIGHT_REQUESTS);
    autoCreateTopics = s.get(AUTO_CREATE_TOPICS);
    defaultPartitions = s.get(DEFAULT_PARTITIONS);
    maxPartitionsPerTopic = s.get(MAX_PARTITIONS_PER_TOPIC);
    maxMessageBytes = s.get(MAX_MESSAGE_BYTES);
    fetchSessionCacheSlots = s.get(FETCH_SESSION_CACHE_SLOTS);
    fetchMaxWaitMs = s.get(FETCH_MAX_WAIT_MS);
    maxDelayedFetches = s.get(MAX_DELAYED_FETCHES);
    metricsTopicsMax = s.get(METRICS_TOPICS_MAX);
    metricsLagIntervalMs = s.get(METRICS_LAG_INTERVAL_MS);
    metricsLagMaxGroups = s.get(METRICS_LAG_MAX_GROUPS);
    metricsLagMaxPartitions = s.get(METRICS_LAG_MAX_PARTITIONS);
    offsetsTopicPartitions = s.get(OFFSETS_TOPIC_PARTITIONS);
    transactionStateLogPartitions = s.get(TRANSACTION_STATE_LOG_PARTITIONS);
    transactionMaxTimeoutMs = s.get(TRANSACTION_MAX_TIMEOUT_MS);
    transactionAbortCheckIntervalMs = s.get(TRANSACTION_ABORT_CHECK_INTERVAL_MS);
    transactionMaxIds = s.get(TRANSACTION_MAX_IDS);
    groupInitialRebalanceDelayMs = s.get(GROUP_INITIAL_REBALANCE_DELAY_MS);
    groupMinSessionTimeoutMs = s.get(GROUP_MIN_SESSION_TIMEOUT_MS);
    groupMaxSessionTimeoutMs = s.get(GROUP_MAX_SESSION_TIMEOUT_MS);
    groupConsumerSessionTimeoutMs = s.get(GROUP_CONSUMER_SESSION_TIMEOUT_MS);
    groupConsumerHeartbeatIntervalMs = s.get(GROUP_CONSUMER_HEARTBEAT_INTERVAL_MS);
    groupMaxSize = s.get(GROUP_MAX_SIZE);
    maxGroups = s.get(MAX_GROUPS);
    dataDir = s.get(DATA_DIR);
    retentionCheckIntervalMs = s.get(RETENTION_CHECK_INTERVAL_MS);
    controlledShutdownTimeoutMs = s.get(CONTROLLED_SHUTDOWN_TIMEOUT_MS);
    produceOpeningWaitMs = s.get(PRODUCE_OPENING_WAIT_MS);
    memoryStorageMaxBytes = s.get(MEMORY_STORAGE_MAX_BYTES);
    shareEnable = s.get(SHARE_ENABLE);
    logCleanerIntervalMs = s.get(LOG_CLEANER_INTERVAL_MS);
    logCleanerDedupeBufferBytes = s.get(LOG_CLEANER_DEDUPE_BUFFER_BYTES);
    logCleanerThreads = s.get(LOG_CLEANER_THREADS);
    networkThreads = s.get(NETWORK_THREADS) == 0 ? 2 * Runtime.getRuntime().availableProcessors() : s.get(NETWORK_THREADS);
    logCleanerMaxRewriteBytes = s.get(LOG_CLEANER_MAX_REWRITE_BYTES);
    logCleanerMaxBytesPerRun = s.get(LOG_CLEANER_MAX_BYTES_PER_RUN);
    shareRecordLockDurationMs = s.get(SHARE_RECORD_LOCK_DURATION_MS);
    shareMinRecordLockDurationMs = s.get(SHARE_MIN_RECORD_LOCK_DURATION_MS);
    shareMaxRecordLockDurationMs = s.get(SHARE_MAX_RECORD_LOCK_DURATION_MS);
    shareDeliveryCountLimit = s.get(SHARE_DELIVERY_COUNT_LIMIT);
    sharePartitionMaxRecordLocks = s.get(SHARE_PARTITION_MAX_RECORD_LOCKS);
    shareSessionTimeoutMs = s.get(SHARE_SESSION_TIMEOUT_MS);
    shareHeartbeatIntervalMs = s.get(SHARE_HEARTBEAT_INTERVAL_MS);
    shareMaxSize = s.get(SHARE_MAX_SIZE);
    shareMaxSessions = s.get(SHARE_MAX_SESSIONS);
    shareStateTopicPartitions = s.get(SHARE_STATE_TOPIC_PARTITIONS);
    if (shareMinRecordLockDurationMs > shareRecordLockDurationMs || shareRecordLockDurationMs > shareMaxRecordLockDurationMs) {
      throw new io.tidemark.stream.config.ConfigException(SHARE_RECORD_LOCK_DURATION_MS.name(), "(" + shareRecordLockDurationMs + ") must lie within "
          + SHARE_MIN_RECORD_LOCK_DURATION_MS.name() + " (" + shareMinRecordLockDurationMs + ") and "
          + SHARE_MAX_RECORD_LOCK_DURATION_MS.name() + " (" + shareMaxRecordLockDurationMs + ")");
    }
    s.get(STORAGE);
    security = new io.tidemark.broker.security.SecurityConfig(s, listenerHost, listenerPort, advertisedHost, advertisedPort);
    authorization = new io.tidemark.broker.acl.AuthorizerConfig(s);
    quotas = new io.tidemark.broker.quota.QuotaConfig(s);
    java.util.Map<String, String> values = new java.util.TreeMap<>();
    java.util.Set<String> explicit = new java.util.TreeSet<>();
    for (ConfigKey<?> key : KEYS) {
      values.put(key.name(), key.secret() ? "[hidden]" : String.valueOf(s.get(key)));
      if (s.contains(key)) {
        explicit.add(key.name());
      }
    }
    values.put(ADVERTISED_HOST.name(), advertisedHost);
    effectiveValues = java.util.Collections.unmodifiableMap(values);
    explicitKeys = java.util.Collections.unmodifiableSet(explicit);
  }

  /**
   * The host advertised to clients: {@code kafka.advertised.host}, or the listener's address when it
   * names one, or (wildcard listener) the machine's canonical host name, which is what Kafka
   * advertises for a listener without a host; {@code localhost} only when the machine cannot name
   * itself.
   */
  public static String advertisedHost(Settings s) {
    String configured = s.get(ADVERTISED_HOST).trim();
    if (!configured.isEmpty()) {
      return configured;
    }
    String listener = s.get(LISTENER_HOST).trim();
    if (!listener.isEmpty() && !listener.equals("0.0.0.0") && !listener.equals("::") && !listener.equals("[::]")) {
      return listener;
    }
    try {
      return java.net.InetAddress.getLocalHost().getCanonicalHostName();
    } catch (java.net.UnknownHostException e) {
      return "localhost";
    }
  }

  public static BrokerConfig defaults() {
    return new BrokerConfig(Settings.empty());
  }
}
